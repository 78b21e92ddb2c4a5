#include "appview/imports/job_sinks.hpp"

namespace bulleted::appview {
namespace {

struct LocalJobSink final : JobSink {
  explicit LocalJobSink(ordering::TidClock& clock) : local(clock) {}
  RecordSink& sink() override { return local; }
  LocalSink local;
};

struct PdsJobSink final : JobSink {
  PdsJobSink(PdsServices& pds, PdsSession s)
      : session(std::move(s)), pds_sink(pds.sessions, session, pds.heads, pds.written) {}
  RecordSink& sink() override { return pds_sink; }
  PdsSession session;
  PdsSink pds_sink;
};

}  // namespace

Result<std::unique_ptr<JobSink>> job_sink_for(schema::Store& store, const schema::ImportJobRow& job,
                                              PdsServices* pds, ordering::TidClock& clock) {
  if (pds == nullptr) return std::make_unique<LocalJobSink>(clock);
  if (!job.session) return fail(ErrorCode::kAuthRequired, "the job names no session");
  auto session = pds->sessions.find_by_digest(store, *job.session);
  if (!session) {
    return fail(ErrorCode::kAuthRequired,
                "the session that started the import has ended; sign in and import again");
  }
  return std::make_unique<PdsJobSink>(*pds, std::move(*session));
}

}  // namespace bulleted::appview
