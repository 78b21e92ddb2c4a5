// Store: the file as a whole: its backups, compacted copies and free pages.
#include <filesystem>

#include "schema/sqlite.hpp"
#include "schema/store.hpp"

namespace bulleted::schema {

TokenTable Store::tokens() { return TokenTable(*db_); }
SessionTable Store::sessions() { return SessionTable(*db_); }
OAuthRequestTable Store::oauth_requests() { return OAuthRequestTable(*db_); }
ServiceKeyTable Store::service_keys() { return ServiceKeyTable(*db_); }
ImportJobTable Store::import_jobs() { return ImportJobTable(*db_); }

Result<std::int64_t> Store::give_back_free_pages() {
  auto mode = query_value<std::int64_t>(*db_, "PRAGMA auto_vacuum");
  if (!mode) return pass(mode);
  if (mode->value_or(0) != 2) return std::int64_t{0};  // not incremental
  std::int64_t given = 0;
  while (true) {
    auto free = query_value<std::int64_t>(*db_, "PRAGMA freelist_count");
    if (!free) return pass(free);
    if (free->value_or(0) == 0) return given;
    // 256 pages (1 MiB) a write transaction (a pragma takes no parameter).
    if (auto r = db_->exec("PRAGMA incremental_vacuum(256)"); !r) return pass(r);
    given += std::min<std::int64_t>(256, free->value_or(0));
  }
}

Result<void> Store::compact_into(const std::string& destination) {
  if (std::filesystem::exists(destination)) {
    return fail(ErrorCode::kInvalidRequest, destination + " exists; a backup goes to a new file");
  }
  // One read transaction for the whole copy (writers go on beside it, in
  // WAL); the copy holds the live pages only, rebuilt in order.
  auto stmt = db_->prepare("VACUUM INTO ?1");
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, destination);
  if (auto r = (*stmt)->run(); !r) {
    return fail(ErrorCode::kUnavailable, "backup: " + r.error().message);
  }
  return {};
}

Result<void> Store::backup(const std::string& destination,
                           const std::function<void(int, int)>& progress) {
  if (std::filesystem::exists(destination)) {
    return fail(ErrorCode::kInvalidRequest, destination + " exists; a backup goes to a new file");
  }
  sqlite3* target = nullptr;
  if (sqlite3_open_v2(destination.c_str(), &target, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                      nullptr) != SQLITE_OK) {
    const std::string message = target != nullptr ? sqlite3_errmsg(target) : "cannot open";
    sqlite3_close(target);
    return fail(ErrorCode::kUnavailable, "backup: " + message);
  }
  sqlite3_backup* copy = sqlite3_backup_init(target, "main", db_->handle(), "main");
  if (copy == nullptr) {
    const std::string message = sqlite3_errmsg(target);
    sqlite3_close(target);
    return fail(ErrorCode::kUnavailable, "backup: " + message);
  }
  int rc = SQLITE_OK;
  // A few pages a step, so writers are never held up for long; a busy or
  // locked source is retried.
  do {
    rc = sqlite3_backup_step(copy, 256);
    if (progress) {
      progress(sqlite3_backup_pagecount(copy) - sqlite3_backup_remaining(copy),
               sqlite3_backup_pagecount(copy));
    }
    if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) sqlite3_sleep(20);
  } while (rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED);
  sqlite3_backup_finish(copy);
  const bool ok = rc == SQLITE_DONE;
  const std::string message = sqlite3_errmsg(target);
  sqlite3_close(target);
  if (!ok) {
    std::error_code ignored;
    std::filesystem::remove(destination, ignored);
    return fail(ErrorCode::kUnavailable, "backup: " + message);
  }
  return {};
}

}  // namespace bulleted::schema
