// The index's vocabulary: the rows, ops, batches, queries and pages that the
// store, its reader, its side tables and every room above speak in. Plain
// values; nothing here touches SQLite.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "schema/error.hpp"
#include "schema/import_state.hpp"
#include "schema/node_record.hpp"
#include "schema/note_record.hpp"
#include "schema/outline_record.hpp"
#include "schema/search_match.hpp"
#include "schema/search_query.hpp"

namespace bulleted::schema {

enum class RepoStatus { kActive, kTakendown, kSuspended, kDeactivated, kDeleted };
// A repo's sync as stored (firehose/repo_sync.hpp owns the states and their
// moves): kDesynchronized a resync is wanted, kResyncing its repo is being
// fetched, kFailed its fetches failed (tried again later), kGivenUp its repo
// is over the limits (tried again at the next start).
enum class SyncState { kSynced, kDesynchronized, kResyncing, kFailed, kGivenUp };

std::string_view to_string(RepoStatus status);
std::optional<RepoStatus> parse_repo_status(std::string_view text);
std::string_view to_string(SyncState state);
std::optional<SyncState> parse_sync_state(std::string_view text);

struct RepoState {
  std::string did;
  std::optional<std::string> rev;
  RepoStatus status = RepoStatus::kActive;
  SyncState sync_state = SyncState::kSynced;
  std::optional<std::string> handle;
};

// A repo's sync as a restart resumes it: its state, the rounds of failed
// fetches so far and when it is to be tried again (Unix milliseconds).
struct RepoSyncRow {
  std::string did;
  SyncState state = SyncState::kSynced;
  int failed_rounds = 0;
  std::optional<std::int64_t> retry_at_ms;
};

enum class OpKind { kCreate, kUpdate, kDelete };

// The collections the index keeps: nodes, the notes at their keys, the
// outline records that title and describe an outline or a subtree of it,
// and the family's other records, kept as they came (mirrors, comments,
// comment policies: parse_kept_record).
enum class Collection : std::uint8_t { kNode, kNote, kOutline, kMirror, kComment, kCommentPolicy };
std::string_view collection_name(Collection collection);
std::optional<Collection> parse_collection(std::string_view name);

// The collections a repo was read for (repos.collections_read): bit 1
// nodes, 2 notes, 4 outline records, 8 mirrors, 16 comments, 32 comment
// policies. A repo read for fewer is read again by a network consumer.
inline constexpr std::int64_t kCollectionsRead = 63;

struct RecordOp {
  OpKind kind = OpKind::kCreate;
  std::string did;
  std::string rkey;
  std::string rev;                   // the commit's rev (a TID)
  std::string cid;                   // empty for deletes
  std::optional<NodeRecord> record;  // a node's create and update
  Collection collection = Collection::kNode;
  std::optional<NoteRecord> note;        // a note's create and update
  std::optional<OutlineRecord> outline;  // an outline record's create and update
  std::optional<nlohmann::json> kept;    // a kept record's create and update
  // Whether the op writes a record (create or update with its record).
  bool writes() const {
    if (kind == OpKind::kDelete) return false;
    switch (collection) {
      case Collection::kNode:
        return record.has_value();
      case Collection::kNote:
        return note.has_value();
      case Collection::kOutline:
        return outline.has_value();
      case Collection::kMirror:
      case Collection::kComment:
      case Collection::kCommentPolicy:
        return kept.has_value();
    }
    return false;
  }
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
  // Who runs it (a process's runner name) and until when (Unix ms): one
  // runner at a time, so that a job two processes see is written once.
  std::optional<std::string> runner;
  std::int64_t lease_until_ms = 0;
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
  std::optional<std::string_view> completed_at;  // as in NodeRow
  std::optional<std::string_view> layout;
  std::optional<std::string_view> display;
  std::optional<std::string_view> facets;     // as in NodeRow
  std::optional<std::string_view> mirror_of;  // as in NodeRow
  std::string_view record_json;               // as in NodeRow
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
  // When it was completed, as its record says (none when completed by an
  // earlier build's record: completed_since() is then its createdAt).
  std::optional<std::string> completed_at;
  std::optional<std::string> layout;   // as written (an open set)
  std::optional<std::string> display;  // as written (an open set)
  // The facets the record serves, as JSON (record_facets, kept with the
  // row); none when it has none.
  std::optional<std::string> facets;
  // A mirror's row (app.bulleted.mirror, in its parent's sibling group like
  // a node, without text): the AT-URI of the node it stands for. None: a
  // node.
  std::optional<std::string> mirror_of;
  // The record as JSON: from node(), changes() and ancestors(); rows of
  // pages, windows and subtrees leave it empty (they never read it).
  std::string record_json;
  std::size_t record_bytes = 0;  // the whole record's length
  std::int64_t child_count = 0;
  std::int64_t change_seq = 0;

  std::string uri() const;
  NodeRowView view() const;
  std::optional<std::string_view> completed_since() const {
    if (!completed) return std::nullopt;
    return completed_at ? std::string_view(*completed_at) : std::string_view(created_at);
  }
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

// app.bulleted.getOutline's walk (DESIGN.md section 13): a repo's outline,
// or the subtree under `root_rkey`, in pre-order (siblings in their order),
// `depth` levels below the top (1: the top's children) and at most `limit`
// rows across all levels, and no row that would pass `max_bytes` (as
// view_bytes counts them).
struct OutlineQuery {
  std::string did;
  std::optional<std::string> root_rkey;
  int depth = 3;
  int limit = 10;
  std::size_t max_bytes = kUnboundedBytes;
  // Writes a row as the answer shows it, as it is read (no copy of the row
  // is kept): what max_bytes counts. Without it, rows are counted as
  // view_bytes and kept unwritten.
  std::function<void(const NodeRowView&, std::string&)> render;
};

// A row of the walk: its record key, child count, and what `render` wrote.
struct OutlineRow {
  std::string rkey;
  std::int64_t child_count = 0;
  std::string rendered;
};

// Which bound ended the walk: none (everything was given), the depth (a row
// at the last level has children), or the rows' number or bytes.
enum class OutlineStop { kComplete, kDepth, kLimit };

struct OutlinePage {
  std::optional<NodeRow> root;    // the zoomed bullet
  std::vector<OutlineRow> nodes;  // pre-order
  OutlineStop stop = OutlineStop::kComplete;
  std::optional<std::string> handle;  // the last one seen for the DID
  // The outline record in effect at the level asked for: the one whose root
  // is the zoomed bullet or its nearest ancestor, else the repo's `self`.
  std::optional<std::string> outline_rkey;
  std::optional<OutlineRecord> outline;
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
  // Whether there may be more after it (the page was cut at its limit or
  // its bytes); false: it read to the repo's last change.
  bool more = false;
};

// What the index holds for one record of a repo (for resync diffs).
struct IndexedRecord {
  std::string rkey;
  std::string cid;
  std::string rev;
  Collection collection = Collection::kNode;
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
  // Note records, those whose node is not (yet) in the index, and nodes
  // whose served note is not their note record's text.
  std::int64_t notes = 0;
  std::int64_t notes_waiting = 0;
  std::int64_t wrong_notes = 0;
  // The kept node total (health, metrics) against the nodes counted.
  std::int64_t kept_node_total = 0;
  // The search index and tag counts hold exactly what the rows say.
  bool search_index_ok = true;
  std::map<std::string, std::int64_t> repos_by_status;
  std::map<std::string, std::int64_t> repos_by_sync_state;
  std::int64_t schema_version = 0;
  // The database itself is sound (odd records are counted, not failures).
  bool ok() const {
    return sqlite_check == "ok" && wrong_counts == 0 && wrong_blocks == 0 &&
           wrong_record_fields == 0 && wrong_notes == 0 && kept_node_total == nodes &&
           search_index_ok;
  }
};

// A search of one repo (DESIGN.md section 10; schema/reader_search.cpp).
enum class SearchSort { kRelevance, kOutline, kRecent };
std::string_view to_string(SearchSort sort);
std::optional<SearchSort> parse_search_sort(std::string_view text);

inline constexpr std::size_t kMaxSearchCursorBytes = 512;
inline constexpr std::size_t kMaxSearchAncestors = 32;
inline constexpr std::size_t kMaxAncestorTextBytes = 200;

struct SearchRequest {
  std::string did;
  std::string q;  // as the caller wrote it: a cursor is valid with the same q only
  SearchQuery query;
  std::optional<std::string> root_rkey;
  SearchSort sort = SearchSort::kRelevance;
  int limit = 25;
  std::optional<std::string> cursor;
  // Candidate rows the request may examine (index rows read, nodes read,
  // steps up to ancestors).
  std::size_t budget_rows = 20'000;
  std::int64_t now_ms = 0;                  // what created: and changed: count back from
  std::size_t max_bytes = kUnboundedBytes;  // as for pages: the results' nodes as views
  // Called between stretches of the search's work (every
  // search::kRowsPerStretch rows examined), in its read transaction: it may
  // pause the thread while other requests wait (the HTTP front's give_way).
  std::function<void()> give_way;
};

struct SearchAncestor {
  std::string rkey;
  std::string text;  // cut to at most 200 bytes at a character boundary
};

struct SearchResult {
  NodeRow node;
  std::vector<SearchAncestor> ancestors;  // root-most first, the 32 nearest
  bool ancestors_truncated = false;
  std::vector<MatchRange> highlights;
};

struct SearchPage {
  std::vector<SearchResult> results;
  std::optional<std::string> cursor;  // absent at the end
  bool budget_cut = false;            // the page ended because its budget ran out
  std::size_t rows_examined = 0;
  // What the full-text index was asked (FTS5's expression: the query's
  // words, never logged); none: the page took the long way without it.
  std::optional<std::string> index_query;
};

struct TagCount {
  std::string tag;  // lowercased, with its sigil
  std::int64_t count = 0;
};

// Opaque children-page cursors.
std::string encode_page_cursor(std::string_view sort_key, std::string_view rkey);
std::optional<std::pair<std::string, std::string>> decode_page_cursor(std::string_view cursor);

}  // namespace bulleted::schema
