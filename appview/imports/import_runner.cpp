// The import runner: one thread that runs the jobs due, a batch at a time,
// resuming unfinished ones after a restart (import_jobs.hpp).
#include <spdlog/spdlog.h>

#include "appview/imports/import_jobs.hpp"
#include "schema/datetime.hpp"

namespace bulleted::appview {

ImportRunner::ImportRunner(std::string db_path, int busy_timeout_ms, JobSinkFactory factory)
    : db_path_(std::move(db_path)),
      busy_timeout_ms_(busy_timeout_ms),
      factory_(std::move(factory)) {}

ImportRunner::~ImportRunner() { stop(); }

void ImportRunner::start() {
  thread_ = std::thread([this] { run(); });
}

void ImportRunner::wake() {
  std::lock_guard lock(mutex_);
  woken_ = true;
  wake_.notify_all();
}

void ImportRunner::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    wake_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

std::int64_t ImportRunner::rate(const std::string& job_id) const {
  std::lock_guard lock(mutex_);
  auto it = stats_.find(job_id);
  if (it == stats_.end() || !it->second.active) return 0;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - it->second.since).count();
  if (seconds < 0.001) return 0;
  return static_cast<std::int64_t>(static_cast<double>(it->second.done - it->second.done_since) /
                                   seconds);
}

void ImportRunner::run() {
  auto opened =
      schema::Store::open(db_path_, {.busy_timeout_ms = busy_timeout_ms_, .on_commit = on_commit_});
  if (!opened) {
    spdlog::error("imports: cannot open the database: {}", opened.error().message);
    return;
  }
  schema::Store& store = **opened;
  std::map<std::string, std::unique_ptr<JobSink>> sinks;  // per job, for its current run
  while (true) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      woken_ = false;
    }
    auto jobs = store.import_jobs().unfinished();
    std::optional<schema::ImportJobRow> next;
    auto earliest = std::chrono::system_clock::now() + std::chrono::seconds(5);
    if (jobs) {
      const auto now = std::chrono::system_clock::now();
      for (auto& job : *jobs) {
        const auto resume = resume_time(job);
        if (job.state == schema::ImportState::kWaiting && resume && *resume > now) {
          earliest = std::min(earliest, *resume);
          continue;
        }
        // Another process runs it (the `import` command): looked at again
        // once its lease runs out.
        const std::chrono::system_clock::time_point lease{
            std::chrono::milliseconds(job.lease_until_ms)};
        if (job.runner && *job.runner != name_ && lease > now) {
          earliest = std::min(earliest, lease);
          continue;
        }
        next = std::move(job);
        break;
      }
    } else {
      spdlog::warn("imports: cannot read the jobs: {}", jobs.error().message);
    }
    if (!next) {
      sinks.clear();
      std::unique_lock lock(mutex_);
      for (auto& [id, stats] : stats_) stats.active = false;
      wake_.wait_until(
          lock, std::chrono::steady_clock::now() + (earliest - std::chrono::system_clock::now()),
          [this] { return stopping_ || woken_; });
      continue;
    }
    const std::string id = next->id;
    // Taken first, so that no other process writes the same batch.
    if (auto claimed = claim_job(store, id, name_); !claimed || !*claimed) {
      if (!claimed) spdlog::warn("import {}: cannot claim it: {}", id, claimed.error().message);
      sinks.erase(id);
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_ || woken_; });
      continue;
    }
    bool first_of_run = false;
    if (!sinks.contains(id)) {
      auto sink = factory_(store, *next);
      if (!sink) {
        spdlog::error("import {}: cannot run: {}", id, sink.error().message);
        (void)move_job(store, *next, schema::ImportState::kFailed, std::nullopt,
                       append_error(next->errors_json, sink.error().message));
        continue;
      }
      sinks[id] = std::move(*sink);
      first_of_run = true;
    }
    {
      std::lock_guard lock(mutex_);
      auto& stats = stats_[id];
      if (!stats.active || first_of_run || next->state == schema::ImportState::kWaiting) {
        stats = {std::chrono::steady_clock::now(), next->done, next->done, true};
      }
    }
    auto outcome = step_import(store, sinks[id]->sink(), *next, first_of_run, false, locks_);
    if (!outcome) {
      spdlog::error("import {}: {}", id, outcome.error().message);
      sinks.erase(id);
      continue;
    }
    {
      std::lock_guard lock(mutex_);
      auto& stats = stats_[id];
      nodes_written_ += outcome->done - stats.done;
      stats.done = outcome->done;
      stats.active = outcome->state == schema::ImportState::kRunning;
    }
    if (outcome->state != schema::ImportState::kRunning) sinks.erase(id);
  }
}

}  // namespace bulleted::appview
