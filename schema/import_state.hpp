// The states of an import job, and the only moves between them. The job's
// state is stored with its progress (import_jobs.state); the moves are made
// by appview/imports (plan_import, run_import_batch, step_import, the
// runner), and allowed_transition() is what they are held to.
//
//   kRunning  batches of the plan are being written. A restart resumes
//             here, from the stored progress.
//   kWaiting  paused until resume_at: the host's rate limit (429 or an
//             exhausted window) or a failure worth retrying (upstream down,
//             database busy). Never an end.
//   kDone     every row of the plan is written. Terminal; the plan is
//             dropped in the transaction that says so.
//   kFailed   an error no retry can mend (an unreadable plan, a refusal of
//             the records, no way to write), or abandoned by an operator.
//             Nothing runs it again by itself; errors says why. Its plan
//             is kept so that an operator who mended the cause can resume
//             it, until they abandon it (`import --abandon`: the plan is
//             dropped, and resuming is no longer possible).
//
//   (planned)  -> kRunning   plan_import(): the plan and the job stored at once
//   kRunning   -> kRunning   run_import_batch(): a batch committed
//   kRunning   -> kDone      run_import_batch(): no row left
//   kRunning   -> kWaiting   run_import_batch(): rate limited, or a retryable failure;
//                            step_import(): the batch could not run
//   kRunning   -> kFailed    run_import_batch(): any other error;
//                            the runner: no sink can write the job
//   kWaiting   -> kRunning   step_import(): resume_at has passed
//   kWaiting   -> kFailed    the runner: no sink can write the job;
//                            abandon_import(): an operator gives it up
//   kRunning   -> kFailed    abandon_import(): an operator gives it up
//   kFailed    -> kRunning   resume_failed_import(): an operator resumes it
//                            (`import --resume`), its plan still kept
#pragma once

#include <optional>
#include <string_view>

namespace bulleted::schema {

enum class ImportState { kRunning, kWaiting, kDone, kFailed };

// "running", "waiting", "done", "failed": the stored and served names.
std::string_view to_string(ImportState state);
std::optional<ImportState> parse_import_state(std::string_view name);
// The moves listed above.
bool allowed_transition(ImportState from, ImportState to);
inline bool is_terminal(ImportState state) {
  return state == ImportState::kDone || state == ImportState::kFailed;
}

}  // namespace bulleted::schema
