// Every read of the index, as a view over a Store's connection: each read
// runs in one read transaction (a consistent snapshot), or, inside the
// Store's write transaction, as a part of it (placement reads the group it
// then writes under the same lock and transaction). Reads never fail or
// loop on hostile data (parent cycles, dangling parents, children before
// parents); repos that are not active are hidden from every read but the
// bookkeeping ones (repo states, indexed records for resync diffs).
//
// A Reader belongs to its Store: one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "schema/error.hpp"
#include "schema/rows.hpp"

namespace bulleted::schema {

class Database;

class Reader {
 public:
  explicit Reader(Database& db) : db_(db) {}

  // ---- nodes, pages and walks (what queries serve)
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
  // getOutline's walk (OutlineQuery). kNotFound for a DID the index does
  // not know (or hides) and for a root it does not hold: the same answer.
  Result<OutlinePage> outline(const OutlineQuery& query);
  Result<std::vector<NodeRow>> ancestors(std::string_view did, std::string_view rkey,
                                         AncestorsEnd* end = nullptr,
                                         std::size_t max_bytes = kUnboundedBytes);
  // A page of changes stops at `limit` or before the node that would pass
  // `max_bytes`; its cursor is the last change it holds. A cursor beyond the
  // index's change sequence is kFutureCursor.
  Result<ChangesPage> changes(std::string_view did, std::optional<std::string_view> cursor,
                              int limit, std::size_t max_bytes = kUnboundedBytes);
  // The cursor at the end of a repo's changes now (no changes): where a
  // client that has just read the outline starts following it.
  Result<std::string> latest_change_cursor(std::string_view did);
  // The index's change sequence: the newest change of every repo (the
  // cursor a change stream's heartbeat gives).
  Result<std::int64_t> change_sequence();

  // ---- sibling groups (what placement reads under its lock)
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

  // ---- repos and bookkeeping
  Result<std::optional<RepoState>> repo(std::string_view did);
  Result<std::optional<std::int64_t>> cursor(std::string_view source);
  // The kept number of nodes (one row; never counted).
  Result<std::int64_t> node_count();
  // Repos whose sync is not done (any state but synced), with what a
  // restart resumes of it; deleted repos left out.
  Result<std::vector<RepoSyncRow>> unsynced_repos();
  // Every repo the index has rows or state for.
  Result<std::vector<std::string>> repo_dids();
  // Every live record of a repo, hidden or not: its nodes by rkey, then
  // its notes by rkey.
  Result<std::vector<IndexedRecord>> indexed_records(std::string_view did);
  // The note record at a node's key, as the index keeps it (none when the
  // index holds no note record there).
  Result<std::optional<NoteRecord>> note_record(std::string_view did, std::string_view rkey);
  // Every row of the index in a fixed order, without bookkeeping that depends
  // on the order ops arrived in: equal dumps mean equal indexes.
  Result<std::string> dump();
  // For tests of the query plans.
  Result<std::string> explain(std::string_view sql_kind);

  // ---- search (schema/reader_search.cpp)
  // A page of a search; kNotFound for a missing root, kInvalidRequest for a
  // cursor of another search. Hidden repos find nothing.
  Result<SearchPage> search(const SearchRequest& request);
  // A repo's tags, most used first, ties by tag; `prefix` includes the sigil.
  Result<std::vector<TagCount>> tags(std::string_view did, std::string_view prefix, int limit);

 private:
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

  Database& db_;
};

}  // namespace bulleted::schema
