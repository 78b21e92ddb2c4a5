// Background WAL checkpoints for one database file. Connections watched by a
// Checkpointer stop checkpointing at their own commits (SQLite's automatic
// checkpoint copies the WAL into the file on the committing thread, which
// is the ingest or request thread); a commit that leaves kWalPages or more in
// the WAL wakes the checkpointer's thread instead, which runs a PASSIVE
// checkpoint on its own connection: it never blocks readers or writers, and
// the WAL is reused from its start by a writer that begins once a checkpoint
// has caught up. While readers keep the WAL from being reused it only grows:
// a checkpoint is then asked for once every kWalPages new pages, not at every
// commit (each run syncs the WAL and the file, so one a commit was a storm of
// syncs that stalled the writers' own commits). Under a steady stream of
// writes no checkpoint catches up before the next write begins, so a WAL of
// kRestartPages or more that a run copied whole is started over by a RESTART
// checkpoint (see restart()).
#pragma once

#include <sqlite3.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace bulleted::schema {

// What a Checkpointer did so far (see its accessors).
struct CheckpointCounts {
  std::uint64_t runs = 0;
  std::uint64_t partial_runs = 0;
  std::uint64_t restarts = 0;
  std::uint64_t failed_restarts = 0;
};

class Checkpointer {
 public:
  // The WAL size (pages) past which a commit asks for a checkpoint: SQLite's
  // own default for automatic checkpoints.
  static constexpr int kWalPages = 1000;
  // A WAL this size (pages) that a checkpoint copied whole is started over
  // by a RESTART checkpoint, which makes writers wait while it finishes (at
  // most kRestartWaitMs for the write lock and the readers, plus the copy of
  // what was written since and two syncs): 16 MB of 4 KB pages.
  static constexpr int kRestartPages = 4096;
  static constexpr int kRestartWaitMs = 5;
  static constexpr int kGateWaitMs = 100;

  // The checkpointer of the database file at `path`, shared by every Store
  // opened on that path in this process; it stops when the last one closes.
  static std::shared_ptr<Checkpointer> for_path(const std::string& path);

  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;
  ~Checkpointer();

  // Turns off `db`'s automatic checkpoints and reports its commits here.
  // REQUIRES: `db` is closed before this Checkpointer is destroyed.
  void watch(sqlite3* db);

  // Called before a write transaction that holds no lock yet: while a
  // RESTART checkpoint is after the write lock, waits for it to finish (at
  // most kGateWaitMs) instead of taking the lock between two of its polls.
  void before_write();

  // Checkpoints run so far, and those that could not copy the whole WAL
  // (a reader still used part of it, or an error).
  std::uint64_t runs() const { return runs_.load(); }
  std::uint64_t partial_runs() const { return partial_runs_.load(); }
  // RESTART checkpoints that let the next writer start the WAL over, and
  // those that could not (the lock or a reader was held too long).
  std::uint64_t restarts() const { return restarts_.load(); }
  std::uint64_t failed_restarts() const { return failed_restarts_.load(); }
  // The times a commit asked for a checkpoint (runs may take several at once).
  std::uint64_t asks() const;
  // Until no checkpoint is asked for or running (for tests and a clean stop).
  void wait_idle();
  CheckpointCounts counts() const {
    return {runs_.load(), partial_runs_.load(), restarts_.load(), failed_restarts_.load()};
  }

 private:
  explicit Checkpointer(std::string path);
  static int on_commit(void* self, sqlite3* db, const char* schema, int wal_pages);
  void run();
  bool restart(sqlite3* db);

  const std::string path_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  bool due_ = false;
  bool running_ = false;
  bool stopping_ = false;
  std::uint64_t asks_ = 0;
  // The WAL's size (pages) when the last checkpoint was asked for.
  std::atomic<int> asked_at_{0};
  std::atomic<std::uint64_t> runs_{0};
  std::atomic<std::uint64_t> partial_runs_{0};
  // Set while a RESTART checkpoint runs; writers wait on gate_open_.
  std::atomic<bool> restarting_{false};
  std::mutex gate_mutex_;
  std::condition_variable gate_open_;
  std::atomic<std::uint64_t> restarts_{0};
  std::atomic<std::uint64_t> failed_restarts_{0};
  std::thread thread_;
};

}  // namespace bulleted::schema
