// Store: opening, the idempotent apply path, repo state and the dump.
#include "schema/store.hpp"

#include <chrono>
#include <map>
#include <sstream>

#include "schema/checkpointer.hpp"
#include "schema/enum_names.hpp"
#include "schema/group_upkeep.hpp"
#include "schema/migrations.hpp"
#include "schema/search_index.hpp"
#include "schema/sqlite.hpp"
#include "schema/store_records.hpp"
#include "schema/syntax.hpp"

namespace bulleted::schema {
namespace {

// The rev of a record's tombstone, if it was deleted.
Result<std::optional<std::string>> tombstone_rev(Database& db, std::string_view did,
                                                 std::string_view rkey) {
  return query_value<std::string>(db, "SELECT rev FROM tombstones WHERE did = ?1 AND rkey = ?2",
                                  did, rkey);
}

// What a row stands for beyond its record: for a mirror's row, the
// mirror's own record (JSON) and the original it names.
struct RowKind {
  std::optional<std::string_view> mirror_json;
  std::optional<std::string_view> mirror_of;
};

void bind_node(Statement& stmt, const RecordOp& op, const std::string& group,
               const std::string& json, const std::optional<std::string>& facets,
               const std::optional<std::string>& note, std::int64_t seq, const RowKind& kind);

// The text of the note record at a node's key, if the index holds one.
Result<std::optional<std::string>> note_text(Database& db, std::string_view did,
                                             std::string_view rkey) {
  return query_value<std::string>(db, "SELECT text FROM notes WHERE did = ?1 AND rkey = ?2", did,
                                  rkey);
}

// What one transaction's writes keep beside the rows: child counts and
// position blocks, the search index, and when the index took each version.
struct Upkeep {
  GroupUpkeep groups;
  SearchUpkeep search;
  std::int64_t now_ms;
};

// Where the op's record is filed now, if the index holds it. Read once and
// written by rowid: a write with RETURNING would collect its rows in a
// temporary table on every run.
// With the text and note it was indexed for search with.
struct StoredPlace {
  std::int64_t rowid = 0;
  std::string rev;
  std::string group;
  std::string sort_key;
  std::string text;
  std::optional<std::string> note;
  bool mirror = false;  // the row of an app.bulleted.mirror
};
Result<std::optional<StoredPlace>> stored_place(Database& db, std::string_view did,
                                                std::string_view rkey) {
  auto stmt = db.prepare(
      "SELECT rowid, rev, grp, sort_key, text, note, mirror_of IS NOT NULL FROM nodes"
      " WHERE did = ?1 AND rkey = ?2");
  if (!stmt) return pass(stmt);
  (*stmt)->bind_view(1, did).bind_view(2, rkey);
  auto row = (*stmt)->step();
  if (!row) return pass(row);
  if (!*row) return std::optional<StoredPlace>();
  return std::optional<StoredPlace>(
      StoredPlace{(*stmt)->integer(0), (*stmt)->text(1), (*stmt)->text(2), (*stmt)->text(3),
                  (*stmt)->text(4), (*stmt)->optional_text(5), (*stmt)->integer(6) != 0});
}

std::optional<std::string_view> view_of(const std::optional<std::string>& text) {
  return text ? std::optional<std::string_view>(*text) : std::nullopt;
}

// Writes the record unless its row holds the same or a newer rev; false
// when the op was stale. Where the node was and is goes to `upkeep`. A
// mirror's row (`kind`) is written the same way, from the node record its
// place makes (no text, no note); a node and a mirror at one key are one
// row: the node's, whatever their revs (a mirror never takes a node's row).
Result<bool> upsert_node(Database& db, const RecordOp& op, const std::string& group,
                         std::int64_t seq, Upkeep& upkeep, const RowKind& kind = {}) {
  const NodeRecord& record = *op.record;
  const bool mirror = kind.mirror_of.has_value();
  const std::string json = mirror ? std::string(*kind.mirror_json) : to_json_text(record);
  const std::optional<std::string> facets = served_facets(record);
  const SiblingKey now{std::string(record.effective_sort_key()), op.rkey};
  // The note it serves: its note record's (which may have come first),
  // else the one an earlier build wrote inside the record.
  auto note_record = mirror ? Result<std::optional<std::string>>() : note_text(db, op.did, op.rkey);
  if (!note_record) return pass(note_record);
  const std::optional<std::string>& note = *note_record ? *note_record : record.note;
  // A new record takes one statement.
  auto insert = [&]() -> Result<bool> {
    auto stmt = db.prepare(
        "INSERT INTO nodes (did, rkey, grp, sort_key, cid, rev, parent_raw, sort_key_raw, text,"
        " note, completed, created_at, record, change_seq, facets, record_bytes, indexed_at,"
        " completed_at, layout, display, mirror_of)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,"
        " ?19, ?20, ?21, ?22)"
        " ON CONFLICT (did, rkey) DO NOTHING");
    if (!stmt) return pass(stmt);
    bind_node(**stmt, op, group, json, facets, note, seq, kind);
    (*stmt)->bind(17, upkeep.now_ms);
    if (auto r = (*stmt)->run(); !r) return pass(r);
    if ((*stmt)->changes() == 0) return false;
    upkeep.groups.added(group, now);
    const std::int64_t rowid = sqlite3_last_insert_rowid(db.handle());
    if (auto r = upkeep.search.added(rowid, op.did, record.text, view_of(note)); !r) {
      return pass(r);
    }
    return true;
  };
  // A create is tried as an insert first; an update (or a create the index
  // already holds) reads where the record was: newer revs only.
  if (op.kind != OpKind::kUpdate) {
    auto inserted = insert();
    if (!inserted || *inserted) return inserted;
  }
  auto was = stored_place(db, op.did, op.rkey);
  if (!was) return pass(was);
  if (!*was) return insert();                         // an update of a record the index never had
  if (mirror && !(*was)->mirror) return false;        // a node's key
  const bool takes_over = !mirror && (*was)->mirror;  // a node where a mirror was
  if ((*was)->rev >= op.rev && !takes_over) return false;
  // The row found above, by its rowid: no second search of (did, rkey).
  auto stmt = db.prepare(
      "UPDATE nodes SET grp = ?3, sort_key = ?4, cid = ?5, rev = ?6, parent_raw = ?7,"
      " sort_key_raw = ?8, text = ?9, note = ?10, completed = ?11, created_at = ?12,"
      " record = ?13, change_seq = ?14, facets = ?15, record_bytes = ?16, indexed_at = ?17,"
      " completed_at = ?19, layout = ?20, display = ?21, mirror_of = ?22"
      " WHERE rowid = ?18");
  if (!stmt) return pass(stmt);
  bind_node(**stmt, op, group, json, facets, note, seq, kind);
  (*stmt)->bind(17, upkeep.now_ms).bind(18, (*was)->rowid);
  if (auto r = (*stmt)->run(); !r) return pass(r);
  // The search index changes with the words only (a move keeps them).
  if ((*was)->text != record.text || (*was)->note != note) {
    if (auto r = upkeep.search.removed((*was)->rowid, op.did, (*was)->text, view_of((*was)->note));
        !r) {
      return pass(r);
    }
    if (auto r = upkeep.search.added((*was)->rowid, op.did, record.text, view_of(note)); !r) {
      return pass(r);
    }
  }
  if ((*was)->group == group && (*was)->sort_key == now.sort_key) return true;
  upkeep.groups.removed((*was)->group, SiblingKey{std::move((*was)->sort_key), op.rkey});
  upkeep.groups.added(group, now);
  return true;
}

// The columns of a node's row, as upsert_node's statements number them.
void bind_node(Statement& stmt, const RecordOp& op, const std::string& group,
               const std::string& json, const std::optional<std::string>& facets,
               const std::optional<std::string>& note, std::int64_t seq, const RowKind& kind) {
  const NodeRecord& record = *op.record;
  stmt.bind_view(1, op.did)
      .bind_view(2, op.rkey)
      .bind_view(3, group)
      .bind_view(4, record.effective_sort_key())
      .bind_view(5, op.cid)
      .bind_view(6, op.rev)
      .bind_view(7, record.parent)
      .bind_view(8, record.sort_key)
      .bind_view(9, record.text)
      .bind_view(10, note)
      .bind(11, record.completed)
      .bind_view(12, record.created_at)
      .bind_view(13, json)
      .bind(14, seq)
      .bind_view(15, facets)
      .bind(16, static_cast<std::int64_t>(json.size()))
      .bind_view(19, record.completed_at)
      .bind_view(20, record.layout)
      .bind_view(21, record.display);
  if (kind.mirror_of) {
    stmt.bind_view(22, *kind.mirror_of);
  } else {
    stmt.bind_null(22);
  }
}

Result<void> clear_tombstone(Database& db, const RecordOp& op) {
  auto clear = db.prepare("DELETE FROM tombstones WHERE did = ?1 AND rkey = ?2");
  if (!clear) return pass(clear);
  (*clear)->bind(1, op.did).bind(2, op.rkey);
  return (*clear)->run();
}

// Deletes the record's row and writes its tombstone unless the row holds the
// same or a newer rev; false when the op was stale. The caller has checked
// the tombstone.
Result<bool> delete_node(Database& db, const RecordOp& op, std::int64_t seq, Upkeep& upkeep) {
  auto was = stored_place(db, op.did, op.rkey);
  if (!was) return pass(was);
  // A node's delete leaves a mirror at its key, and a mirror's a node.
  const bool mirror = op.collection == Collection::kMirror;
  if (*was && (*was)->mirror != mirror) return false;
  if (*was) {
    if ((*was)->rev >= op.rev) return false;  // a newer row
    auto remove = db.prepare("DELETE FROM nodes WHERE rowid = ?1");
    if (!remove) return pass(remove);
    (*remove)->bind(1, (*was)->rowid);
    if (auto r = (*remove)->run(); !r) return pass(r);
    if (auto r = upkeep.search.removed((*was)->rowid, op.did, (*was)->text, view_of((*was)->note));
        !r) {
      return pass(r);
    }
    upkeep.groups.removed((*was)->group, SiblingKey{std::move((*was)->sort_key), op.rkey});
  }
  auto tomb = db.prepare(
      "INSERT INTO tombstones (did, rkey, rev, change_seq) VALUES (?1, ?2, ?3, ?4)"
      " ON CONFLICT (did, rkey) DO UPDATE SET rev = excluded.rev, change_seq = "
      "excluded.change_seq");
  if (!tomb) return pass(tomb);
  (*tomb)->bind(1, op.did).bind(2, op.rkey).bind(3, op.rev).bind(4, seq);
  if (auto r = (*tomb)->run(); !r) return pass(r);
  return true;
}

// The note a node at `did`/`rkey` serves now that its note record is
// `note` (none: deleted) written into its row, with the search index, when
// the index holds the node and the note it serves changes; false when
// nothing changed. Without a note record, a node serves the note an earlier
// build wrote inside its record.
Result<bool> attach_note(Database& db, std::string_view did, std::string_view rkey,
                         const std::optional<std::string>& note, std::int64_t seq, Upkeep& upkeep) {
  auto was = stored_place(db, did, rkey);
  if (!was) return pass(was);
  if (!*was) return false;           // the node comes later, and takes its note then
  if ((*was)->mirror) return false;  // a mirror has no note
  std::optional<std::string> served = note;
  if (!served) {
    auto json =
        query_value<std::string>(db, "SELECT record FROM nodes WHERE rowid = ?1", (*was)->rowid);
    if (!json) return pass(json);
    if (*json) {
      auto record = parse_node_record(nlohmann::json::parse(**json, nullptr, false));
      if (record) served = std::move(record->note);
    }
  }
  if (served == (*was)->note) return false;
  auto stmt =
      db.prepare("UPDATE nodes SET note = ?1, change_seq = ?2, indexed_at = ?3 WHERE rowid = ?4");
  if (!stmt) return pass(stmt);
  (*stmt)->bind_view(1, served).bind(2, seq).bind(3, upkeep.now_ms).bind(4, (*was)->rowid);
  if (auto r = (*stmt)->run(); !r) return pass(r);
  if (auto r = upkeep.search.removed((*was)->rowid, did, (*was)->text, view_of((*was)->note)); !r) {
    return pass(r);
  }
  if (auto r = upkeep.search.added((*was)->rowid, did, (*was)->text, view_of(served)); !r) {
    return pass(r);
  }
  return true;
}

// Writes a note record (or, for a delete, removes it and writes its
// tombstone) unless the index holds the same or a newer rev of it; false
// when the op was stale. The caller has checked the tombstone. `node` is
// set when the node it belongs to changed with it (its note is served).
Result<bool> apply_note(Database& db, const RecordOp& op, std::int64_t seq, Upkeep& upkeep,
                        bool& node) {
  auto was = query_value<std::string>(db, "SELECT rev FROM notes WHERE did = ?1 AND rkey = ?2",
                                      op.did, op.rkey);
  if (!was) return pass(was);
  if (*was && **was >= op.rev) return false;
  std::optional<std::string> note;
  if (op.writes()) {
    const std::string json = to_json_text(*op.note);
    auto stmt = db.prepare(
        "INSERT INTO notes (did, rkey, rev, cid, text, record) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
        " ON CONFLICT (did, rkey) DO UPDATE SET rev = excluded.rev, cid = excluded.cid,"
        " text = excluded.text, record = excluded.record");
    if (!stmt) return pass(stmt);
    (*stmt)
        ->bind_view(1, op.did)
        .bind_view(2, op.rkey)
        .bind_view(3, op.rev)
        .bind_view(4, op.cid)
        .bind_view(5, op.note->text)
        .bind_view(6, json);
    if (auto r = (*stmt)->run(); !r) return pass(r);
    if (auto r = clear_record_tombstone(db, op); !r) return pass(r);
    note = op.note->text;
  } else {
    auto remove = db.prepare("DELETE FROM notes WHERE did = ?1 AND rkey = ?2");
    if (!remove) return pass(remove);
    (*remove)->bind_view(1, op.did).bind_view(2, op.rkey);
    if (auto r = (*remove)->run(); !r) return pass(r);
    if (auto r = write_record_tombstone(db, op); !r) return pass(r);
  }
  auto attached = attach_note(db, op.did, op.rkey, note, seq, upkeep);
  if (!attached) return pass(attached);
  node = *attached;
  return true;
}

// The row of a mirror (app.bulleted.mirror) in its parent's sibling group:
// filed and ordered like a node (parent, sortKey), without text, standing
// for its original. Written or removed with the mirror record (whose
// fields parse_kept_record checked); true when the row changed.
Result<bool> apply_mirror_row(Database& db, const RecordOp& op, std::int64_t seq, Upkeep& upkeep) {
  if (!op.writes()) return delete_node(db, op, seq, upkeep);
  const nlohmann::json& mirror = *op.kept;
  nlohmann::json placed = {{"text", ""}, {"createdAt", mirror.value("createdAt", "")}};
  for (const char* field : {"parent", "sortKey"}) {
    if (auto value = mirror.find(field); value != mirror.end()) placed[field] = *value;
  }
  auto record = parse_node_record(placed);
  auto original = mirror.find("original");
  if (!record || original == mirror.end() || !original->is_string()) return false;
  RecordOp row = op;
  row.record = std::move(*record);
  const std::string json = mirror.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  auto applied = upsert_node(db, row, sibling_group(op.did, row.record->parent), seq, upkeep,
                             RowKind{json, original->get_ref<const std::string&>()});
  if (!applied || !*applied) return applied;
  if (auto r = clear_tombstone(db, op); !r) return pass(r);
  return true;
}

Result<void> write_status(Database& db, std::string_view did, RepoStatus status,
                          SearchUpkeep& search) {
  auto stmt = db.prepare(
      "INSERT INTO repos (did, status) VALUES (?1, ?2)"
      " ON CONFLICT (did) DO UPDATE SET status = excluded.status");
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, did).bind(2, to_string(status));
  if (auto r = (*stmt)->run(); !r) return r;
  if (status != RepoStatus::kDeleted) return {};
  if (auto r = search.repo_removed(did); !r) return r;
  int removed = -1;  // the nodes the first statement takes away
  for (const char* sql :
       {"DELETE FROM nodes WHERE did = ?1", "DELETE FROM tombstones WHERE did = ?1",
        "DELETE FROM notes WHERE did = ?1", "DELETE FROM record_tombstones WHERE did = ?1",
        "DELETE FROM outlines WHERE did = ?1", "DELETE FROM kept_records WHERE did = ?1",
        "UPDATE repos SET rev = NULL WHERE did = ?1"}) {
    auto purge = db.prepare(sql);
    if (!purge) return pass(purge);
    (*purge)->bind(1, did);
    if (auto r = (*purge)->run(); !r) return r;
    if (removed < 0) removed = (*purge)->changes();
  }
  if (auto r = add_to_node_total(db, -removed); !r) return r;
  return forget_repo_groups(db, did);
}

Result<void> write_handle(Database& db, std::string_view did, std::string_view handle) {
  auto stmt = db.prepare(
      "INSERT INTO repos (did, handle) VALUES (?1, ?2)"
      " ON CONFLICT (did) DO UPDATE SET handle = excluded.handle");
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, did).bind(2, handle);
  return (*stmt)->run();
}

Result<std::int64_t> read_counter(Database& db) {
  auto value =
      query_value<std::int64_t>(db, "SELECT value FROM counters WHERE name = 'change_seq'");
  if (!value) return std::unexpected(value.error());
  return value->value_or(0);
}

Result<void> write_counter(Database& db, std::int64_t value) {
  auto stmt = db.prepare("UPDATE counters SET value = ?1 WHERE name = 'change_seq'");
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, value);
  return (*stmt)->run();
}

}  // namespace

Store::Store(std::unique_ptr<Database> db, std::shared_ptr<Checkpointer> checkpointer,
             int busy_timeout_ms)
    : checkpointer_(std::move(checkpointer)),
      db_(std::move(db)),
      reader_(*db_),
      busy_timeout_ms_(busy_timeout_ms) {
  // What apply() wrote is told once the outermost transaction has
  // committed (apply may run inside a caller's write transaction).
  db_->on_transaction_end([this](bool committed) {
    CommitNotice notice;
    notice.repos.assign(pending_.begin(), pending_.end());
    notice.from = pending_from_.value_or(pending_to_);
    notice.to = pending_to_;
    pending_.clear();
    pending_from_.reset();
    if (committed && on_commit_ && !notice.repos.empty()) on_commit_(notice);
  });
}

bool Store::in_write_transaction() const {
  // SQLite may have ended it itself (a full disk): then it is not open.
  return db_->in_write_transaction() && db_->in_transaction();
}

void Store::set_commit_listener(std::function<void(const CommitNotice&)> listener) {
  on_commit_ = std::move(listener);
}
Store::~Store() = default;

int Store::schema_version() { return latest_schema_version(); }

Result<std::unique_ptr<Store>> Store::open(const std::string& path, const StoreOptions& options) {
  auto db = Database::open(path, options.busy_timeout_ms);
  if (!db) return std::unexpected(db.error());
  if (auto r = register_group_upkeep(**db); !r) return std::unexpected(r.error());
  if (auto r = migrate(**db, options.on_migration); !r) return std::unexpected(r.error());
  std::shared_ptr<Checkpointer> checkpointer;
  if (options.background_checkpoints) {
    checkpointer = Checkpointer::for_path(path);
    checkpointer->watch((*db)->handle());
  }
  auto store = std::unique_ptr<Store>(
      new Store(std::move(*db), std::move(checkpointer), options.busy_timeout_ms));
  if (options.on_commit) store->set_commit_listener(options.on_commit);
  return store;
}

Result<Transaction> Store::begin_write() {
  // A write that holds no lock yet lets a pending WAL restart go first.
  if (checkpointer_ && !db_->in_transaction()) checkpointer_->before_write();
  return Transaction::begin(*db_, Transaction::Kind::kWrite);
}

Result<ApplyOutcome> Store::apply(const ApplyBatch& batch) {
  auto tx = begin_write();
  if (!tx) return pass(tx);
  auto counter = read_counter(*db_);
  if (!counter) return pass(counter);
  std::int64_t seq = *counter;
  ApplyOutcome outcome;
  std::map<std::string, bool, std::less<>> deleted_repo;  // did -> status is deleted
  const std::int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
  Upkeep upkeep{GroupUpkeep(*db_), SearchUpkeep(*db_), now_ms};
  for (const RecordOp& op : batch.ops) {
    auto known = deleted_repo.find(op.did);
    if (known == deleted_repo.end()) {
      auto state = reader_.repo(op.did);
      if (!state) return pass(state);
      known =
          deleted_repo.emplace(op.did, *state && (*state)->status == RepoStatus::kDeleted).first;
    }
    if (known->second) {
      ++outcome.ignored;
      continue;
    }
    if (op.collection != Collection::kNode) {
      auto tombstone = record_tombstone_rev(*db_, op);
      if (!tombstone) return pass(tombstone);
      bool node = false;
      auto applied = *tombstone && op.rev <= **tombstone ? Result<bool>(false)
                     : op.collection == Collection::kNote
                         ? apply_note(*db_, op, seq + 1, upkeep, node)
                     : op.collection == Collection::kOutline ? apply_outline(*db_, op)
                                                             : apply_kept(*db_, op);
      if (applied && *applied && op.collection == Collection::kMirror) {
        auto row = apply_mirror_row(*db_, op, seq + 1, upkeep);
        if (!row) return pass(row);
        node = *row;
      }
      if (!applied) return pass(applied);
      if (!*applied) {
        ++outcome.stale;
        continue;
      }
      ++outcome.applied;
      if (node) pending_[op.did] = ++seq;
      continue;
    }
    // An op applies only when its rev is newer than both the record's
    // tombstone and its row (at most one of them exists after any apply).
    auto tombstone = tombstone_rev(*db_, op.did, op.rkey);
    if (!tombstone) return pass(tombstone);
    if (*tombstone && op.rev <= **tombstone) {
      ++outcome.stale;
      continue;
    }
    const bool deleting = op.kind == OpKind::kDelete || !op.record;
    auto applied =
        deleting ? delete_node(*db_, op, seq + 1, upkeep)
                 : upsert_node(*db_, op, sibling_group(op.did, op.record->parent), seq + 1, upkeep);
    if (!applied) return pass(applied);
    if (!*applied) {
      ++outcome.stale;
      continue;
    }
    if (!deleting && *tombstone) {
      if (auto r = clear_tombstone(*db_, op); !r) return pass(r);
    }
    ++seq;
    ++outcome.applied;
    pending_[op.did] = seq;
  }
  if (auto r = upkeep.groups.flush(); !r) return pass(r);
  // Only the newest rev of each repo matters.
  std::map<std::string_view, std::string_view> newest_revs;
  for (const auto& [did, rev] : batch.repo_revs) {
    auto [it, inserted] = newest_revs.emplace(did, rev);
    if (!inserted && it->second < rev) it->second = rev;
  }
  for (const auto& [did, rev] : newest_revs) {
    auto stmt = db_->prepare(
        "INSERT INTO repos (did, rev) VALUES (?1, ?2) ON CONFLICT (did) DO UPDATE"
        " SET rev = excluded.rev WHERE repos.rev IS NULL OR excluded.rev > repos.rev");
    if (!stmt) return pass(stmt);
    (*stmt)->bind(1, did).bind(2, rev);
    if (auto r = (*stmt)->run(); !r) return pass(r);
  }
  for (const auto& [did, status] : batch.statuses) {
    if (auto r = write_status(*db_, did, status, upkeep.search); !r) return pass(r);
    pending_.try_emplace(did, 0);
  }
  if (auto r = upkeep.search.flush(); !r) return pass(r);
  for (const auto& [did, handle] : batch.handles) {
    if (auto r = write_handle(*db_, did, handle); !r) return pass(r);
  }
  if (batch.cursor) {
    auto stmt = db_->prepare(
        "INSERT INTO cursors (source, seq) VALUES (?1, ?2)"
        " ON CONFLICT (source) DO UPDATE SET seq = excluded.seq");
    if (!stmt) return pass(stmt);
    (*stmt)->bind(1, batch.cursor->first).bind(2, batch.cursor->second);
    if (auto r = (*stmt)->run(); !r) return pass(r);
  }
  if (batch.import_done) {
    auto stmt = db_->prepare("UPDATE import_jobs SET done = ?2 WHERE id = ?1");
    if (!stmt) return pass(stmt);
    (*stmt)->bind(1, batch.import_done->first).bind(2, batch.import_done->second);
    if (auto r = (*stmt)->run(); !r) return pass(r);
  }
  if (seq != *counter) {
    if (auto r = write_counter(*db_, seq); !r) return pass(r);
  }
  if (!pending_from_) pending_from_ = *counter;
  pending_to_ = seq;
  if (auto r = tx->commit(); !r) return pass(r);
  return outcome;
}

Result<void> Store::set_repo_status(std::string_view did, RepoStatus status) {
  auto tx = begin_write();
  if (!tx) return pass(tx);
  SearchUpkeep search(*db_);
  if (auto r = write_status(*db_, did, status, search); !r) return r;
  if (auto r = search.flush(); !r) return r;
  auto counter = read_counter(*db_);
  if (!counter) return pass(counter);
  pending_.try_emplace(std::string(did), 0);
  if (!pending_from_) pending_from_ = *counter;
  pending_to_ = *counter;
  return tx->commit();
}

Result<void> Store::set_handle(std::string_view did, std::string_view handle) {
  return write_handle(*db_, did, handle);
}

CheckpointCounts Store::checkpoints() const {
  return checkpointer_ ? checkpointer_->counts() : CheckpointCounts{};
}

Result<void> Store::check_writable() {
  set_busy_timeout(db_->handle(), 0);
  auto tx = Transaction::begin(*db_, Transaction::Kind::kWrite);
  // Exactly SQLITE_BUSY: another connection holds the write lock. Its
  // extended forms (a stale snapshot of this connection, recovery) are
  // failures like any other.
  const int code = sqlite3_extended_errcode(db_->handle());
  set_busy_timeout(db_->handle(), busy_timeout_ms_);
  if (!tx) {
    if (code == SQLITE_BUSY) return {};
    return pass(tx);
  }
  return {};  // rolled back by the Transaction
}

}  // namespace bulleted::schema
