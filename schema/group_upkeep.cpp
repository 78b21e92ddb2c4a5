#include "schema/group_upkeep.hpp"

#include "schema/json_text.hpp"
#include "schema/positions.hpp"
#include "schema/sqlite.hpp"

namespace bulleted::schema {

void GroupUpkeep::added(const std::string& group, const SiblingKey& key) {
  Change& change = groups_[group];
  ++change.delta;
  change.moves.emplace_back(key, 1);
}

void GroupUpkeep::removed(const std::string& group, const SiblingKey& key) {
  Change& change = groups_[group];
  --change.delta;
  change.moves.emplace_back(key, -1);
}

Result<void> GroupUpkeep::flush() {
  if (groups_.empty()) return {};
  // The batch's groups as one JSON object of their deltas, in key order, so
  // that two statements serve the whole batch (not two a group) and the
  // counts are written along the b-tree. Group names are made of a DID and
  // a record key (sibling_group), both checked syntax: they round-trip
  // through JSON exactly.
  std::string deltas = "{";
  for (const auto& [group, change] : groups_) {
    if (deltas.size() > 1) deltas += ',';
    append_json_string(deltas, group);
    deltas += ':';
    deltas += std::to_string(change.delta);
  }
  deltas += '}';
  {
    auto stmt = db_.prepare(
        "INSERT INTO group_counts (grp, n) SELECT key, value FROM json_each(?1) WHERE value != 0"
        " ON CONFLICT (grp) DO UPDATE SET n = n + excluded.n");
    if (!stmt) return pass(stmt);
    (*stmt)->bind_view(1, deltas);
    if (auto r = (*stmt)->run(); !r) return r;
  }
  // Only the groups that need more than their count: emptied ones, ones
  // with blocks, and ones grown past kBlockedGroup.
  struct Special {
    std::string group;
    std::int64_t size;
    bool blocked;
  };
  std::vector<Special> special;
  {
    auto stmt = db_.prepare(
        "SELECT j.key, coalesce(g.n, 0), coalesce(g.blocked, 0) FROM json_each(?1) j"
        " LEFT JOIN group_counts g ON g.grp = j.key"
        " WHERE g.grp IS NULL OR g.n <= 0 OR g.blocked != 0 OR g.n > ?2");
    if (!stmt) return pass(stmt);
    (*stmt)->bind_view(1, deltas).bind(2, kBlockedGroup);
    while (true) {
      auto row = (*stmt)->step();
      if (!row) return pass(row);
      if (!*row) break;
      special.push_back({(*stmt)->text(0), (*stmt)->integer(1), (*stmt)->integer(2) != 0});
    }
  }
  for (const auto& [group, size, blocked] : special) {
    if (size <= 0) {  // the group emptied: no count, no blocks
      for (const char* sql :
           {"DELETE FROM group_counts WHERE grp = ?1", "DELETE FROM order_blocks WHERE grp = ?1"}) {
        auto clear = db_.prepare(sql);
        if (!clear) return pass(clear);
        (*clear)->bind_view(1, group);
        if (auto r = (*clear)->run(); !r) return r;
      }
      continue;
    }
    if (!blocked) {
      if (auto r = build_blocks(db_, group); !r) return r;
      continue;
    }
    const auto found = groups_.find(group);
    if (found == groups_.end()) continue;
    const Change& change = found->second;
    // The blocks' bounds do not move before the balance below, so each node's
    // block is the same whenever in the batch it came or went.
    for (const auto& [key, delta] : change.moves) {
      if (auto r = adjust_blocks(db_, group, key, delta); !r) return r;
    }
    std::vector<SiblingKey> written;  // where nodes came: the blocks that may have to split
    for (const auto& [key, delta] : change.moves) {
      if (delta > 0) written.push_back(key);
    }
    if (auto r = split_blocks(db_, group, written); !r) return r;
  }
  groups_.clear();
  return {};
}

Result<void> forget_repo_groups(Database& db, std::string_view did) {
  // A repo's groups: at://<did>, at://<did>/<collection>/<rkey> (the
  // children of its nodes, a range of the key order) and at://<did>#unattached.
  for (const char* sql : {"DELETE FROM group_counts WHERE grp = 'at://' || ?1"
                          " OR (grp >= 'at://' || ?1 || '/' AND grp < 'at://' || ?1 || '0')"
                          " OR grp = 'at://' || ?1 || '#unattached'",
                          "DELETE FROM order_blocks WHERE grp = 'at://' || ?1"
                          " OR (grp >= 'at://' || ?1 || '/' AND grp < 'at://' || ?1 || '0')"
                          " OR grp = 'at://' || ?1 || '#unattached'"}) {
    auto stmt = db.prepare(sql);
    if (!stmt) return pass(stmt);
    (*stmt)->bind_view(1, did);
    if (auto r = (*stmt)->run(); !r) return r;
  }
  return {};
}

}  // namespace bulleted::schema
