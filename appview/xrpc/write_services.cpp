#include "appview/xrpc/write_services.hpp"

#include "appview/xrpc/api.hpp"

namespace bulleted::appview {

Result<std::unique_ptr<RecordSink>> PlainWrites::sink(schema::Store&, PdsSession* session) {
  if (session == nullptr) return std::make_unique<LocalSink>(clock_);
  if (services_.pds == nullptr) return fail(ErrorCode::kInternal, "a PDS session without pds mode");
  // Before the writer waits on a group's lock, which a write waiting on
  // the PDS may hold.
  if (auto r = hold_pds_place(session->did); !r) return std::unexpected(r.error());
  PdsServices& pds = *services_.pds;
  return std::make_unique<PdsSink>(pds.sessions, *session, pds.heads, pds.written);
}

}  // namespace bulleted::appview
