// A thin RAII layer over the SQLite C API: one connection, cached prepared
// statements with bound parameters, transactions. Every SQL statement of the
// project goes through here, from schema/ only.
//
// A Database is used by one thread at a time (SQLite's own locking handles
// several connections to one file across threads and processes).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "schema/error.hpp"

namespace bulleted::schema {

// An Error from the connection's last failure; busy, locked, read-only and
// full disks are kUnavailable (the caller may retry later), the rest kInternal.
Error sqlite_error(sqlite3* db, int rc, std::string_view what);

class Statement {
 public:
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Binds by 1-based index. Text is copied by SQLite (SQLITE_TRANSIENT).
  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, const std::string& text) {
    return bind(index, std::string_view(text));
  }
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Statement& bind(int index, bool value) { return bind(index, static_cast<std::int64_t>(value)); }
  Statement& bind(int index, const std::optional<std::string>& text);
  Statement& bind(int index, const std::optional<std::int64_t>& value);
  Statement& bind_null(int index);
  // Binds a pointer that only an application function asking for `type`
  // can see (sqlite3_bind_pointer); SQL itself sees NULL.
  // REQUIRES: `type` is a string literal; `pointer` outlives the run.
  Statement& bind_pointer(int index, void* pointer, const char* type);
  // Binds text without copying it: the hot write path's binds.
  // REQUIRES: the text stays alive until the statement has run (SQLite reads
  // it while stepping; the reset that ends every use clears the binding).
  Statement& bind_view(int index, std::string_view text);
  Statement& bind_view(int index, const std::string& text) {
    return bind_view(index, std::string_view(text));
  }
  Statement& bind_view(int index, const std::optional<std::string>& text);
  Statement& bind_view(int index, std::string&&) = delete;
  Statement& bind_view(int index, std::optional<std::string>&&) = delete;

  // Steps once: true when a row is available, false when done.
  Result<bool> step();
  // Runs to completion, ignoring rows.
  Result<void> run();
  // Rows inserted, updated or deleted by the last INSERT, UPDATE or DELETE
  // that completed on this connection: read it right after run().
  int changes() const { return sqlite3_changes(db_); }

  std::string text(int column) const;
  // The column's text in place: valid until the next step or reset.
  std::string_view text_view(int column) const;
  std::optional<std::string> optional_text(int column) const;
  std::int64_t integer(int column) const;
  bool is_null(int column) const;
  // How many columns a row of this statement has.
  int columns() const { return sqlite3_column_count(stmt_); }

  // Resets bindings and state for reuse; called by Database::prepare.
  void reset();

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

// A cached statement in use: resets it (ending any read it holds open) when
// it goes out of scope, so no connection keeps a stale snapshot between calls.
// REQUIRES: it does not outlive its Database.
class StatementRef {
 public:
  explicit StatementRef(Statement* statement) : statement_(statement) {}
  StatementRef(StatementRef&& other) noexcept : statement_(other.statement_) {
    other.statement_ = nullptr;
  }
  StatementRef& operator=(StatementRef&&) = delete;
  ~StatementRef() {
    if (statement_ != nullptr) statement_->reset();
  }
  Statement* operator->() const { return statement_; }
  Statement& operator*() const { return *statement_; }

 private:
  Statement* statement_;
};

// Waits up to `timeout_ms` for a lock another connection holds, as SQLite's
// busy timeout does, but in short steps: 50 us at first, doubling to 2 ms.
// SQLite's own steps start at 1 ms and grow to 100 ms, so a writer that found
// the lock held for 3 ms slept 8 (1 + 2 + 5). A timeout of 0 fails at once.
void set_busy_timeout(sqlite3* db, int timeout_ms);

class Database {
 public:
  // Opens (creating if needed) the file at `path` with WAL, synchronous=NORMAL,
  // foreign keys off and the busy timeout given.
  static Result<std::unique_ptr<Database>> open(const std::string& path, int busy_timeout_ms);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // A cached statement for `sql` (a string literal), ready to bind. At most
  // one StatementRef per SQL text may be alive at a time.
  Result<StatementRef> prepare(const char* sql);
  // Runs one or more statements without parameters.
  Result<void> exec(const char* sql);

  sqlite3* handle() const { return db_; }
  // Whether a transaction is open (SQLite may end one itself on an error).
  bool in_transaction() const { return sqlite3_get_autocommit(db_) == 0; }
  // Whether the outermost transaction open is a write.
  bool in_write_transaction() const { return transaction_depth_ > 0 && writing_; }
  // Called when the outermost Transaction ends: true after its COMMIT, false
  // after a rollback (what was pending on its commit is then dropped).
  void on_transaction_end(std::function<void(bool committed)> hook) { on_end_ = std::move(hook); }

 private:
  friend class Transaction;
  explicit Database(sqlite3* db) : db_(db) {}
  sqlite3* db_;
  // Transactions open on this connection (the outermost a BEGIN, the rest
  // savepoints), and whether the outermost one writes.
  int transaction_depth_ = 0;
  bool writing_ = false;
  std::function<void(bool)> on_end_;
  // Keyed by the literal's address: each call site's SQL is prepared once.
  std::unordered_map<const char*, std::unique_ptr<Statement>> cache_;
};

// Binds one argument of the query helpers below: text without a copy (the
// arguments outlive the query's run), numbers by value.
template <class Arg>
void bind_argument(Statement& stmt, int index, const Arg& arg) {
  if constexpr (std::is_convertible_v<const Arg&, std::string_view>) {
    stmt.bind_view(index, std::string_view(arg));
  } else {
    stmt.bind(index, arg);
  }
}

// The first column of the first row of `sql` bound to `args` (in order), or
// nullopt when there is no row or the value is NULL: single-value lookups.
template <class T, class... Args>
Result<std::optional<T>> query_value(Database& db, const char* sql, const Args&... args) {
  static_assert(std::is_same_v<T, std::string> || std::is_same_v<T, std::int64_t>);
  auto stmt = db.prepare(sql);
  if (!stmt) return std::unexpected(stmt.error());
  int index = 0;
  (bind_argument(**stmt, ++index, args), ...);
  auto row = (*stmt)->step();
  if (!row) return std::unexpected(row.error());
  if (!*row || (*stmt)->is_null(0)) return std::optional<T>();
  if constexpr (std::is_same_v<T, std::string>) {
    return std::optional<T>((*stmt)->text(0));
  } else {
    return std::optional<T>((*stmt)->integer(0));
  }
}

// The first column of every row of `sql` bound to `args`, as text.
template <class... Args>
Result<std::vector<std::string>> query_texts(Database& db, const char* sql, const Args&... args) {
  auto stmt = db.prepare(sql);
  if (!stmt) return std::unexpected(stmt.error());
  int index = 0;
  (bind_argument(**stmt, ++index, args), ...);
  std::vector<std::string> out;
  while (true) {
    auto row = (*stmt)->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return out;
    out.push_back((*stmt)->text(0));
  }
}

// BEGIN IMMEDIATE (or DEFERRED for reads) on construction; rolls back on
// destruction unless committed. Begun while another transaction of the same
// connection is open, it is a savepoint inside that one: its commit keeps its
// changes for the outer transaction to commit, its rollback undoes only them.
// A write may nest only in a write.
class Transaction {
 public:
  enum class Kind { kRead, kWrite };
  static Result<Transaction> begin(Database& db, Kind kind);
  Transaction(Transaction&& other) noexcept : db_(other.db_), nested_(other.nested_) {
    other.db_ = nullptr;
  }
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();
  Result<void> commit();

 private:
  Transaction(Database* db, bool nested) : db_(db), nested_(nested) {}
  void end();
  Database* db_;
  bool nested_;
};

// The error of a failed result, passed on as the caller's own failure.
template <class T>
std::unexpected<Error> pass(const Result<T>& result) {
  return std::unexpected(result.error());
}

}  // namespace bulleted::schema
