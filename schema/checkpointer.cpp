#include "schema/checkpointer.hpp"

#include <map>

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
  sqlite3_busy_timeout(db, 1000);
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
    } else {
      // All of it is in the file: the next commit starts the WAL over.
      asked_at_ = 0;
    }
    lock.lock();
  }
  lock.unlock();
  sqlite3_close(db);
}

}  // namespace bulleted::schema
