#include "schema/sqlite.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>

namespace bulleted::schema {

Error sqlite_error(sqlite3* db, int rc, std::string_view what) {
  const int primary = rc & 0xFF;
  const bool transient = primary == SQLITE_BUSY || primary == SQLITE_LOCKED ||
                         primary == SQLITE_READONLY || primary == SQLITE_FULL ||
                         primary == SQLITE_IOERR || primary == SQLITE_CANTOPEN;
  std::string message(what);
  message += ": ";
  message += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  return Error{transient ? ErrorCode::kUnavailable : ErrorCode::kInternal, std::move(message)};
}

namespace {

constexpr std::int64_t kFirstBusyStepUs = 50;
constexpr std::int64_t kLongestBusyStepUs = 2000;
constexpr int kDoublings = 5;  // 50 us doubled five times is 1.6 ms

// The time the first `waits` steps of busy_wait slept.
std::int64_t busy_waited_us(int waits) {
  if (waits <= kDoublings + 1) return kFirstBusyStepUs * ((std::int64_t{1} << waits) - 1);
  return busy_waited_us(kDoublings + 1) + (waits - kDoublings - 1) * kLongestBusyStepUs;
}

int busy_wait(void* timeout, int waits) {
  const std::int64_t budget_us = reinterpret_cast<std::intptr_t>(timeout) * std::int64_t{1000};
  const std::int64_t waited_us = busy_waited_us(waits);
  if (waited_us >= budget_us) return 0;
  const std::int64_t step_us = waits <= kDoublings ? kFirstBusyStepUs << waits : kLongestBusyStepUs;
  std::this_thread::sleep_for(std::chrono::microseconds(std::min(step_us, budget_us - waited_us)));
  return 1;
}

}  // namespace

void set_busy_timeout(sqlite3* db, int timeout_ms) {
  if (timeout_ms <= 0) {
    sqlite3_busy_handler(db, nullptr, nullptr);
    return;
  }
  sqlite3_busy_handler(db, &busy_wait,
                       reinterpret_cast<void*>(static_cast<std::intptr_t>(timeout_ms)));
}

Statement& Statement::bind(int index, std::string_view text) {
  sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::bind(int index, std::int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

Statement& Statement::bind(int index, const std::optional<std::string>& text) {
  return text ? bind(index, std::string_view(*text)) : bind_null(index);
}

Statement& Statement::bind(int index, const std::optional<std::int64_t>& value) {
  return value ? bind(index, *value) : bind_null(index);
}

Statement& Statement::bind_view(int index, std::string_view text) {
  sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
  return *this;
}

Statement& Statement::bind_view(int index, const std::optional<std::string>& text) {
  return text ? bind_view(index, std::string_view(*text)) : bind_null(index);
}

Statement& Statement::bind_pointer(int index, void* pointer, const char* type) {
  sqlite3_bind_pointer(stmt_, index, pointer, type, nullptr);
  return *this;
}

Statement& Statement::bind_null(int index) {
  sqlite3_bind_null(stmt_, index);
  return *this;
}

Result<bool> Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return std::unexpected(sqlite_error(db_, rc, "step"));
}

Result<void> Statement::run() {
  while (true) {
    auto row = step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return {};
  }
}

std::string Statement::text(int column) const { return std::string(text_view(column)); }

std::string_view Statement::text_view(int column) const {
  const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  if (data == nullptr) return {};
  return std::string_view(data, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::optional<std::string> Statement::optional_text(int column) const {
  if (is_null(column)) return std::nullopt;
  return text(column);
}

std::int64_t Statement::integer(int column) const { return sqlite3_column_int64(stmt_, column); }

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

Result<std::unique_ptr<Database>> Database::open(const std::string& path, int busy_timeout_ms) {
  // Before SQLite's first use: no allocation statistics, which every
  // sqlite3_malloc and free would otherwise count under a global mutex.
  static const int configured = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  (void)configured;
  sqlite3* raw = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    Error error = sqlite_error(raw, rc, "opening " + path);
    sqlite3_close(raw);
    return std::unexpected(std::move(error));
  }
  std::unique_ptr<Database> db(new Database(raw));
  set_busy_timeout(raw, busy_timeout_ms);
  sqlite3_extended_result_codes(raw, 1);
  // A new file gives the pages it frees back on request (PRAGMA
  // incremental_vacuum; docs/OPERATIONS.md): the setting takes only on a
  // file with no table yet, and before it is put in WAL mode. On any other
  // file it changes nothing.
  if (auto r = db->exec("PRAGMA auto_vacuum = INCREMENTAL;"
                        "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                        "PRAGMA foreign_keys=OFF; PRAGMA temp_store=MEMORY;"
                        // No memory map: a read transaction that follows another
                        // connection's commit drops the map and maps the file
                        // again, and every unmap stops all the process's threads
                        // to flush their TLBs (13% of a createNode load's CPU).
                        "PRAGMA mmap_size=0; PRAGMA cache_size=-32768;"
                        // A WAL that grew under load shrinks back when reused.
                        "PRAGMA journal_size_limit=67108864;");
      !r) {
    return std::unexpected(r.error());
  }
  return db;
}

Database::~Database() {
  cache_.clear();
  sqlite3_close(db_);
}

Result<StatementRef> Database::prepare(const char* sql) {
  if (auto it = cache_.find(sql); it != cache_.end()) {
    it->second->reset();
    return StatementRef(it->second.get());
  }
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return std::unexpected(sqlite_error(db_, rc, "prepare"));
  auto [it, inserted] = cache_.emplace(sql, std::make_unique<Statement>(db_, stmt));
  return StatementRef(it->second.get());
}

Result<void> Database::exec(const char* sql) {
  char* message = nullptr;
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    std::string text = message != nullptr ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    Error error = sqlite_error(nullptr, rc, "exec");
    error.message = "exec: " + text;
    return std::unexpected(std::move(error));
  }
  return {};
}

Result<Transaction> Transaction::begin(Database& db, Kind kind) {
  if (db.transaction_depth_ > 0) {
    if (kind == Kind::kWrite && !db.writing_) {
      return fail(ErrorCode::kInternal, "a write cannot nest inside a read transaction");
    }
    if (auto r = db.exec("SAVEPOINT nested"); !r) return std::unexpected(r.error());
    ++db.transaction_depth_;
    return Transaction(&db, true);
  }
  if (auto r = db.exec(kind == Kind::kWrite ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED"); !r) {
    return std::unexpected(r.error());
  }
  db.transaction_depth_ = 1;
  db.writing_ = kind == Kind::kWrite;
  return Transaction(&db, false);
}

void Transaction::end() {
  --db_->transaction_depth_;
  db_ = nullptr;
}

namespace {

void roll_back(Database& db, bool nested) {
  if (nested) {
    (void)db.exec("ROLLBACK TO nested; RELEASE nested");
  } else {
    (void)db.exec("ROLLBACK");
  }
}

}  // namespace

Transaction::~Transaction() {
  if (db_ == nullptr) return;
  Database* db = db_;
  const bool nested = nested_;
  roll_back(*db, nested);
  end();
  if (!nested && db->on_end_) db->on_end_(false);
}

Result<void> Transaction::commit() {
  Database* db = db_;
  const bool nested = nested_;
  end();
  auto result = nested ? db->exec("RELEASE nested") : db->exec("COMMIT");
  // A failed COMMIT (busy, disk full) leaves the transaction open: end it.
  if (!result) roll_back(*db, nested);
  if (!nested && db->on_end_) db->on_end_(result.has_value());
  return result;
}

}  // namespace bulleted::schema
