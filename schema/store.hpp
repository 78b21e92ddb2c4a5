// The index: every node the app view knows, in one SQLite file, and beside
// it (TokenTable, SessionTable, ImportJobTable) what the app view keeps that
// is not the index, over the same connection.
//
// Index writes go through apply(): a batch of record ops with the repo revs,
// statuses, handles, firehose cursor and import progress they cover,
// committed in one transaction. The repo bookkeeping setters below
// (set_repo_status, set_sync_state, set_handle) are the consumer's, for
// states that are not an op. An op applies only when its rev is
// newer than what the store holds for that record (a row or a tombstone), so
// duplicates, replays of any prefix and per-record reordering converge to
// the same index. Reads never fail or loop on hostile data (parent cycles,
// dangling parents, children before parents); repos that are not active are
// hidden from every read.
//
// A Store owns one connection and is used by one thread at a time; open one
// Store per thread on the same file (one writer at a time, many readers).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schema/error.hpp"
#include "schema/import_state.hpp"
#include "schema/migrations.hpp"
#include "schema/node_record.hpp"

namespace bulleted::schema {

class Database;
class Transaction;
class Checkpointer;
struct CheckpointCounts;

enum class RepoStatus { kActive, kTakendown, kSuspended, kDeactivated, kDeleted };
enum class SyncState { kSynced, kDesynchronized, kResyncing };

std::string_view to_string(RepoStatus status);
std::optional<RepoStatus> parse_repo_status(std::string_view text);
std::string_view to_string(SyncState state);

struct RepoState {
  std::string did;
  std::optional<std::string> rev;
  RepoStatus status = RepoStatus::kActive;
  SyncState sync_state = SyncState::kSynced;
  std::optional<std::string> handle;
};

enum class OpKind { kCreate, kUpdate, kDelete };

struct RecordOp {
  OpKind kind = OpKind::kCreate;
  std::string did;
  std::string rkey;
  std::string rev;                   // the commit's rev (a TID)
  std::string cid;                   // empty for deletes
  std::optional<NodeRecord> record;  // set for create and update
};

struct ApplyBatch {
  std::vector<RecordOp> ops;
  // Repo revs to record after the ops (the head of each repo's chain).
  std::vector<std::pair<std::string, std::string>> repo_revs;
  // Account status changes, applied after the ops (kDeleted purges the repo).
  std::vector<std::pair<std::string, RepoStatus>> statuses;
  // Handles from #identity events.
  std::vector<std::pair<std::string, std::string>> handles;
  // The firehose cursor covering these ops: (source name, seq).
  std::optional<std::pair<std::string, std::int64_t>> cursor;
  // Import progress covering these ops: (job id, plan rows done).
  std::optional<std::pair<std::string, std::int64_t>> import_done;

  bool empty() const {
    return ops.empty() && repo_revs.empty() && statuses.empty() && handles.empty();
  }
};

struct ImportJobRow {
  std::string id;
  std::string did;
  std::string root_rkey;
  std::string format;
  ImportState state = ImportState::kRunning;
  std::int64_t total = 0;
  std::int64_t done = 0;
  std::optional<std::string> resume_at;
  std::string errors_json = "[]";
  std::optional<std::string> session;  // digest of the PDS session that writes it (pds mode)
  std::string created_at;
};

// One planned record of an import: its rkey and its JSON.
struct PlannedRecord {
  std::string rkey;
  std::string record_json;
};

struct SessionRow {
  std::string digest;  // of the app view's bearer token
  std::string did;
  std::optional<std::string> handle;
  std::string pds_url;
  std::string access_sealed;
  std::string refresh_sealed;
  std::optional<std::string> oauth_sealed;  // the OAuth grant; none: an app password's
};

struct ApplyOutcome {
  std::size_t applied = 0;
  std::size_t stale = 0;    // not newer than what the store holds
  std::size_t ignored = 0;  // for repos that are deleted
};

// A node's fields without copies: views into a NodeRow, or into a read
// statement's current row (valid only until the statement steps again).
struct NodeRowView {
  std::string_view did;
  std::string_view rkey;
  std::string_view cid;
  std::string_view rev;
  std::string_view group;
  std::optional<std::string_view> parent_rkey;
  bool unattached = false;
  std::string_view sort_key;
  std::optional<std::string_view> sort_key_raw;
  bool sort_key_valid = false;
  std::string_view text;
  std::optional<std::string_view> note;
  bool completed = false;
  std::string_view created_at;
  std::optional<std::string_view> facets;  // as in NodeRow
  std::string_view record_json;            // as in NodeRow
  std::size_t record_bytes = 0;
  std::int64_t child_count = 0;
  std::int64_t change_seq = 0;
};

// At least the bytes a node takes as a NodeView in an answer: its record's
// text, note and facets (escaped alike), its URI (the DID, however long),
// record key, parent and CID, the fields of the view and the brackets of a
// subtree around it. How answers are bounded before they are written.
std::size_t view_bytes(const NodeRowView& row);

struct NodeRow {
  std::string did;
  std::string rkey;
  std::string cid;
  std::string rev;
  std::string group;                       // the sibling group it is filed in
  std::optional<std::string> parent_rkey;  // when filed under a node
  bool unattached = false;                 // parent named something it cannot be filed under
  std::string sort_key;                    // effective
  std::optional<std::string> sort_key_raw;
  bool sort_key_valid = false;
  std::string text;
  std::optional<std::string> note;
  bool completed = false;
  std::string created_at;
  // The facets the record serves, as JSON (record_facets, kept with the
  // row); none when it has none.
  std::optional<std::string> facets;
  // The record as JSON: from node(), changes() and ancestors(); rows of
  // pages, windows and subtrees leave it empty (they never read it).
  std::string record_json;
  std::size_t record_bytes = 0;  // the whole record's length
  std::int64_t child_count = 0;
  std::int64_t change_seq = 0;

  std::string uri() const;
  NodeRowView view() const;
  static NodeRow from(const NodeRowView& fields);  // a copy of every field
};

// The most a read's answer may hold, in the bytes its nodes take as views
// (view_bytes()): a page stops before the node that would pass it, never
// before its first node.
inline constexpr std::size_t kUnboundedBytes = std::numeric_limits<std::size_t>::max();

struct ChildrenQuery {
  std::string did;
  std::optional<std::string> parent_rkey;  // nullopt: top level
  int limit = 100;
  std::optional<std::string> cursor;  // from a previous page
  bool reverse = false;
  std::size_t max_bytes = kUnboundedBytes;
};

struct ChildrenPage {
  std::vector<NodeRow> nodes;
  std::optional<std::string> cursor;  // absent at the end
};

struct Window {
  std::vector<NodeRow> nodes;  // ascending, anchor included
  bool has_before = false;
  bool has_after = false;
};

struct Position {
  std::int64_t index = 0;
  std::int64_t sibling_count = 0;
};

struct SubtreeNode {
  std::optional<NodeRow> node;  // nullopt for the top level of a repo
  std::vector<SubtreeNode> children;
  bool more = false;  // children (or deeper levels) left out by depth or budget
};

// Receives a subtree as Store::subtree reads it, breadth first, each node
// only as views into the read (no copies). Nodes are numbered in the order
// given: 0 is the top (the root node, or the top level of a repo), then 1,
// 2, ... A node's children arrive together, in sibling order, after it.
class SubtreeSink {
 public:
  virtual ~SubtreeSink() = default;
  // The top: the root node, or nullptr for the top level of a repo.
  virtual void top(const NodeRowView* root) = 0;
  virtual void child(std::size_t parent, const NodeRowView& node) = 0;
  // Children (or deeper levels) of node `id` were left out by depth or budget.
  virtual void more(std::size_t id) = 0;
  // Everything node `id` will get has arrived: its children (none for a
  // leaf), and more() if some were left out. Once a node and every node
  // before it in depth-first order are settled, the answer up to it can be
  // written. Breadth first, that is during the last level's read.
  virtual void settled(std::size_t /*id*/) {}
};

struct SubtreeQuery {
  std::string did;
  std::optional<std::string> root_rkey;
  int depth = 8;
  std::size_t budget_bytes = 256 * 1024;
};

struct Change {
  bool deleted = false;
  std::string rkey;
  std::optional<NodeRow> node;  // for upserts
  std::int64_t seq = 0;
};

struct ChangesPage {
  std::vector<Change> changes;
  std::string cursor;  // pass back to continue; stays put when nothing changed
};

// What the index holds for one record of a repo (for resync diffs).
struct IndexedRecord {
  std::string rkey;
  std::string cid;
  std::string rev;
};

// A sibling's place in its group: what placement reads under its lock.
struct SiblingKey {
  std::string sort_key;  // effective ("~" when the record's key is not canonical)
  std::string rkey;
  bool valid() const { return sort_key != kInvalidSortKey; }
};

// What `bulleted-appview check` reports.
struct IntegrityReport {
  std::string sqlite_check;  // "ok" or SQLite's first complaint
  std::int64_t nodes = 0;
  std::int64_t tombstones = 0;
  std::int64_t malformed_keys = 0;  // nodes sorting last for a bad or missing sortKey
  std::int64_t unattached = 0;      // parent names another repo, collection or nothing valid
  std::int64_t dangling = 0;        // parent node not (yet) in the index
  std::int64_t in_cycles = 0;       // nodes whose parents lead round in a circle
  std::int64_t wrong_counts = 0;    // sibling groups whose kept child count is not their size
  std::int64_t wrong_blocks = 0;  // counted blocks of positions that are off (schema/positions.hpp)
  // Nodes whose kept facets or record length (served in place of the
  // record) are not their record's.
  std::int64_t wrong_record_fields = 0;
  // The kept node total (health, metrics) against the nodes counted.
  std::int64_t kept_node_total = 0;
  std::map<std::string, std::int64_t> repos_by_status;
  std::map<std::string, std::int64_t> repos_by_sync_state;
  std::int64_t schema_version = 0;
  // The database itself is sound (odd records are counted, not failures).
  bool ok() const {
    return sqlite_check == "ok" && wrong_counts == 0 && wrong_blocks == 0 &&
           wrong_record_fields == 0 && kept_node_total == nodes;
  }
};

struct StoreOptions {
  int busy_timeout_ms = 5000;
  // WAL checkpoints on a background thread shared by every Store of the file
  // (schema/checkpointer.hpp) instead of at this connection's commits.
  bool background_checkpoints = true;
  // Progress of migrations run at open (an existing file only).
  std::function<void(const MigrationProgress&)> on_migration;
};

// The leading characters of a token digest that the index narrows on.
inline constexpr std::size_t kDigestSelector = 16;

// True when a and b are equal; the time taken depends on their lengths only.
bool constant_time_equal(std::string_view a, std::string_view b);

// Bearer tokens (local mode), over a Store's connection.
class TokenTable {
 public:
  explicit TokenTable(Database& db) : db_(db) {}
  // Stores the digest of a token for `did`.
  Result<void> add(std::string_view digest, std::string_view did);
  // The DID a token digest belongs to. Digests are hex; the index finds the
  // rows that share the first kDigestSelector characters and each candidate
  // is compared whole with constant_time_equal, so no lookup's timing depends
  // on how much of a stored digest a guess matched.
  Result<std::optional<std::string>> did_of(std::string_view digest);

 private:
  Database& db_;
};

// PDS sessions (pds mode), keyed by the digest of the app view's token and
// found the way TokenTable finds a token.
class SessionTable {
 public:
  explicit SessionTable(Database& db) : db_(db) {}
  Result<void> put(const SessionRow& session);
  Result<std::optional<SessionRow>> find(std::string_view digest);
  // The session of `did` refreshed last, if any (a caller proven by
  // service auth writes through it).
  Result<std::optional<SessionRow>> latest_of(std::string_view did);
  // New tokens (and, for OAuth, the grant with its nonces) in one statement.
  Result<void> update_tokens(std::string_view digest, std::string_view access_sealed,
                             std::string_view refresh_sealed,
                             const std::optional<std::string>& oauth_sealed = std::nullopt);
  // True when there was such a session.
  Result<bool> remove(std::string_view digest);

 private:
  Database& db_;
};

// OAuth sign-ins under way (pds mode): what the callback needs, sealed, by
// the request's state; each is taken once.
class OAuthRequestTable {
 public:
  explicit OAuthRequestTable(Database& db) : db_(db) {}
  // Stores a request made at `now` (Unix seconds), first dropping those
  // older than `max_age_seconds`.
  Result<void> put(std::string_view state, std::string_view sealed, std::int64_t now,
                   std::int64_t max_age_seconds);
  // Removes and returns the request of `state` if it is younger than
  // `max_age_seconds`.
  Result<std::optional<std::string>> take(std::string_view state, std::int64_t now,
                                          std::int64_t max_age_seconds);

 private:
  Database& db_;
};

// Keys of the app view's own (the OAuth client's signing key), sealed.
class ServiceKeyTable {
 public:
  explicit ServiceKeyTable(Database& db) : db_(db) {}
  Result<std::optional<std::string>> find(std::string_view name);
  // Stores `sealed` under `name` unless a key is there already; returns the
  // one stored (so that two processes starting at once agree).
  Result<std::string> put_first(std::string_view name, std::string_view sealed);

 private:
  Database& db_;
};

// Import jobs (their moves: schema/import_state.hpp). A job's progress
// also advances inside Store::apply (ApplyBatch::import_done), in the same
// transaction as the nodes it wrote.
class ImportJobTable {
 public:
  explicit ImportJobTable(Database& db) : db_(db) {}
  // The job row and its whole plan in one transaction.
  Result<void> create(const ImportJobRow& job, const std::vector<PlannedRecord>& plan);
  Result<std::optional<ImportJobRow>> find(std::string_view id);
  // Jobs still to run (running or waiting), oldest first.
  Result<std::vector<ImportJobRow>> unfinished();
  // Plan rows from `from` (0-based), at most `limit`.
  Result<std::vector<PlannedRecord>> plan(std::string_view id, std::int64_t from,
                                          std::int64_t limit);
  // Moves the job; a job that reaches kDone drops its plan in the same
  // transaction (nothing will read it again). A failed job keeps its plan:
  // an operator may resume it (`import --resume`) once the cause is mended.
  Result<void> set_state(std::string_view id, ImportState state,
                         const std::optional<std::string>& resume_at, std::string_view errors_json);
  // Progress without index changes (pds mode: rows the PDS already holds).
  Result<void> set_done(std::string_view id, std::int64_t done);
  // Drops a job's plan (a failed job abandoned: it cannot be resumed after);
  // the rows dropped.
  Result<std::int64_t> drop_plan(std::string_view id);
  // Plan rows kept for the job (0 once done or abandoned).
  Result<std::int64_t> plan_rows(std::string_view id);

 private:
  Database& db_;
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

  // Writes.
  Result<ApplyOutcome> apply(const ApplyBatch& batch);
  // A write transaction the caller commits: every read and write of this
  // store until then happens inside it (each method's own transaction
  // becoming a savepoint), and another connection's writes wait for it.
  Result<Transaction> begin_write();
  // Sets a repo's status; kDeleted removes its nodes and tombstones.
  Result<void> set_repo_status(std::string_view did, RepoStatus status);
  Result<void> set_sync_state(std::string_view did, SyncState state);
  Result<void> set_handle(std::string_view did, std::string_view handle);

  // State.
  Result<std::optional<RepoState>> repo(std::string_view did);
  Result<std::optional<std::int64_t>> cursor(std::string_view source);
  Result<std::int64_t> node_count();
  // What the file's background checkpointer did so far (all 0 without one).
  CheckpointCounts checkpoints() const;
  // Takes the write lock and gives it back, without waiting: a lock held by
  // another writer means the file takes writes (so readiness never waits
  // behind request work). Fails when the file is read-only, full or unusable.
  Result<void> check_writable();
  // Sibling keys of `group` in (sort_key, rkey) order, after (or, reversed,
  // before) `from` when given. Reads the covering index only.
  Result<std::vector<SiblingKey>> sibling_keys(std::string_view group,
                                               const std::optional<SiblingKey>& from, bool reverse,
                                               int limit);
  // The sibling at 0-based `index` of `group`, if there is one.
  Result<std::optional<SiblingKey>> sibling_key_at(std::string_view group, std::int64_t index);
  // Up to `count` siblings in order from 0-based `index` (fewer past the end):
  // one walk down the counted blocks for neighbours side by side.
  Result<std::vector<SiblingKey>> sibling_keys_at(std::string_view group, std::int64_t index,
                                                  int count);
  // Live rkeys whose group is `group` (children of a node), for subtree walks.
  Result<std::vector<std::string>> child_rkeys(std::string_view group);

  // What the app view keeps besides the index, over this connection.
  TokenTable tokens();
  SessionTable sessions();
  OAuthRequestTable oauth_requests();
  ServiceKeyTable service_keys();
  ImportJobTable import_jobs();

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

  // SQLite's quick_check and counts of what the index holds.
  Result<IntegrityReport> integrity_report();

  // Repos marked desynchronized or resyncing (a resync did not finish).
  Result<std::vector<std::string>> repos_to_resync();
  // Every repo the index has rows or state for.
  Result<std::vector<std::string>> repo_dids();
  // Every live record of a repo, hidden or not, by rkey.
  Result<std::vector<IndexedRecord>> indexed_records(std::string_view did);

  // Reads (each runs in one read transaction: a consistent snapshot).
  Result<NodeRow> node(std::string_view did, std::string_view rkey);
  Result<ChildrenPage> children(const ChildrenQuery& query);
  // The same without copies: each row of the page given to `visit` as it is
  // read (views valid only during the call); returns the next page's cursor
  // (none at the end). On an error `visit` may have seen part of the page.
  using RowVisitor = std::function<void(const NodeRowView&)>;
  Result<std::optional<std::string>> children(const ChildrenQuery& query, const RowVisitor& visit);
  // Each side gets half of `max_bytes` (has_before/has_after say where the
  // window was cut).
  Result<Window> window(std::string_view did, std::string_view anchor_rkey, int before, int after,
                        std::size_t max_bytes = kUnboundedBytes);
  Result<Position> position(std::string_view did, std::string_view rkey);
  Result<SubtreeNode> subtree(const SubtreeQuery& query);
  // The same, given to `sink` as it is read. On an error the sink may hold
  // part of the tree.
  Result<void> subtree(const SubtreeQuery& query, SubtreeSink& sink);
  // Root first; stops at the top level, a missing parent, a cycle,
  // kMaxAncestors levels or, going up from the node, the ancestor that
  // would pass `max_bytes`; `end`, when given, says which.
  enum class AncestorsEnd { kTop, kMissingParent, kCycle, kDepthLimit, kByteLimit };
  static constexpr std::size_t kMaxAncestors = 10'000;
  Result<std::vector<NodeRow>> ancestors(std::string_view did, std::string_view rkey,
                                         AncestorsEnd* end = nullptr,
                                         std::size_t max_bytes = kUnboundedBytes);
  // A page of changes stops at `limit` or before the node that would pass
  // `max_bytes`; its cursor is the last change it holds.
  Result<ChangesPage> changes(std::string_view did, std::optional<std::string_view> cursor,
                              int limit, std::size_t max_bytes = kUnboundedBytes);
  // The cursor at the end of a repo's changes now (no changes): where a
  // client that has just read the outline starts following it.
  Result<std::string> latest_change_cursor(std::string_view did);

  // Every row of the index in a fixed order, without bookkeeping that depends
  // on the order ops arrived in: equal dumps mean equal indexes.
  Result<std::string> dump();

  // For tests of the query plans.
  Result<std::string> explain(std::string_view sql_kind);

  Database& database() { return *db_; }

 private:
  Store(std::unique_ptr<Database> db, std::shared_ptr<Checkpointer> checkpointer,
        int busy_timeout_ms);
  Result<bool> repo_visible(std::string_view did);
  Result<std::optional<NodeRow>> find_node(std::string_view did, std::string_view rkey);
  // The node when it exists and its repo is visible, else kNotFound.
  Result<NodeRow> visible_node(std::string_view did, std::string_view rkey);
  Result<std::vector<NodeRow>> group_page(
      std::string_view did, std::string_view group, int limit,
      const std::optional<std::pair<std::string, std::string>>& after, bool reverse);
  // group_page's rows as views, to `visit`.
  Result<void> visit_group_page(std::string_view did, std::string_view group, int limit,
                                const std::optional<std::pair<std::string, std::string>>& after,
                                bool reverse, const RowVisitor& visit);

  std::shared_ptr<Checkpointer> checkpointer_;  // outlives db_, which it watches
  std::unique_ptr<Database> db_;
  int busy_timeout_ms_;
};

// Opaque children-page cursors.
std::string encode_page_cursor(std::string_view sort_key, std::string_view rkey);
std::optional<std::pair<std::string, std::string>> decode_page_cursor(std::string_view cursor);

}  // namespace bulleted::schema
