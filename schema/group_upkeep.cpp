#include "schema/group_upkeep.hpp"

#include <sqlite3.h>

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

namespace {

// What flush() binds for the function below to report into.
constexpr const char* kSinkType = "bulleted.group_upkeep";
using Groups = std::map<std::string, GroupUpkeep::Change, std::less<>>;

// bulleted_group_counted(sink, grp, n, delta, blocked): the count a group
// found in group_counts has after the batch, n + delta. Called by the
// upsert on each group whose count row exists; it notes, in the batch's
// groups behind `sink`, those that may need more than their count: the ones
// that lost nodes (they may have emptied) and the ones with blocks or now
// past kBlockedGroup. A group it does not note had no row, or stays small,
// unblocked and not emptied.
void group_counted(sqlite3_context* context, int, sqlite3_value** args) {
  const std::int64_t n = sqlite3_value_int64(args[2]);
  const std::int64_t delta = sqlite3_value_int64(args[3]);
  const bool blocked = sqlite3_value_int64(args[4]) != 0;
  const std::int64_t size = n + delta;
  auto* groups = static_cast<Groups*>(sqlite3_value_pointer(args[0], kSinkType));
  if (groups != nullptr && (delta <= 0 || size <= 0 || blocked || size > kBlockedGroup)) {
    const auto* text = sqlite3_value_text(args[1]);
    const std::string_view group(reinterpret_cast<const char*>(text),
                                 static_cast<std::size_t>(sqlite3_value_bytes(args[1])));
    if (auto it = groups->find(group); it != groups->end()) {
      it->second.found = GroupUpkeep::Found{size, blocked};
    }
  }
  sqlite3_result_int64(context, size);
}

}  // namespace

Result<void> register_group_upkeep(Database& db) {
  // Not deterministic (it writes through its pointer); never from the
  // schema (a trigger or view cannot reach it).
  const int rc = sqlite3_create_function_v2(db.handle(), "bulleted_group_counted", 5,
                                            SQLITE_UTF8 | SQLITE_DIRECTONLY, nullptr, group_counted,
                                            nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return std::unexpected(sqlite_error(db.handle(), rc, "registering"));
  return {};
}

Result<void> GroupUpkeep::flush() {
  if (groups_.empty()) return {};
  // The batch's groups as one JSON object of their deltas, in key order, so
  // that one statement serves the whole batch (not one a group) and the
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
    // A group without a row is inserted with its delta as its count; one
    // with a row is reported by bulleted_group_counted when it may need
    // more than its count (no second look-up of every group). SQLite needs
    // the WHERE to read ON CONFLICT as the upsert's, not the join's.
    auto stmt = db_.prepare(
        "INSERT INTO group_counts (grp, n) SELECT key, value FROM json_each(?1) WHERE true"
        " ON CONFLICT (grp) DO UPDATE"
        " SET n = bulleted_group_counted(?2, grp, n, excluded.n, blocked)");
    if (!stmt) return pass(stmt);
    (*stmt)->bind_view(1, deltas).bind_pointer(2, &groups_, kSinkType);
    if (auto r = (*stmt)->run(); !r) return r;
  }
  for (const auto& [group, change] : groups_) {
    // Not reported: a new row holding the delta, or a group that needs no more.
    const std::int64_t size = change.found ? change.found->size : change.delta;
    const bool blocked = change.found && change.found->blocked;
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
    if (size <= kBlockedGroup && !blocked) continue;
    if (!blocked) {
      if (auto r = build_blocks(db_, group); !r) return r;
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
