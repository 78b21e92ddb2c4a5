// Imports as resumable jobs.
//
// plan_import() stores the whole plan before anything is written: record
// keys minted up front, order keys from n_between for each sibling group, the
// new root node ("Imported from WorkFlowy — <date>") placed last under the
// chosen parent (or at the top level) under that group's lock, parents before
// children. run_import_batch() then writes the next rows of the plan through a
// RecordSink (at most 200 per commit) and records the progress in the same
// index transaction, so a crash or restart resumes where it stopped, with no
// duplicate and no missing node. A PDS's 429 puts the job in `waiting` until
// its Retry-After; it never fails the job.
//
// ImportRunner runs unfinished jobs on a thread of its own, resuming them
// after a restart.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "appview/outline/outline.hpp"
#include "appview/write/placement.hpp"
#include "appview/write/writer.hpp"
#include "ordering/tid.hpp"
#include "schema/store.hpp"

namespace bulleted::appview {

inline constexpr std::int64_t kImportBatch = 200;

struct ImportPlanRequest {
  std::string did;
  std::optional<std::string> parent_rkey;
  outline::Format format = outline::Format::kOpml;
  std::optional<std::string> session;  // digest of the PDS session (pds mode)
  std::string source_name = "WorkFlowy";
  // The runner that takes the job at once (the `import` command, which runs
  // it itself); none: whichever runner claims it first.
  std::optional<std::string> runner;
};

// This process's name as an import job's runner ("<what> <pid> <random>").
std::string runner_name(std::string_view what);
// Claims `job` for `runner` now (ImportJobTable::claim).
Result<bool> claim_job(schema::Store& store, const std::string& job, const std::string& runner);

Result<schema::ImportJobRow> plan_import(schema::Store& store, GroupLocks& locks,
                                         ordering::TidClock& clock,
                                         const ImportPlanRequest& request,
                                         const outline::Outline& outline);

// Writes the next batch of a running job (re-read from the store) and
// returns the job as it is afterwards: running (more to do), waiting
// (resume_at set), done or failed (schema/import_state.hpp lists the moves).
// `first_of_run`: check whether the repo already holds the batch. When the
// repo changed meanwhile (kRepoChanged: its commit is not the index's), the
// repo is refreshed and the batch committed again with the same record
// keys, its root (when in it) placed again last in its group, under the
// group's lock when `locks` is given.
Result<schema::ImportJobRow> run_import_batch(schema::Store& store, RecordSink& sink,
                                              const std::string& job_id, bool first_of_run,
                                              GroupLocks* locks = nullptr);

// One step of a job, the only way the server's runner and `import --resume`
// advance one: a waiting job whose resume_at has passed (or any waiting job,
// with `resume_now`) runs again; a running job writes its next batch; a
// batch that cannot run puts the job back to waiting for 30 s, its error
// listed. A terminal job, or a waiting one whose time has not come, is
// returned as it is.
Result<schema::ImportJobRow> step_import(schema::Store& store, RecordSink& sink,
                                         schema::ImportJobRow job, bool first_of_run,
                                         bool resume_now, GroupLocks* locks = nullptr);

// A job's errors (JSON) with `message` appended, the oldest dropped past
// the newest 20; and when a waiting job is due again (nullopt: now).
std::string append_error(const std::string& errors_json, const std::string& message);
std::optional<std::chrono::system_clock::time_point> resume_time(const schema::ImportJobRow& job);

// Moves a job to `to` with its resume time and errors, when the move is one
// of schema/import_state.hpp's (else kInternal, and nothing changes).
Result<void> move_job(schema::Store& store, schema::ImportJobRow& job, schema::ImportState to,
                      const std::optional<std::string>& resume_at, const std::string& errors_json);

// An operator gives a job up: a running or waiting one fails ("abandoned"),
// and the plan of a failed one is dropped (it can no longer be resumed). A
// done job has nothing left to drop. The job as it is now.
Result<schema::ImportJobRow> abandon_import(schema::Store& store, const std::string& job_id);
// An operator resumes a failed job whose plan is still kept: it runs again
// from its progress. kInvalidRequest when its plan was dropped.
Result<schema::ImportJobRow> resume_failed_import(schema::Store& store, const std::string& job_id);

// The sink a job writes through (with whatever it needs to live).
struct JobSink {
  virtual ~JobSink() = default;
  virtual RecordSink& sink() = 0;
};
using JobSinkFactory =
    std::function<Result<std::unique_ptr<JobSink>>(schema::Store&, const schema::ImportJobRow&)>;

class ImportRunner {
 public:
  ImportRunner(std::string db_path, int busy_timeout_ms, JobSinkFactory factory);
  ~ImportRunner();
  ImportRunner(const ImportRunner&) = delete;
  ImportRunner& operator=(const ImportRunner&) = delete;

  // The API's group locks, for placing a job's root again (set before start()).
  void use_locks(GroupLocks* locks) { locks_ = locks; }
  // Told of each commit the jobs make (change streams; set before start()).
  void on_commit(std::function<void(const schema::CommitNotice&)> listener) {
    on_commit_ = std::move(listener);
  }
  void start();
  void wake();
  // Finishes the batch in progress, then stops.
  void stop();
  // Nodes written per second by the current run of a job (0 when idle).
  std::int64_t rate(const std::string& job_id) const;
  // Every job's done count this process wrote (for /metrics).
  std::int64_t nodes_written() const { return nodes_written_; }

 private:
  void run();

  std::string db_path_;
  std::string name_ = runner_name("server");  // as the jobs' runner
  GroupLocks* locks_ = nullptr;
  std::function<void(const schema::CommitNotice&)> on_commit_;
  int busy_timeout_ms_;
  JobSinkFactory factory_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool woken_ = false;
  struct RunStats {
    std::chrono::steady_clock::time_point since;
    std::int64_t done_since = 0;
    std::int64_t done = 0;
    bool active = false;
  };
  std::map<std::string, RunStats> stats_;
  std::atomic<std::int64_t> nodes_written_{0};
};

}  // namespace bulleted::appview
