// Reader: repos, the cursor, the kept totals, and the whole index as text.
#include <sstream>

#include "schema/reader.hpp"
#include "schema/sqlite.hpp"

namespace bulleted::schema {

Result<std::optional<RepoState>> Reader::repo(std::string_view did) {
  auto stmt = db_.prepare("SELECT did, rev, status, sync_state, handle FROM repos WHERE did = ?1");
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, did);
  auto row = (*stmt)->step();
  if (!row) return pass(row);
  if (!*row) return std::optional<RepoState>();
  RepoState state;
  state.did = (*stmt)->text(0);
  state.rev = (*stmt)->optional_text(1);
  state.status = parse_repo_status((*stmt)->text(2)).value_or(RepoStatus::kActive);
  state.sync_state = parse_sync_state((*stmt)->text(3)).value_or(SyncState::kSynced);
  state.handle = (*stmt)->optional_text(4);
  return std::optional<RepoState>(std::move(state));
}

Result<std::optional<std::int64_t>> Reader::cursor(std::string_view source) {
  return query_value<std::int64_t>(db_, "SELECT seq FROM cursors WHERE source = ?1", source);
}

Result<std::int64_t> Reader::node_count() {
  // Kept with every write (index_totals), never counted: one row's read.
  auto count = query_value<std::int64_t>(db_, "SELECT nodes FROM index_totals WHERE id = 1");
  if (!count) return std::unexpected(count.error());
  return count->value_or(0);
}

Result<std::vector<RepoSyncRow>> Reader::unsynced_repos() {
  auto stmt = db_.prepare(
      "SELECT did, sync_state, sync_failed_rounds, sync_retry_at FROM repos"
      " WHERE sync_state != 'synced' AND status != 'deleted' ORDER BY did");
  if (!stmt) return pass(stmt);
  std::vector<RepoSyncRow> out;
  while (true) {
    auto row = (*stmt)->step();
    if (!row) return pass(row);
    if (!*row) return out;
    RepoSyncRow sync;
    sync.did = (*stmt)->text(0);
    sync.state = parse_sync_state((*stmt)->text(1)).value_or(SyncState::kDesynchronized);
    sync.failed_rounds = static_cast<int>((*stmt)->integer(2));
    if (!(*stmt)->is_null(3)) sync.retry_at_ms = (*stmt)->integer(3);
    out.push_back(std::move(sync));
  }
}

Result<std::vector<std::string>> Reader::repo_dids() {
  return query_texts(
      db_,
      "SELECT did FROM repos WHERE status != 'deleted' UNION SELECT DISTINCT did FROM nodes"
      " ORDER BY did");
}

// A mirror's row among the nodes is listed as its kept record.
Result<std::vector<IndexedRecord>> Reader::indexed_records(std::string_view did) {
  auto stmt = db_.prepare(
      "SELECT rkey, cid, rev, 0 FROM nodes WHERE did = ?1 AND mirror_of IS NULL"
      " UNION ALL SELECT rkey, cid, rev, 1 FROM notes WHERE did = ?1"
      " UNION ALL SELECT rkey, cid, rev, 2 FROM outlines WHERE did = ?1"
      " UNION ALL SELECT rkey, cid, rev, CASE collection WHEN 'app.bulleted.mirror' THEN 3"
      " WHEN 'app.bulleted.comment' THEN 4 ELSE 5 END FROM kept_records WHERE did = ?1"
      " ORDER BY 4, 1");
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, did);
  std::vector<IndexedRecord> out;
  while (true) {
    auto row = (*stmt)->step();
    if (!row) return pass(row);
    if (!*row) return out;
    out.push_back(IndexedRecord{(*stmt)->text(0), (*stmt)->text(1), (*stmt)->text(2),
                                static_cast<Collection>((*stmt)->integer(3))});
  }
}

Result<std::optional<NoteRecord>> Reader::note_record(std::string_view did, std::string_view rkey) {
  auto json = query_value<std::string>(db_, "SELECT record FROM notes WHERE did = ?1 AND rkey = ?2",
                                       did, rkey);
  if (!json) return pass(json);
  if (!*json) return std::optional<NoteRecord>();
  auto note = parse_note_record(nlohmann::json::parse(**json, nullptr, false), did, rkey);
  if (!note)
    return fail(ErrorCode::kCorrupt,
                "the note record of " + std::string(rkey) + " is unreadable: " + note.error());
  return std::optional<NoteRecord>(std::move(*note));
}

Result<std::string> Reader::dump() {
  auto tx = Transaction::begin(db_, Transaction::Kind::kRead);
  if (!tx) return pass(tx);
  std::ostringstream out;
  auto nodes = db_.prepare(
      "SELECT did, rkey, grp, sort_key, cid, rev, parent_raw, sort_key_raw, text, note,"
      " completed, created_at, record, facets, record_bytes, completed_at, layout, display"
      " FROM nodes ORDER BY did, rkey");
  if (!nodes) return pass(nodes);
  while (true) {
    auto row = (*nodes)->step();
    if (!row) return pass(row);
    if (!*row) break;
    out << "node";
    for (int c = 0; c < 18; ++c) {
      out << '\t' << ((*nodes)->is_null(c) ? std::string("<null>") : (*nodes)->text(c));
    }
    out << '\n';
  }
  auto tombs = db_.prepare("SELECT did, rkey, rev FROM tombstones ORDER BY did, rkey");
  if (!tombs) return pass(tombs);
  while (true) {
    auto row = (*tombs)->step();
    if (!row) return pass(row);
    if (!*row) break;
    out << "tombstone\t" << (*tombs)->text(0) << '\t' << (*tombs)->text(1) << '\t'
        << (*tombs)->text(2) << '\n';
  }
  // Notes and the tombstones of records other than nodes, in the same form.
  for (const char* sql :
       {"SELECT 'note', did, rkey, rev, cid, text, record FROM notes ORDER BY did, rkey",
        "SELECT 'outline', did, rkey, rev, cid, coalesce(root_rkey, '<self>'), record FROM outlines"
        " ORDER BY did, rkey",
        "SELECT 'kept', did, collection, rkey, rev, cid, record FROM kept_records"
        " ORDER BY did, collection, rkey",
        "SELECT 'record_tombstone', did, collection, rkey, rev FROM record_tombstones"
        " ORDER BY did, collection, rkey"}) {
    auto rows = db_.prepare(sql);
    if (!rows) return pass(rows);
    while (true) {
      auto row = (*rows)->step();
      if (!row) return pass(row);
      if (!*row) break;
      out << (*rows)->text(0);
      for (int c = 1; c < (*rows)->columns(); ++c) out << '\t' << (*rows)->text(c);
      out << '\n';
    }
  }
  auto repos = db_.prepare("SELECT did, rev, status, sync_state, handle FROM repos ORDER BY did");
  if (!repos) return pass(repos);
  while (true) {
    auto row = (*repos)->step();
    if (!row) return pass(row);
    if (!*row) break;
    out << "repo";
    for (int c = 0; c < 5; ++c) {
      out << '\t' << ((*repos)->is_null(c) ? std::string("<null>") : (*repos)->text(c));
    }
    out << '\n';
  }
  return out.str();
}

}  // namespace bulleted::schema
