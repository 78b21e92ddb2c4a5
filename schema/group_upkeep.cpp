#include "schema/group_upkeep.hpp"

#include "schema/positions.hpp"
#include "schema/sqlite.hpp"

namespace bulleted::schema {

Result<bool> GroupUpkeep::blocked(const std::string& group) {
  auto known = blocked_.find(group);
  if (known != blocked_.end()) return known->second;
  auto found = query_value<std::int64_t>(db_, "SELECT 1 FROM order_blocks WHERE grp = ?1 LIMIT 1",
                                         group);
  if (!found) return pass(found);
  blocked_.emplace(group, found->has_value());
  return found->has_value();
}

Result<void> GroupUpkeep::added(const std::string& group, const SiblingKey& key) {
  ++counts_[group];
  written_[group].push_back(key);
  auto has = blocked(group);
  if (!has) return pass(has);
  if (*has) block_moves_.emplace_back(group, key, 1);
  return {};
}

Result<void> GroupUpkeep::removed(const std::string& group, const SiblingKey& key) {
  --counts_[group];
  auto has = blocked(group);
  if (!has) return pass(has);
  if (*has) block_moves_.emplace_back(group, key, -1);
  return {};
}

Result<void> GroupUpkeep::flush() {
  // The blocks' bounds do not move before the balance below, so each node's
  // block is the same whenever in the batch it came or went.
  for (const auto& [group, key, delta] : block_moves_) {
    if (auto r = adjust_blocks(db_, group, key, delta); !r) return r;
  }
  for (const auto& [group, delta] : counts_) {
    if (delta == 0) continue;
    auto stmt = db_.prepare(
        "INSERT INTO group_counts (grp, n) VALUES (?1, ?2)"
        " ON CONFLICT (grp) DO UPDATE SET n = n + excluded.n RETURNING n");
    if (!stmt) return pass(stmt);
    (*stmt)->bind_view(1, group).bind(2, delta);
    auto row = (*stmt)->step();
    if (!row) return pass(row);
    if (*row && (*stmt)->integer(0) > 0) continue;
    // The group emptied: no count row, no blocks.
    for (const char* sql :
         {"DELETE FROM group_counts WHERE grp = ?1", "DELETE FROM order_blocks WHERE grp = ?1"}) {
      auto clear = db_.prepare(sql);
      if (!clear) return pass(clear);
      (*clear)->bind_view(1, group);
      if (auto r = (*clear)->run(); !r) return r;
    }
  }
  for (const auto& [group, keys] : written_) {
    if (auto r = rebalance(db_, group, keys); !r) return r;
  }
  counts_.clear();
  block_moves_.clear();
  written_.clear();
  blocked_.clear();
  return {};
}

Result<void> forget_repo_groups(Database& db, std::string_view did) {
  // A repo's groups: at://<did>, at://<did>/<collection>/<rkey> (the
  // children of its nodes, a range of the key order) and at://<did>#unattached.
  for (const char* sql :
       {"DELETE FROM group_counts WHERE grp = 'at://' || ?1"
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
