// The index's owner: one SQLite file holding every node the app view knows,
// its migrations, transactions and writes. Reads go through read(), a
// Reader over the same connection (schema/reader.hpp); what the app view
// keeps beside the index (tokens, sessions, sign-ins, keys, import jobs)
// through the side tables (schema/side_tables.hpp), over it too.
//
// Index writes go through apply(): a batch of record ops with the repo revs,
// statuses, handles, firehose cursor and import progress they cover,
// committed in one transaction. The repo bookkeeping setters below
// (set_repo_status, set_sync_state, set_handle) are the consumer's, for
// states that are not an op. An op applies only when its rev is newer than
// what the store holds for that record (a row or a tombstone), so
// duplicates, replays of any prefix and per-record reordering converge to
// the same index. After each commit of apply() the commit listener, when
// one is set, hears which repos changed and their last change sequence
// (what live streams wait on).
//
// A Store owns one connection and is used by one thread at a time; open one
// Store per thread on the same file (one writer at a time, many readers).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schema/error.hpp"
#include "schema/migrations.hpp"
#include "schema/reader.hpp"
#include "schema/rows.hpp"
#include "schema/side_tables.hpp"

namespace bulleted::schema {

class Database;
class Transaction;
class Checkpointer;
struct CheckpointCounts;

// What a commit of apply() (or set_repo_status) changed: each repo whose
// nodes (or tombstones) it wrote, with the last change sequence it reached
// (0 for a repo whose status alone it wrote), and the index's change
// sequence before and after it (commits are serial: the commits of a file
// cover its sequence without gaps, so a follower can tell whether commits
// it was not told of happened, in another process).
struct CommitNotice {
  std::vector<std::pair<std::string, std::int64_t>> repos;  // (did, last change_seq)
  std::int64_t from = 0;
  std::int64_t to = 0;
};

struct StoreOptions {
  int busy_timeout_ms = 5000;
  // WAL checkpoints on a background thread shared by every Store of the file
  // (schema/checkpointer.hpp) instead of at this connection's commits.
  bool background_checkpoints = true;
  // Progress of migrations run at open (an existing file only).
  std::function<void(const MigrationProgress&)> on_migration;
  // Told of each commit (set_commit_listener; change streams follow them).
  std::function<void(const CommitNotice&)> on_commit;
};

class Store {
 public:
  // Opens the file, applying forward-only migrations. A file written by a
  // newer binary is kSchemaTooNew.
  static Result<std::unique_ptr<Store>> open(const std::string& path,
                                             const StoreOptions& options = {});
  ~Store();

  // The schema version this binary writes.
  static int schema_version();

  // ---- writes
  Result<ApplyOutcome> apply(const ApplyBatch& batch);
  // A write transaction the caller commits: every read and write of this
  // store until then happens inside it (each method's own transaction
  // becoming a savepoint), and another connection's writes wait for it.
  Result<Transaction> begin_write();
  // Whether a write transaction of begin_write() is open on this connection
  // and SQLite has not ended it by itself (a full disk ends it on an error).
  bool in_write_transaction() const;
  // Sets a repo's status; kDeleted removes its nodes and tombstones.
  Result<void> set_repo_status(std::string_view did, RepoStatus status);
  // A repo's sync as firehose/repo_sync.hpp moves it: the state, and for a
  // failed one its rounds and the next try (kept across restarts).
  Result<void> set_sync(const RepoSyncRow& sync);
  Result<void> set_handle(std::string_view did, std::string_view handle);
  // Marks for a resync every repo indexed before the index read all the
  // collections it keeps now (notes, since schema 15), and records them as
  // read for all of them: the repos marked (a network consumer's start).
  Result<int> want_resync_for_new_collections();
  // Called after each commit of apply() that changed nodes, on the thread
  // that committed (must be quick: hand over, never read here).
  void set_commit_listener(std::function<void(const CommitNotice&)> listener);

  // ---- reads, over this connection
  Reader& read() { return reader_; }

  // ---- what the app view keeps beside the index, over this connection
  TokenTable tokens();
  SessionTable sessions();
  OAuthRequestTable oauth_requests();
  ServiceKeyTable service_keys();
  ImportJobTable import_jobs();

  // ---- the file
  // What the file's background checkpointer did so far (all 0 without one).
  CheckpointCounts checkpoints() const;
  // Takes the write lock and gives it back, without waiting: a lock held by
  // another writer means the file takes writes (so readiness never waits
  // behind request work). Fails when the file is read-only, full or unusable.
  Result<void> check_writable();
  // Gives the file's free pages back to the system, 256 pages a write
  // transaction (writers wait at most that long), when the file was made
  // with incremental auto-vacuum (every file since schema 10's binary);
  // the pages given back (0 for an older file: `backup --compact` is its
  // way). Call outside a transaction.
  Result<std::int64_t> give_back_free_pages();
  // A consistent copy at `destination` (a new file) holding only the live
  // pages (VACUUM INTO): what the file shrinks to once the copy replaces
  // it. Others keep reading and writing meanwhile.
  Result<void> compact_into(const std::string& destination);
  // A consistent copy of the whole database at `destination` (a new file),
  // taken with SQLite's online backup while others keep reading and writing.
  // `progress` gets (pages copied, pages in all) after each step.
  Result<void> backup(const std::string& destination,
                      const std::function<void(int, int)>& progress = {});
  // SQLite's quick_check and counts of what the index holds (`check`).
  Result<IntegrityReport> integrity_report();

 private:
  // Tests and benchmarks reach the connection itself (tests/support,
  // bench/): schema/store_internals.hpp, never included elsewhere.
  friend struct StoreInternals;
  Store(std::unique_ptr<Database> db, std::shared_ptr<Checkpointer> checkpointer,
        int busy_timeout_ms);

  std::shared_ptr<Checkpointer> checkpointer_;  // outlives db_, which it watches
  std::unique_ptr<Database> db_;
  Reader reader_;
  int busy_timeout_ms_;
  std::function<void(const CommitNotice&)> on_commit_;
  std::map<std::string, std::int64_t> pending_;  // written, not yet committed
  std::optional<std::int64_t> pending_from_;     // the sequence before them
  std::int64_t pending_to_ = 0;
};

}  // namespace bulleted::schema
