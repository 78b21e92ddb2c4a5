// What the app view keeps beside the index (schema/side_tables.hpp).
#include "schema/side_tables.hpp"

#include <filesystem>

#include "schema/sqlite.hpp"

namespace bulleted::schema {
namespace {

// The index range [low, high) of every hex digest that shares digest's
// selector: 'g' sorts after every hex digit.
std::pair<std::string, std::string> selector_range(std::string_view digest) {
  std::string low(digest.substr(0, kDigestSelector));
  std::string high = low + 'g';
  return {std::move(low), std::move(high)};
}

}  // namespace

bool constant_time_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  volatile unsigned char difference = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    difference = difference | static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return difference == 0;
}

Result<void> TokenTable::add(std::string_view digest, std::string_view did) {
  auto stmt = db_.prepare(
      "INSERT INTO tokens (hash, did, created_at) VALUES (?1, ?2, strftime('%Y-%m-%dT%H:%M:%fZ', "
      "'now'))");
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, digest).bind(2, did);
  return (*stmt)->run();
}

Result<std::optional<std::string>> TokenTable::did_of(std::string_view digest) {
  auto stmt = db_.prepare("SELECT hash, did FROM tokens WHERE hash >= ?1 AND hash < ?2");
  if (!stmt) return pass(stmt);
  const auto [low, high] = selector_range(digest);
  (*stmt)->bind(1, low).bind(2, high);
  std::optional<std::string> did;
  for (;;) {
    auto row = (*stmt)->step();
    if (!row) return pass(row);
    if (!*row) return did;
    if (constant_time_equal((*stmt)->text(0), digest)) did = (*stmt)->text(1);
  }
}

Result<void> ImportJobTable::create(const ImportJobRow& job,
                                    const std::vector<PlannedRecord>& plan) {
  auto tx = Transaction::begin(db_, Transaction::Kind::kWrite);
  if (!tx) return pass(tx);
  auto stmt = db_.prepare(
      "INSERT INTO import_jobs (id, did, root_rkey, format, state, total, done, session, "
      "errors, created_at, runner, lease_until) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0, ?7, ?8,"
      " strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ?9, ?10)");
  if (!stmt) return pass(stmt);
  (*stmt)
      ->bind(1, job.id)
      .bind(2, job.did)
      .bind(3, job.root_rkey)
      .bind(4, job.format)
      .bind(5, to_string(job.state))
      .bind(6, job.total)
      .bind(7, job.session)
      .bind(8, job.errors_json)
      .bind(9, job.runner)
      .bind(10, job.lease_until_ms);
  if (auto r = (*stmt)->run(); !r) return pass(r);
  for (std::size_t i = 0; i < plan.size(); ++i) {
    auto row = db_.prepare(
        "INSERT INTO import_plan (job_id, seq, rkey, record_json) VALUES (?1, ?2, ?3, ?4)");
    if (!row) return pass(row);
    (*row)
        ->bind(1, job.id)
        .bind(2, static_cast<std::int64_t>(i))
        .bind(3, plan[i].rkey)
        .bind(4, plan[i].record_json);
    if (auto r = (*row)->run(); !r) return pass(r);
  }
  return tx->commit();
}

namespace {

ImportJobRow import_job_row(const Statement& s) {
  // A state this binary does not know (a newer one wrote it) runs no further.
  return ImportJobRow{s.text(0),
                      s.text(1),
                      s.text(2),
                      s.text(3),
                      parse_import_state(s.text(4)).value_or(ImportState::kFailed),
                      s.integer(5),
                      s.integer(6),
                      s.optional_text(7),
                      s.text(8),
                      s.optional_text(9),
                      s.text(10),
                      s.optional_text(11),
                      s.integer(12)};
}

}  // namespace

Result<std::optional<ImportJobRow>> ImportJobTable::find(std::string_view id) {
  auto stmt = db_.prepare(
      "SELECT id, did, root_rkey, format, state, total, done, resume_at, errors, session, "
      "created_at, runner, lease_until FROM import_jobs WHERE id = ?1");
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, id);
  auto row = (*stmt)->step();
  if (!row) return pass(row);
  if (!*row) return std::optional<ImportJobRow>();
  return std::optional<ImportJobRow>(import_job_row(**stmt));
}

Result<bool> ImportJobTable::claim(std::string_view id, std::string_view runner,
                                   std::int64_t now_ms) {
  auto stmt = db_.prepare(
      "UPDATE import_jobs SET runner = ?2, lease_until = ?3 + ?4 WHERE id = ?1"
      " AND (runner IS NULL OR runner = ?2 OR lease_until < ?3)");
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, id).bind(2, runner).bind(3, now_ms).bind(4, kImportLeaseMs);
  if (auto r = (*stmt)->run(); !r) return pass(r);
  return (*stmt)->changes() == 1;
}

Result<std::vector<ImportJobRow>> ImportJobTable::unfinished() {
  auto stmt = db_.prepare(
      "SELECT id, did, root_rkey, format, state, total, done, resume_at, errors, session, "
      "created_at, runner, lease_until FROM import_jobs WHERE state IN ('running', 'waiting')"
      " ORDER BY created_at, id");
  if (!stmt) return pass(stmt);
  std::vector<ImportJobRow> out;
  while (true) {
    auto row = (*stmt)->step();
    if (!row) return pass(row);
    if (!*row) break;
    out.push_back(import_job_row(**stmt));
  }
  return out;
}

Result<std::vector<PlannedRecord>> ImportJobTable::plan(std::string_view id, std::int64_t from,
                                                        std::int64_t limit) {
  auto stmt = db_.prepare(
      "SELECT rkey, record_json FROM import_plan WHERE job_id = ?1 AND seq >= ?2 ORDER BY seq "
      "LIMIT ?3");
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, id).bind(2, from).bind(3, limit);
  std::vector<PlannedRecord> out;
  while (true) {
    auto row = (*stmt)->step();
    if (!row) return pass(row);
    if (!*row) break;
    out.push_back({(*stmt)->text(0), (*stmt)->text(1)});
  }
  return out;
}

Result<void> ImportJobTable::set_state(std::string_view id, ImportState state,
                                       const std::optional<std::string>& resume_at,
                                       std::string_view errors_json) {
  auto tx = Transaction::begin(db_, Transaction::Kind::kWrite);
  if (!tx) return pass(tx);
  auto stmt =
      db_.prepare("UPDATE import_jobs SET state = ?2, resume_at = ?3, errors = ?4 WHERE id = ?1");
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, id).bind(2, to_string(state)).bind(3, resume_at).bind(4, errors_json);
  if (auto r = (*stmt)->run(); !r) return r;
  if (state == ImportState::kDone) {
    if (auto dropped = drop_plan(id); !dropped) return pass(dropped);
  }
  return tx->commit();
}

Result<std::int64_t> ImportJobTable::drop_plan(std::string_view id) {
  auto stmt = db_.prepare("DELETE FROM import_plan WHERE job_id = ?1");
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, id);
  if (auto r = (*stmt)->run(); !r) return pass(r);
  return static_cast<std::int64_t>((*stmt)->changes());
}

Result<std::int64_t> ImportJobTable::plan_rows(std::string_view id) {
  auto count =
      query_value<std::int64_t>(db_, "SELECT COUNT(*) FROM import_plan WHERE job_id = ?1", id);
  if (!count) return pass(count);
  return count->value_or(0);
}

Result<void> ImportJobTable::set_done(std::string_view id, std::int64_t done) {
  auto stmt = db_.prepare("UPDATE import_jobs SET done = ?2 WHERE id = ?1");
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, id).bind(2, done);
  return (*stmt)->run();
}

Result<void> SessionTable::put(const SessionRow& session) {
  auto stmt = db_.prepare(
      "INSERT INTO sessions (hash, did, handle, pds_url, access_sealed, refresh_sealed, "
      "oauth_sealed, created_at, refreshed_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
      "strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))");
  if (!stmt) return pass(stmt);
  (*stmt)
      ->bind(1, session.digest)
      .bind(2, session.did)
      .bind(3, session.handle)
      .bind(4, session.pds_url)
      .bind(5, session.access_sealed)
      .bind(6, session.refresh_sealed)
      .bind(7, session.oauth_sealed);
  return (*stmt)->run();
}

Result<std::optional<SessionRow>> SessionTable::find(std::string_view digest) {
  auto stmt = db_.prepare(
      "SELECT hash, did, handle, pds_url, access_sealed, refresh_sealed, oauth_sealed "
      "FROM sessions WHERE hash >= ?1 AND hash < ?2");
  if (!stmt) return pass(stmt);
  const auto [low, high] = selector_range(digest);
  (*stmt)->bind(1, low).bind(2, high);
  std::optional<SessionRow> found;
  for (;;) {
    auto row = (*stmt)->step();
    if (!row) return pass(row);
    if (!*row) return found;
    const Statement& s = **stmt;
    if (constant_time_equal(s.text(0), digest)) {
      found = SessionRow{std::string(digest), s.text(1), s.optional_text(2), s.text(3),
                         s.text(4),           s.text(5), s.optional_text(6)};
    }
  }
}

Result<std::optional<SessionRow>> SessionTable::latest_of(std::string_view did) {
  auto stmt = db_.prepare(
      "SELECT hash, did, handle, pds_url, access_sealed, refresh_sealed, oauth_sealed "
      "FROM sessions WHERE did = ?1 ORDER BY refreshed_at DESC LIMIT 1");
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, did);
  auto row = (*stmt)->step();
  if (!row) return pass(row);
  if (!*row) return std::optional<SessionRow>();
  const Statement& s = **stmt;
  return std::optional<SessionRow>(SessionRow{s.text(0), s.text(1), s.optional_text(2), s.text(3),
                                              s.text(4), s.text(5), s.optional_text(6)});
}

Result<void> SessionTable::update_tokens(std::string_view digest, std::string_view access_sealed,
                                         std::string_view refresh_sealed,
                                         const std::optional<std::string>& oauth_sealed) {
  auto stmt = db_.prepare(
      "UPDATE sessions SET access_sealed = ?2, refresh_sealed = ?3, "
      "oauth_sealed = coalesce(?4, oauth_sealed), "
      "refreshed_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE hash = ?1");
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, digest).bind(2, access_sealed).bind(3, refresh_sealed).bind(4, oauth_sealed);
  return (*stmt)->run();
}

Result<void> OAuthRequestTable::put(std::string_view state, std::string_view sealed,
                                    std::int64_t now, std::int64_t max_age_seconds) {
  auto purge = db_.prepare("DELETE FROM oauth_requests WHERE created_at < ?1");
  if (!purge) return pass(purge);
  (*purge)->bind(1, now - max_age_seconds);
  if (auto r = (*purge)->run(); !r) return r;
  auto stmt =
      db_.prepare("INSERT INTO oauth_requests (state, sealed, created_at) VALUES (?1, ?2, ?3)");
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, state).bind(2, sealed).bind(3, now);
  return (*stmt)->run();
}

Result<std::optional<std::string>> OAuthRequestTable::take(std::string_view state, std::int64_t now,
                                                           std::int64_t max_age_seconds) {
  auto stmt =
      db_.prepare("DELETE FROM oauth_requests WHERE state = ?1 RETURNING sealed, created_at");
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, state);
  auto row = (*stmt)->step();
  if (!row) return pass(row);
  if (!*row) return std::optional<std::string>();
  std::optional<std::string> sealed;
  if ((*stmt)->integer(1) >= now - max_age_seconds) sealed = (*stmt)->text(0);
  while (true) {  // finish the statement
    auto more = (*stmt)->step();
    if (!more) return pass(more);
    if (!*more) break;
  }
  return sealed;
}

Result<std::optional<std::string>> ServiceKeyTable::find(std::string_view name) {
  auto stmt = db_.prepare("SELECT sealed FROM service_keys WHERE name = ?1");
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, name);
  auto row = (*stmt)->step();
  if (!row) return pass(row);
  if (!*row) return std::optional<std::string>();
  return std::optional<std::string>((*stmt)->text(0));
}

Result<std::string> ServiceKeyTable::put_first(std::string_view name, std::string_view sealed) {
  auto stmt = db_.prepare(
      "INSERT INTO service_keys (name, sealed, created_at) VALUES "
      "(?1, ?2, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) ON CONFLICT (name) DO NOTHING");
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, name).bind(2, sealed);
  if (auto r = (*stmt)->run(); !r) return std::unexpected(r.error());
  auto stored = find(name);
  if (!stored) return std::unexpected(stored.error());
  if (!*stored) return fail(ErrorCode::kInternal, "a service key vanished as it was stored");
  return **stored;
}

Result<bool> SessionTable::remove(std::string_view digest) {
  auto stmt = db_.prepare("DELETE FROM sessions WHERE hash = ?1");
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, digest);
  if (auto r = (*stmt)->run(); !r) return std::unexpected(r.error());
  return sqlite3_changes(db_.handle()) > 0;
}

}  // namespace bulleted::schema
