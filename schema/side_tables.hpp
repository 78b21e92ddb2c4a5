// What the app view keeps beside the index, over a Store's connection (so
// that each can share a transaction with the index): bearer tokens, PDS
// sessions, OAuth sign-ins under way, the app view's own keys, and import
// jobs with their plans. Each table is a view over the connection; like the
// Store, used by one thread at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schema/error.hpp"
#include "schema/import_state.hpp"
#include "schema/rows.hpp"

namespace bulleted::schema {

class Database;

// The leading characters of a token digest that the index narrows on.
inline constexpr std::size_t kDigestSelector = 16;

// True when a and b are equal; the time taken depends on their lengths only.
bool constant_time_equal(std::string_view a, std::string_view b);

// Bearer tokens (local mode), over a Store's connection.
class TokenTable {
 public:
  explicit TokenTable(Database& db) : db_(db) {}
  // Stores the digest of a token for `did`.
  Result<void> add(std::string_view digest, std::string_view did);
  // The DID a token digest belongs to. Digests are hex; the index finds the
  // rows that share the first kDigestSelector characters and each candidate
  // is compared whole with constant_time_equal, so no lookup's timing depends
  // on how much of a stored digest a guess matched.
  Result<std::optional<std::string>> did_of(std::string_view digest);

 private:
  Database& db_;
};

// PDS sessions (pds mode), keyed by the digest of the app view's token and
// found the way TokenTable finds a token.
class SessionTable {
 public:
  explicit SessionTable(Database& db) : db_(db) {}
  Result<void> put(const SessionRow& session);
  Result<std::optional<SessionRow>> find(std::string_view digest);
  // The session of `did` refreshed last, if any (a caller proven by
  // service auth writes through it).
  Result<std::optional<SessionRow>> latest_of(std::string_view did);
  // New tokens (and, for OAuth, the grant with its nonces) in one statement.
  Result<void> update_tokens(std::string_view digest, std::string_view access_sealed,
                             std::string_view refresh_sealed,
                             const std::optional<std::string>& oauth_sealed = std::nullopt);
  // True when there was such a session.
  Result<bool> remove(std::string_view digest);

 private:
  Database& db_;
};

// OAuth sign-ins under way (pds mode): what the callback needs, sealed, by
// the request's state; each is taken once.
class OAuthRequestTable {
 public:
  explicit OAuthRequestTable(Database& db) : db_(db) {}
  // Stores a request made at `now` (Unix seconds), first dropping those
  // older than `max_age_seconds`.
  Result<void> put(std::string_view state, std::string_view sealed, std::int64_t now,
                   std::int64_t max_age_seconds);
  // Removes and returns the request of `state` if it is younger than
  // `max_age_seconds`.
  Result<std::optional<std::string>> take(std::string_view state, std::int64_t now,
                                          std::int64_t max_age_seconds);

 private:
  Database& db_;
};

// Keys of the app view's own (the OAuth client's signing key), sealed.
class ServiceKeyTable {
 public:
  explicit ServiceKeyTable(Database& db) : db_(db) {}
  Result<std::optional<std::string>> find(std::string_view name);
  // Stores `sealed` under `name` unless a key is there already; returns the
  // one stored (so that two processes starting at once agree).
  Result<std::string> put_first(std::string_view name, std::string_view sealed);

 private:
  Database& db_;
};

// Import jobs (their moves: schema/import_state.hpp). A job's progress
// also advances inside Store::apply (ApplyBatch::import_done), in the same
// transaction as the nodes it wrote.
// How long a runner keeps an import job without stepping it again.
inline constexpr std::int64_t kImportLeaseMs = 30'000;

class ImportJobTable {
 public:
  explicit ImportJobTable(Database& db) : db_(db) {}
  // The job row and its whole plan in one transaction.
  Result<void> create(const ImportJobRow& job, const std::vector<PlannedRecord>& plan);
  Result<std::optional<ImportJobRow>> find(std::string_view id);
  // Jobs still to run (running or waiting), oldest first.
  Result<std::vector<ImportJobRow>> unfinished();
  // Plan rows from `from` (0-based), at most `limit`.
  Result<std::vector<PlannedRecord>> plan(std::string_view id, std::int64_t from,
                                          std::int64_t limit);
  // Moves the job; a job that reaches kDone drops its plan in the same
  // transaction (nothing will read it again). A failed job keeps its plan:
  // an operator may resume it (`import --resume`) once the cause is mended.
  Result<void> set_state(std::string_view id, ImportState state,
                         const std::optional<std::string>& resume_at, std::string_view errors_json);
  // Takes (or keeps) the job for `runner` until `now_ms + kImportLeaseMs`,
  // unless another runner holds it and its lease has not run out: whether
  // `runner` may step the job now. Each step claims it again.
  Result<bool> claim(std::string_view id, std::string_view runner, std::int64_t now_ms);
  // Progress without index changes (pds mode: rows the PDS already holds).
  Result<void> set_done(std::string_view id, std::int64_t done);
  // Drops a job's plan (a failed job abandoned: it cannot be resumed after);
  // the rows dropped.
  Result<std::int64_t> drop_plan(std::string_view id);
  // Plan rows kept for the job (0 once done or abandoned).
  Result<std::int64_t> plan_rows(std::string_view id);

 private:
  Database& db_;
};

}  // namespace bulleted::schema
