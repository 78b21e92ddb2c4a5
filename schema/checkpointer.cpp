#include "schema/checkpointer.hpp"

#include <chrono>
#include <map>

#include "schema/sqlite.hpp"

namespace bulleted::schema {

namespace {

// A connection that has read the file's header, so it knows the file is in
// WAL mode (a checkpoint on a connection that has not is a no-op).
sqlite3* open_connection(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) !=
          SQLITE_OK ||
      sqlite3_exec(db, "PRAGMA journal_mode", nullptr, nullptr, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return nullptr;
  }
  set_busy_timeout(db, Checkpointer::kRestartWaitMs);
  return db;
}

}  // namespace

std::shared_ptr<Checkpointer> Checkpointer::for_path(const std::string& path) {
  static std::mutex registry_mutex;
  static std::map<std::string, std::weak_ptr<Checkpointer>> registry;
  std::lock_guard lock(registry_mutex);
  std::erase_if(registry, [](const auto& entry) { return entry.second.expired(); });
  auto& slot = registry[path];
  if (auto running = slot.lock()) return running;
  std::shared_ptr<Checkpointer> created(new Checkpointer(path));
  slot = created;
  return created;
}

Checkpointer::Checkpointer(std::string path) : path_(std::move(path)), thread_([this] { run(); }) {}

Checkpointer::~Checkpointer() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void Checkpointer::watch(sqlite3* db) { sqlite3_wal_hook(db, &Checkpointer::on_commit, this); }

int Checkpointer::on_commit(void* self, sqlite3* /*db*/, const char* /*schema*/, int wal_pages) {
  auto* checkpointer = static_cast<Checkpointer*>(self);
  int asked_at = checkpointer->asked_at_.load();
  // A WAL smaller than when last asked was reused from its start since.
  const int base = wal_pages < asked_at ? 0 : asked_at;
  if (wal_pages - base >= kWalPages &&
      checkpointer->asked_at_.compare_exchange_strong(asked_at, wal_pages)) {
    {
      std::lock_guard lock(checkpointer->mutex_);
      checkpointer->due_ = true;
      ++checkpointer->asks_;
    }
    checkpointer->wake_.notify_one();
  }
  return SQLITE_OK;
}

void Checkpointer::run() {
  sqlite3* db = nullptr;
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return due_ || stopping_; });
    if (stopping_) break;
    due_ = false;
    running_ = true;
    lock.unlock();
    if (db == nullptr) db = open_connection(path_);
    int wal_frames = 0;
    int copied = 0;
    const int rc = db == nullptr ? SQLITE_CANTOPEN
                                 : sqlite3_wal_checkpoint_v2(db, nullptr, SQLITE_CHECKPOINT_PASSIVE,
                                                             &wal_frames, &copied);
    ++runs_;
    if (rc != SQLITE_OK || copied < wal_frames) {
      ++partial_runs_;
    } else if (wal_frames < kRestartPages) {
      // All of it is in the file: a commit that begins before the next one
      // starts the WAL over.
      asked_at_ = 0;
    } else if (restart(db)) {
      asked_at_ = 0;
    }
    lock.lock();
    running_ = false;
    idle_.notify_all();
  }
  lock.unlock();
  sqlite3_close(db);
}

std::uint64_t Checkpointer::asks() const {
  std::lock_guard lock(mutex_);
  return asks_;
}

void Checkpointer::wait_idle() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return stopping_ || (!due_ && !running_); });
}

void Checkpointer::before_write() {
  if (!restarting_.load()) return;
  std::unique_lock gate(gate_mutex_);
  gate_open_.wait_for(gate, std::chrono::milliseconds(kGateWaitMs),
                      [this] { return !restarting_.load(); });
}

bool Checkpointer::restart(sqlite3* db) {
  // Under a steady stream of writes every write begins while the WAL still
  // holds frames no checkpoint has copied, so none of them may start it over
  // and it grows without end (2 GB in ten seconds of creates), until a pause
  // lets one writer reuse it and truncate the rest of it to
  // journal_size_limit, throwing away gigabytes of cached pages under the
  // write lock for hundreds of milliseconds. A RESTART checkpoint takes the
  // write lock, copies the few frames since the PASSIVE run and waits for
  // the readers still inside the WAL: the next writer then starts it over.
  // Writers wait for it meanwhile (this process's at before_write, so that
  // none takes the lock between two of its polls), so it waits for the lock
  // and the readers only kRestartWaitMs; if they do not let go by then, it
  // copies what it can and the next run tries again.
  int wal_frames = 0;
  int copied = 0;
  {
    std::lock_guard gate(gate_mutex_);
    restarting_ = true;
  }
  const int rc =
      sqlite3_wal_checkpoint_v2(db, nullptr, SQLITE_CHECKPOINT_RESTART, &wal_frames, &copied);
  {
    std::lock_guard gate(gate_mutex_);
    restarting_ = false;
  }
  gate_open_.notify_all();
  if (rc != SQLITE_OK) {
    ++failed_restarts_;
    return false;
  }
  ++restarts_;
  return true;
}

}  // namespace bulleted::schema
