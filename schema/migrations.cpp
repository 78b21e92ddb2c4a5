#include "schema/migrations.hpp"

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "schema/node_record.hpp"
#include "schema/positions.hpp"
#include "schema/search_index.hpp"
#include "schema/sqlite.hpp"

namespace bulleted::schema {
namespace {

// Each entry moves the schema from version i to i + 1. Never edit a shipped
// entry: add a new one.
constexpr const char* kMigrations[] = {
    // 1: repos, nodes, tombstones, cursors.
    R"sql(
CREATE TABLE repos (
  did TEXT PRIMARY KEY,
  rev TEXT,
  status TEXT NOT NULL DEFAULT 'active',
  sync_state TEXT NOT NULL DEFAULT 'synced',
  handle TEXT
) WITHOUT ROWID;

-- One row per live node. "grp" is the sibling group: at://<did> (top level),
-- the parent node's AT-URI, or at://<did>#unattached. "sort_key" is the
-- effective key: the canonical sortKey, or '~' (after every valid key).
CREATE TABLE nodes (
  did TEXT NOT NULL,
  rkey TEXT NOT NULL,
  grp TEXT NOT NULL,
  sort_key TEXT NOT NULL,
  cid TEXT NOT NULL,
  rev TEXT NOT NULL,
  parent_raw TEXT,
  sort_key_raw TEXT,
  text TEXT NOT NULL,
  note TEXT,
  completed INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  record TEXT NOT NULL,
  change_seq INTEGER NOT NULL,
  UNIQUE (did, rkey)
);
CREATE INDEX nodes_children ON nodes (grp, sort_key, rkey);
CREATE INDEX nodes_changes ON nodes (did, change_seq);

-- The rev of every deleted record, so that a late or replayed older op never
-- brings it back.
CREATE TABLE tombstones (
  did TEXT NOT NULL,
  rkey TEXT NOT NULL,
  rev TEXT NOT NULL,
  change_seq INTEGER NOT NULL,
  PRIMARY KEY (did, rkey)
) WITHOUT ROWID;
CREATE INDEX tombstones_changes ON tombstones (did, change_seq);

-- Firehose cursors by source, committed with the ops they cover.
CREATE TABLE cursors (
  source TEXT PRIMARY KEY,
  seq INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE counters (
  name TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO counters (name, value) VALUES ('change_seq', 0);
)sql",
    // 2: bearer tokens of local mode, stored as SHA-256 digests.
    R"sql(
CREATE TABLE tokens (
  hash TEXT PRIMARY KEY,
  did TEXT NOT NULL,
  created_at TEXT NOT NULL
) WITHOUT ROWID;
)sql",
    // 3: PDS sessions of pds mode: the app view's token as a SHA-256 digest,
    // the PDS's access and refresh tokens sealed (appview/secret_box).
    R"sql(
CREATE TABLE sessions (
  hash TEXT PRIMARY KEY,
  did TEXT NOT NULL,
  handle TEXT,
  pds_url TEXT NOT NULL,
  access_sealed TEXT NOT NULL,
  refresh_sealed TEXT NOT NULL,
  created_at TEXT NOT NULL,
  refreshed_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX sessions_did ON sessions (did);
)sql",
    // 4: import jobs and their stored plans (one row per node, in order:
    // parents before children); `done` counts plan rows written.
    R"sql(
CREATE TABLE import_jobs (
  id TEXT PRIMARY KEY,
  did TEXT NOT NULL,
  root_rkey TEXT NOT NULL,
  format TEXT NOT NULL,
  state TEXT NOT NULL,
  total INTEGER NOT NULL,
  done INTEGER NOT NULL DEFAULT 0,
  resume_at TEXT,
  errors TEXT NOT NULL DEFAULT '[]',
  session TEXT,
  created_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE import_plan (
  job_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  rkey TEXT NOT NULL,
  record_json TEXT NOT NULL,
  PRIMARY KEY (job_id, seq)
) WITHOUT ROWID;
)sql",
    // 5: OAuth (pds mode): a session's grant (DPoP key, authorization server,
    // nonces) sealed beside its tokens (NULL: an app-password session);
    // sign-ins under way, by their state, sealed; the app view's own keys.
    R"sql(
ALTER TABLE sessions ADD COLUMN oauth_sealed TEXT;
CREATE TABLE oauth_requests (
  state TEXT PRIMARY KEY,
  sealed TEXT NOT NULL,
  created_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE service_keys (
  name TEXT PRIMARY KEY,
  sealed TEXT NOT NULL,
  created_at TEXT NOT NULL
) WITHOUT ROWID;
)sql",
    // 6: child counts kept with the rows: the number of nodes in each
    // sibling group, kept by triggers in the transaction of every insert,
    // delete and move (apply, resync, repo deletion alike), so that no read
    // counts children. An empty group has no row.
    R"sql(
CREATE TABLE group_counts (
  grp TEXT PRIMARY KEY,
  n INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO group_counts (grp, n) SELECT grp, COUNT(*) FROM nodes GROUP BY grp;
CREATE TRIGGER nodes_count_insert AFTER INSERT ON nodes BEGIN
  INSERT INTO group_counts (grp, n) VALUES (NEW.grp, 1)
    ON CONFLICT (grp) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER nodes_count_delete AFTER DELETE ON nodes BEGIN
  UPDATE group_counts SET n = n - 1 WHERE grp = OLD.grp;
  DELETE FROM group_counts WHERE grp = OLD.grp AND n <= 0;
END;
CREATE TRIGGER nodes_count_move AFTER UPDATE OF grp ON nodes WHEN OLD.grp <> NEW.grp BEGIN
  UPDATE group_counts SET n = n - 1 WHERE grp = OLD.grp;
  DELETE FROM group_counts WHERE grp = OLD.grp AND n <= 0;
  INSERT INTO group_counts (grp, n) VALUES (NEW.grp, 1)
    ON CONFLICT (grp) DO UPDATE SET n = n + 1;
END;
)sql",
    // 7: positions in large sibling groups (schema/positions.hpp): counted
    // blocks at three levels, and beside each count whether its group has
    // them. The writes keep them, and from this version
    // the child counts too, in their own transaction, once per group for a
    // whole batch (schema/group_upkeep.hpp): schema 6's triggers, which did
    // it once per row, go. The blocks of the groups already large are built
    // after this SQL (build_missing_blocks, with progress).
    R"sql(
CREATE TABLE order_blocks (
  grp TEXT NOT NULL,
  lvl INTEGER NOT NULL,
  lo_key TEXT NOT NULL,
  lo_rkey TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (grp, lvl, lo_key, lo_rkey)
) WITHOUT ROWID;
ALTER TABLE group_counts ADD COLUMN blocked INTEGER NOT NULL DEFAULT 0;
DROP TRIGGER IF EXISTS nodes_count_insert;
DROP TRIGGER IF EXISTS nodes_count_delete;
DROP TRIGGER IF EXISTS nodes_count_move;
)sql",
    // 8: what pages, windows and subtrees need of a record, kept beside it
    // so that they never read the record: the facets it serves (as JSON,
    // record_facets; NULL: none) and its length. The facets of the rows
    // already indexed are written after this SQL (fill_served_facets).
    R"sql(
ALTER TABLE nodes ADD COLUMN facets TEXT;
ALTER TABLE nodes ADD COLUMN record_bytes INTEGER NOT NULL DEFAULT 0;
UPDATE nodes SET record_bytes = length(CAST(record AS BLOB));
)sql",
    // 9: the number of nodes, kept with every write, so that health and
    // metrics read one row instead of counting a million.
    R"sql(
CREATE TABLE IF NOT EXISTS index_totals (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  nodes INTEGER NOT NULL
);
INSERT OR REPLACE INTO index_totals (id, nodes) SELECT 1, COUNT(*) FROM nodes;
)sql",
    // 10: the plans of imports that are done are dropped (from now on, in the
    // transaction that says a job is done): nothing reads them again, and
    // they were a quarter of a file after a large import. The rows go in C++
    // (drop_finished_plans), job by job, with progress.
    R"sql(
-- Job by job, in C++ (drop_finished_plans).
)sql",
    // 11: what a restart resumes of a repo's sync (firehose/repo_sync.hpp):
    // the rounds of failed fetches and when it is to be tried again.
    R"sql(
ALTER TABLE repos ADD COLUMN sync_failed_rounds INTEGER NOT NULL DEFAULT 0;
ALTER TABLE repos ADD COLUMN sync_retry_at INTEGER;
)sql",
    // 12: search (schema/search_index.hpp): the full-text index of every
    // node's words and tags, each repo's code, the tag counts, and when the
    // index took each node's current version (NULL for rows taken before).
    // The rows already indexed are searchable after this SQL
    // (build_search_index, with progress).
    "ALTER TABLE nodes ADD COLUMN indexed_at INTEGER;"
    "CREATE VIRTUAL TABLE search_fts USING fts5(text, note, tags, content = '',"
    " columnsize = 0, " BULLETED_SEARCH_TOKENIZE
    ");"
    R"sql(
CREATE TABLE search_codes (
  did TEXT PRIMARY KEY,
  code INTEGER NOT NULL UNIQUE
) WITHOUT ROWID;
CREATE TABLE search_tags (
  did TEXT NOT NULL,
  tag TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (did, tag)
) WITHOUT ROWID;
CREATE INDEX search_tags_used ON search_tags (did, n DESC, tag);
)sql",
    // 13: the search index's tokens, in order, as a table (FTS5's own view
    // of the index; it holds no rows): a search names the tokens a word's
    // prefix starts (schema/search_index.hpp, PrefixTokens).
    "CREATE VIRTUAL TABLE search_terms USING fts5vocab(search_fts, instance);",
    // 14: the published record's fields a node serves (DESIGN.md section
    // 12): when it was completed (NULL: not completed, or completed by an
    // earlier build's record, which serves its createdAt), its layout and
    // display (open sets, as written). Rows of earlier builds have none.
    "ALTER TABLE nodes ADD COLUMN completed_at TEXT;"
    "ALTER TABLE nodes ADD COLUMN layout TEXT;"
    "ALTER TABLE nodes ADD COLUMN display TEXT;",
    // 15: notes as records of their own (app.bulleted.note, at their node's
    // key), each with its rev; the tombstones of records other than nodes
    // (by collection); and which collections each repo was read for (1:
    // nodes, 2: notes, 4: outline records, 8, 16, 32: mirrors, comments and
    // comment policies): a repo indexed by an earlier build was read for its
    // nodes alone, and a network consumer reads it again for the rest. The
    // outline records (app.bulleted.outline), by the node whose subtree each
    // describes (none: the whole forest); the family's other records as
    // they came (kept_records). The
    // nodes keep their note column: the note they serve (the note record's
    // text, else an earlier build's inline note). And who runs each import
    // job, until when: one process at a time (the server's runner and the
    // `import` command see the same jobs). A mirror (app.bulleted.mirror) is
    // a row among the nodes of its parent's sibling group: mirror_of names
    // its original (NULL: the row is a node).
    R"sql(
CREATE TABLE notes (
  did TEXT NOT NULL,
  rkey TEXT NOT NULL,
  rev TEXT NOT NULL,
  cid TEXT NOT NULL,
  text TEXT NOT NULL,
  record TEXT NOT NULL,
  PRIMARY KEY (did, rkey)
) WITHOUT ROWID;
CREATE TABLE record_tombstones (
  did TEXT NOT NULL,
  collection TEXT NOT NULL,
  rkey TEXT NOT NULL,
  rev TEXT NOT NULL,
  PRIMARY KEY (did, collection, rkey)
) WITHOUT ROWID;
CREATE TABLE outlines (
  did TEXT NOT NULL,
  rkey TEXT NOT NULL,
  rev TEXT NOT NULL,
  cid TEXT NOT NULL,
  root_rkey TEXT,
  record TEXT NOT NULL,
  PRIMARY KEY (did, rkey)
) WITHOUT ROWID;
CREATE INDEX outlines_by_root ON outlines (did, root_rkey);
CREATE TABLE kept_records (
  did TEXT NOT NULL,
  collection TEXT NOT NULL,
  rkey TEXT NOT NULL,
  rev TEXT NOT NULL,
  cid TEXT NOT NULL,
  record TEXT NOT NULL,
  PRIMARY KEY (did, collection, rkey)
) WITHOUT ROWID;
ALTER TABLE repos ADD COLUMN collections_read INTEGER NOT NULL DEFAULT 63;
UPDATE repos SET collections_read = 1;
ALTER TABLE import_jobs ADD COLUMN runner TEXT;
ALTER TABLE import_jobs ADD COLUMN lease_until INTEGER NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN mirror_of TEXT;
)sql",
};

// What each step adds, for progress reports.
constexpr const char* kStepNames[] = {
    "the index",
    "bearer tokens",
    "PDS sessions",
    "import jobs",
    "OAuth sessions and keys",
    "child counts of every sibling group",
    "counted blocks of large sibling groups",
    "served facets and lengths of the records",
    "the kept number of nodes",
    "the plans of finished imports dropped",
    "the failed rounds and next try of each repo's sync",
    "the search index of every node's words and tags",
    "the search index's list of tokens",
    "completion times, layouts and displays of the nodes",
    "notes and outline records, and who runs each import",
};
static_assert(std::size(kStepNames) == std::size(kMigrations));

constexpr int kLatest = static_cast<int>(std::size(kMigrations));
constexpr int kBlocksVersion = 7;
constexpr int kServedFacetsVersion = 8;
constexpr int kFinishedPlansVersion = 10;
constexpr int kSearchVersion = 12;

// Schema 10's step: the plan rows of every job that is done, deleted job by
// job; `counted` hears how many rows are gone of how many.
Result<void> drop_finished_plans(Database& db,
                                 const std::function<void(std::int64_t, std::int64_t)>& counted) {
  std::vector<std::pair<std::string, std::int64_t>> jobs;
  {
    auto find = db.prepare(
        "SELECT j.id, (SELECT COUNT(*) FROM import_plan p WHERE p.job_id = j.id)"
        " FROM import_jobs j WHERE j.state = 'done'");
    if (!find) return std::unexpected(find.error());
    while (true) {
      auto row = (*find)->step();
      if (!row) return std::unexpected(row.error());
      if (!*row) break;
      if ((*find)->integer(1) > 0) jobs.emplace_back((*find)->text(0), (*find)->integer(1));
    }
  }
  std::int64_t total = 0;
  for (const auto& [id, rows] : jobs) total += rows;
  auto drop = db.prepare("DELETE FROM import_plan WHERE job_id = ?1");
  if (!drop) return std::unexpected(drop.error());
  std::int64_t done = 0;
  for (const auto& [id, rows] : jobs) {
    (*drop)->reset();
    (*drop)->bind(1, id);
    if (auto r = (*drop)->run(); !r) return r;
    done += rows;
    counted(done, total);
  }
  return {};
}

// Schema 8's facets column for the rows indexed before it. Only records that
// name facets are read (most name none), by rowid, each written with what
// record_facets serves of it; `counted` hears how many of them are done.
Result<void> fill_served_facets(Database& db,
                                const std::function<void(std::int64_t, std::int64_t)>& counted) {
  std::vector<std::int64_t> rowids;
  {
    auto find = db.prepare("SELECT rowid FROM nodes WHERE instr(record, '\"facets\"') > 0");
    if (!find) return std::unexpected(find.error());
    while (true) {
      auto row = (*find)->step();
      if (!row) return std::unexpected(row.error());
      if (!*row) break;
      rowids.push_back((*find)->integer(0));
    }
  }
  auto read = db.prepare("SELECT text, record FROM nodes WHERE rowid = ?1");
  if (!read) return std::unexpected(read.error());
  auto write = db.prepare("UPDATE nodes SET facets = ?1 WHERE rowid = ?2");
  if (!write) return std::unexpected(write.error());
  const auto total = static_cast<std::int64_t>(rowids.size());
  for (std::int64_t done = 0; done < total; ++done) {
    (*read)->reset();
    (*read)->bind(1, rowids[static_cast<std::size_t>(done)]);
    auto row = (*read)->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) continue;
    const auto facets = served_facets((*read)->text_view(0), (*read)->text_view(1));
    (*write)->reset();
    (*write)->bind_view(1, facets).bind(2, rowids[static_cast<std::size_t>(done)]);
    if (auto r = (*write)->run(); !r) return r;
    counted(done + 1, total);
  }
  return {};
}

// Reports a step's progress at most every two seconds: from SQLite's
// progress handler while one statement runs, and from counted work.
struct Heartbeat {
  std::function<void()> report;
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();

  void maybe_report() {
    const auto now = std::chrono::steady_clock::now();
    if (now - last < std::chrono::seconds(2)) return;
    last = now;
    report();
  }
  static int tick(void* self) {
    static_cast<Heartbeat*>(self)->maybe_report();
    return 0;  // never interrupts
  }
};

Result<int> user_version(Database& db) {
  auto stmt = db.prepare("PRAGMA user_version");
  if (!stmt) return std::unexpected(stmt.error());
  auto row = (*stmt)->step();
  if (!row) return std::unexpected(row.error());
  return static_cast<int>((*stmt)->integer(0));
}

}  // namespace

int latest_schema_version() { return kLatest; }

Result<void> migrate(Database& db, const std::function<void(const MigrationProgress&)>& progress) {
  auto version = user_version(db);
  if (!version) return std::unexpected(version.error());
  if (*version > kLatest) {
    return fail(ErrorCode::kSchemaTooNew,
                "the database has schema version " + std::to_string(*version) +
                    ", newer than this binary's " + std::to_string(kLatest) +
                    "; run a newer bulleted-appview");
  }
  // A step on an existing index may take minutes (a million nodes): each
  // reports its start, its counted work, a heartbeat every few seconds while
  // SQLite runs one long statement, and how long it took.
  const bool fresh = *version == 0;
  for (int v = *version; v < kLatest; ++v) {
    MigrationProgress step{.version = v + 1, .what = kStepNames[v]};
    if (v + 1 == kBlocksVersion) step.counted = "nodes in groups that get blocks";
    if (v + 1 == kServedFacetsVersion) step.counted = "records with facets";
    if (v + 1 == kFinishedPlansVersion) step.counted = "plan rows of finished imports";
    if (v + 1 == kSearchVersion) step.counted = "nodes indexed for search";
    const auto start = std::chrono::steady_clock::now();
    auto report = [&] {
      step.seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (progress && !fresh) progress(step);
    };
    report();
    Heartbeat heartbeat{report};
    if (!fresh) sqlite3_progress_handler(db.handle(), 100'000, &Heartbeat::tick, &heartbeat);
    auto run = [&]() -> Result<void> {
      auto tx = Transaction::begin(db, Transaction::Kind::kWrite);
      if (!tx) return std::unexpected(tx.error());
      if (auto r = db.exec(kMigrations[v]); !r) return r;
      // Steps that finish in C++ count their work.
      const auto counted = [&](std::int64_t done, std::int64_t total) {
        step.done = done;
        step.total = total;
        heartbeat.maybe_report();
      };
      if (v + 1 == kBlocksVersion) {
        if (auto r = build_missing_blocks(db, counted); !r) return r;
      }
      if (v + 1 == kServedFacetsVersion) {
        if (auto r = fill_served_facets(db, counted); !r) return r;
      }
      if (v + 1 == kFinishedPlansVersion) {
        if (auto r = drop_finished_plans(db, counted); !r) return r;
      }
      if (v + 1 == kSearchVersion) {
        if (auto r = build_search_index(db, counted); !r) return r;
      }
      const std::string bump = "PRAGMA user_version = " + std::to_string(v + 1);
      if (auto r = db.exec(bump.c_str()); !r) return r;
      return tx->commit();
    };
    auto result = run();
    sqlite3_progress_handler(db.handle(), 0, nullptr, nullptr);
    if (!result) return result;
    step.finished = true;
    report();
  }
  return {};
}

}  // namespace bulleted::schema
