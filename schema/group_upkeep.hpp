// What the index keeps beside the nodes of each sibling group, kept by the
// writes themselves in their own transaction: the child count (group_counts,
// schema 6) and the counted blocks of positions (order_blocks, schema 7;
// schema/positions.hpp), and the index's node total (index_totals, schema
// 9: what health and metrics report, never counted). A batch notes every node it adds to or takes
// from a group; flush() then writes each group's count once for the whole batch, moves the counts
// of the blocks that hold the nodes, and balances the blocks. Every path that changes nodes goes
// through here: Store::apply (ingest, resync, local writes, imports) and the removal of a deleted
// repo (forget_repo).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "schema/error.hpp"
#include "schema/rows.hpp"

namespace bulleted::schema {

class Database;

class GroupUpkeep {
 public:
  explicit GroupUpkeep(Database& db) : db_(db) {}

  // A node now filed in `group` at `key`.
  void added(const std::string& group, const SiblingKey& key);
  // A node no longer filed in `group` at `key`.
  void removed(const std::string& group, const SiblingKey& key);
  // Writes what the batch changed: every group's count in one statement,
  // which also reports the groups that need more than a count (emptied,
  // with blocks, grown past kBlockedGroup), then their blocks; call once,
  // before the transaction commits.
  Result<void> flush();

  // What the count upsert reports of a group whose count row it found.
  struct Found {
    std::int64_t size = 0;  // after the batch
    bool blocked = false;
  };
  struct Change {
    std::int64_t delta = 0;
    std::vector<std::pair<SiblingKey, int>> moves;  // nodes that came (+1) or went (-1)
    std::optional<Found> found;  // set by the upsert when the group may need more
  };

 private:
  Database& db_;
  // In key order: the counts are written along the b-tree, not across it.
  std::map<std::string, Change, std::less<>> groups_;
};

// Registers on `db` the SQL function through which flush()'s upsert reports
// the groups it finds (once a connection, before any flush).
Result<void> register_group_upkeep(Database& db);

// Adds `delta` to the index's node total (nodes that came, or went with a
// deleted repo).
Result<void> add_to_node_total(Database& db, std::int64_t delta);

// Takes away the counts and blocks of every group of `did` (its nodes are
// gone with the repo).
Result<void> forget_repo_groups(Database& db, std::string_view did);

}  // namespace bulleted::schema
