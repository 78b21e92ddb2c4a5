#include "schema/group_upkeep.hpp"

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
  for (const auto& [group, change] : groups_) {
    std::int64_t size = 0;
    bool blocked = false;
    {
      auto stmt = db_.prepare(
          "INSERT INTO group_counts (grp, n) VALUES (?1, ?2)"
          " ON CONFLICT (grp) DO UPDATE SET n = n + excluded.n RETURNING n, blocked");
      if (!stmt) return pass(stmt);
      (*stmt)->bind_view(1, group).bind(2, change.delta);
      auto row = (*stmt)->step();
      if (!row) return pass(row);
      if (*row) {
        size = (*stmt)->integer(0);
        blocked = (*stmt)->integer(1) != 0;
      }
    }
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
      if (size > kBlockedGroup) {
        if (auto r = build_blocks(db_, group); !r) return r;
      }
      continue;
    }
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
