#include "schema/group_upkeep.hpp"

#include <sqlite3.h>

#include <new>

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

// bulleted_batch_groups(batch): the batch's groups behind the pointer
// `batch` as rows (grp, delta), in key order, read straight from the map (a
// table-valued function; eponymous, only in statements the app view runs):
// flush()'s upsert reads them without encoding them first.
struct BatchTable {
  sqlite3_vtab base{};
};

struct BatchCursor {
  sqlite3_vtab_cursor base{};
  const Groups* groups = nullptr;
  Groups::const_iterator at{};
  sqlite3_int64 row = 0;
};

int batch_connect(sqlite3* db, void*, int, const char* const*, sqlite3_vtab** table, char**) {
  const int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(grp TEXT, delta INTEGER, batch HIDDEN)");
  if (rc != SQLITE_OK) return rc;
  sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  auto* made = new (std::nothrow) BatchTable;
  if (made == nullptr) return SQLITE_NOMEM;
  *table = &made->base;
  return SQLITE_OK;
}

int batch_disconnect(sqlite3_vtab* table) {
  delete reinterpret_cast<BatchTable*>(table);
  return SQLITE_OK;
}

// Only a plan that hands over the batch (an equality on the hidden column)
// can run: there is nothing to read without it.
int batch_best_index(sqlite3_vtab*, sqlite3_index_info* info) {
  for (int i = 0; i < info->nConstraint; ++i) {
    const auto& constraint = info->aConstraint[i];
    if (constraint.iColumn == 2 && constraint.op == SQLITE_INDEX_CONSTRAINT_EQ &&
        constraint.usable) {
      info->aConstraintUsage[i].argvIndex = 1;
      info->aConstraintUsage[i].omit = 1;
      info->idxNum = 1;
      info->estimatedCost = 1;
      return SQLITE_OK;
    }
  }
  return SQLITE_CONSTRAINT;
}

int batch_open(sqlite3_vtab*, sqlite3_vtab_cursor** cursor) {
  auto* made = new (std::nothrow) BatchCursor;
  if (made == nullptr) return SQLITE_NOMEM;
  *cursor = &made->base;
  return SQLITE_OK;
}

int batch_close(sqlite3_vtab_cursor* cursor) {
  delete reinterpret_cast<BatchCursor*>(cursor);
  return SQLITE_OK;
}

int batch_filter(sqlite3_vtab_cursor* base, int idx, const char*, int argc, sqlite3_value** argv) {
  auto* cursor = reinterpret_cast<BatchCursor*>(base);
  cursor->groups = idx == 1 && argc == 1
                       ? static_cast<const Groups*>(sqlite3_value_pointer(argv[0], kSinkType))
                       : nullptr;
  if (cursor->groups != nullptr) cursor->at = cursor->groups->begin();
  cursor->row = 0;
  return SQLITE_OK;
}

int batch_next(sqlite3_vtab_cursor* base) {
  auto* cursor = reinterpret_cast<BatchCursor*>(base);
  ++cursor->at;
  ++cursor->row;
  return SQLITE_OK;
}

int batch_eof(sqlite3_vtab_cursor* base) {
  const auto* cursor = reinterpret_cast<const BatchCursor*>(base);
  return cursor->groups == nullptr || cursor->at == cursor->groups->end();
}

int batch_column(sqlite3_vtab_cursor* base, sqlite3_context* context, int column) {
  const auto* cursor = reinterpret_cast<const BatchCursor*>(base);
  const auto& [group, change] = *cursor->at;
  if (column == 0) {
    // The map's keys do not move while the statement runs.
    sqlite3_result_text(context, group.data(), static_cast<int>(group.size()), SQLITE_STATIC);
  } else if (column == 1) {
    sqlite3_result_int64(context, change.delta);
  } else {
    sqlite3_result_null(context);
  }
  return SQLITE_OK;
}

int batch_rowid(sqlite3_vtab_cursor* base, sqlite3_int64* rowid) {
  *rowid = reinterpret_cast<const BatchCursor*>(base)->row;
  return SQLITE_OK;
}

constexpr sqlite3_module kBatchModule = {
    .iVersion = 0,
    .xCreate = nullptr,  // eponymous only
    .xConnect = batch_connect,
    .xBestIndex = batch_best_index,
    .xDisconnect = batch_disconnect,
    .xDestroy = batch_disconnect,
    .xOpen = batch_open,
    .xClose = batch_close,
    .xFilter = batch_filter,
    .xNext = batch_next,
    .xEof = batch_eof,
    .xColumn = batch_column,
    .xRowid = batch_rowid,
};

// bulleted_group_counted(batch, grp, n, delta, blocked): the count a group
// found in group_counts has after the batch, n + delta. Called by the
// upsert on each group whose count row exists; it notes, in the batch's
// groups behind `batch`, those that may need more than their count: the ones
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
  int rc = sqlite3_create_function_v2(db.handle(), "bulleted_group_counted", 5,
                                      SQLITE_UTF8 | SQLITE_DIRECTONLY, nullptr, group_counted,
                                      nullptr, nullptr, nullptr);
  if (rc == SQLITE_OK) {
    rc = sqlite3_create_module_v2(db.handle(), "bulleted_batch_groups", &kBatchModule, nullptr,
                                  nullptr);
  }
  if (rc != SQLITE_OK) return std::unexpected(sqlite_error(db.handle(), rc, "registering"));
  return {};
}

Result<void> add_to_node_total(Database& db, std::int64_t delta) {
  if (delta == 0) return {};
  auto stmt = db.prepare("UPDATE index_totals SET nodes = nodes + ?1 WHERE id = 1");
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, delta);
  return (*stmt)->run();
}

Result<void> GroupUpkeep::flush() {
  if (groups_.empty()) return {};
  {
    std::int64_t total = 0;
    for (const auto& [group, change] : groups_) total += change.delta;
    if (auto r = add_to_node_total(db_, total); !r) return r;
  }
  {
    // One statement for the whole batch (not one a group), its groups read
    // in key order so that the counts are written along the b-tree. A group
    // without a row is inserted with its delta as its count; one with a row
    // is reported by bulleted_group_counted when it may need more than its
    // count (no second look-up of every group). SQLite needs the WHERE to
    // read ON CONFLICT as the upsert's, not the join's.
    auto stmt = db_.prepare(
        "INSERT INTO group_counts (grp, n) SELECT grp, delta FROM bulleted_batch_groups(?1)"
        " WHERE true ON CONFLICT (grp) DO UPDATE"
        " SET n = bulleted_group_counted(?1, grp, n, excluded.n, blocked)");
    if (!stmt) return pass(stmt);
    (*stmt)->bind_pointer(1, &groups_, kSinkType);
    if (auto r = (*stmt)->run(); !r) return r;
  }
  for (auto& [group, change] : groups_) {
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
        if (!blocked) break;  // a group has blocks only when its count says so
      }
      continue;
    }
    if (size <= kBlockedGroup && !blocked) continue;
    if (!blocked) {
      if (auto r = build_blocks(db_, group); !r) return r;
      continue;
    }
    if (auto r = move_blocks(db_, group, size, std::move(change.moves)); !r) return r;
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
