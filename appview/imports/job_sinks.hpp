// The sink an import job writes through: the index itself in local mode,
// the PDS session that started the job in pds mode. The server's import
// runner asks for one per job run.
#pragma once

#include <memory>

#include "appview/imports/import_jobs.hpp"
#include "appview/write/pds_sink.hpp"

namespace bulleted::appview {

// `pds` is null in local mode. kAuthRequired when the job's session has
// ended (the job then fails: sign in and import again).
Result<std::unique_ptr<JobSink>> job_sink_for(schema::Store& store, const schema::ImportJobRow& job,
                                              PdsServices* pds, ordering::TidClock& clock);

}  // namespace bulleted::appview
