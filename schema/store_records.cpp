#include "schema/store_records.hpp"

#include "schema/sqlite.hpp"
#include "schema/syntax.hpp"

namespace bulleted::schema {

Result<std::optional<std::string>> record_tombstone_rev(Database& db, const RecordOp& op) {
  return query_value<std::string>(
      db, "SELECT rev FROM record_tombstones WHERE did = ?1 AND collection = ?2 AND rkey = ?3",
      op.did, collection_name(op.collection), op.rkey);
}

Result<void> write_record_tombstone(Database& db, const RecordOp& op) {
  auto tomb = db.prepare(
      "INSERT INTO record_tombstones (did, collection, rkey, rev) VALUES (?1, ?2, ?3, ?4)"
      " ON CONFLICT (did, collection, rkey) DO UPDATE SET rev = excluded.rev");
  if (!tomb) return pass(tomb);
  (*tomb)
      ->bind_view(1, op.did)
      .bind_view(2, collection_name(op.collection))
      .bind_view(3, op.rkey)
      .bind_view(4, op.rev);
  return (*tomb)->run();
}

Result<void> clear_record_tombstone(Database& db, const RecordOp& op) {
  auto clear =
      db.prepare("DELETE FROM record_tombstones WHERE did = ?1 AND collection = ?2 AND rkey = ?3");
  if (!clear) return pass(clear);
  (*clear)->bind_view(1, op.did).bind_view(2, collection_name(op.collection)).bind_view(3, op.rkey);
  return (*clear)->run();
}

namespace {

// The end of a write of a kept table's row: its tombstone cleared, or, for
// a delete (`remove` bound and run by the caller), written.
Result<bool> written(Database& db, const RecordOp& op) {
  if (auto r = op.writes() ? clear_record_tombstone(db, op) : write_record_tombstone(db, op); !r) {
    return pass(r);
  }
  return true;
}

}  // namespace

Result<bool> apply_outline(Database& db, const RecordOp& op) {
  auto was = query_value<std::string>(db, "SELECT rev FROM outlines WHERE did = ?1 AND rkey = ?2",
                                      op.did, op.rkey);
  if (!was) return pass(was);
  if (*was && **was >= op.rev) return false;
  if (!op.writes()) {
    auto remove = db.prepare("DELETE FROM outlines WHERE did = ?1 AND rkey = ?2");
    if (!remove) return pass(remove);
    (*remove)->bind_view(1, op.did).bind_view(2, op.rkey);
    if (auto r = (*remove)->run(); !r) return pass(r);
    return written(db, op);
  }
  const std::string json =
      op.outline->record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  auto stmt = db.prepare(
      "INSERT INTO outlines (did, rkey, rev, cid, root_rkey, record) VALUES (?1, ?2, ?3, ?4, ?5,"
      " ?6) ON CONFLICT (did, rkey) DO UPDATE SET rev = excluded.rev, cid = excluded.cid,"
      " root_rkey = excluded.root_rkey, record = excluded.record");
  if (!stmt) return pass(stmt);
  (*stmt)
      ->bind_view(1, op.did)
      .bind_view(2, op.rkey)
      .bind_view(3, op.rev)
      .bind_view(4, op.cid)
      .bind_view(5, op.outline->root_rkey)
      .bind_view(6, json);
  if (auto r = (*stmt)->run(); !r) return pass(r);
  return written(db, op);
}

Result<bool> apply_kept(Database& db, const RecordOp& op) {
  const std::string_view collection = collection_name(op.collection);
  auto was = query_value<std::string>(
      db, "SELECT rev FROM kept_records WHERE did = ?1 AND collection = ?2 AND rkey = ?3", op.did,
      collection, op.rkey);
  if (!was) return pass(was);
  if (*was && **was >= op.rev) return false;
  if (!op.writes()) {
    auto remove =
        db.prepare("DELETE FROM kept_records WHERE did = ?1 AND collection = ?2 AND rkey = ?3");
    if (!remove) return pass(remove);
    (*remove)->bind_view(1, op.did).bind_view(2, collection).bind_view(3, op.rkey);
    if (auto r = (*remove)->run(); !r) return pass(r);
    return written(db, op);
  }
  const std::string json = op.kept->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  auto stmt = db.prepare(
      "INSERT INTO kept_records (did, collection, rkey, rev, cid, record)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (did, collection, rkey) DO UPDATE SET"
      " rev = excluded.rev, cid = excluded.cid, record = excluded.record");
  if (!stmt) return pass(stmt);
  (*stmt)
      ->bind_view(1, op.did)
      .bind_view(2, collection)
      .bind_view(3, op.rkey)
      .bind_view(4, op.rev)
      .bind_view(5, op.cid)
      .bind_view(6, json);
  if (auto r = (*stmt)->run(); !r) return pass(r);
  return written(db, op);
}

}  // namespace bulleted::schema
