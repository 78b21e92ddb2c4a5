// How a procedure's writes reach their repo: the record sink of the mode
// (the index itself in local mode; the writer's PDS session in pds mode)
// and the faults of a write's placement reads (none). The API asks the
// context's WriteServices; serve installs PlainWrites, or behind
// BULLETED_FAULT_INJECTION=1 the fault-injecting decorator of faults.hpp.
#pragma once

#include <memory>

#include "appview/signin/pds_sessions.hpp"
#include "appview/write/placement.hpp"
#include "appview/write/writer.hpp"
#include "ordering/tid.hpp"
#include "schema/error.hpp"
#include "schema/store.hpp"

namespace bulleted::appview {

struct AppServices;

class WriteServices {
 public:
  virtual ~WriteServices() = default;
  // The sink of a write: through `session` in pds mode (the writer's own),
  // else to the index.
  virtual Result<std::unique_ptr<RecordSink>> sink(schema::Store& store, PdsSession* session) = 0;
  // The faults of this request's placement reads; null: none.
  virtual PlacementFaults* placement() { return nullptr; }
};

class PlainWrites final : public WriteServices {
 public:
  PlainWrites(ordering::TidClock& clock, const AppServices& services)
      : clock_(clock), services_(services) {}
  Result<std::unique_ptr<RecordSink>> sink(schema::Store& store, PdsSession* session) override;

 private:
  ordering::TidClock& clock_;
  const AppServices& services_;
};

}  // namespace bulleted::appview
