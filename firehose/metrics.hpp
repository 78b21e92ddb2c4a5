// Counters of the firehose consumer, read by the operators' endpoints. All
// fields are atomics: written by the consumer's threads, read by anyone.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>

namespace bulleted::firehose {

enum class ConnectionState { kDisconnected = 0, kConnecting = 1, kConnected = 2 };

struct FirehoseMetrics {
  // Indexed like FirehoseEvent's alternatives: commit, sync, identity,
  // account, info, error, unknown.
  static constexpr std::array<std::string_view, 7> kEventTypes = {
      "commit", "sync", "identity", "account", "info", "error", "unknown"};

  std::array<std::atomic<std::uint64_t>, 7> received{};
  std::array<std::atomic<std::uint64_t>, 7> applied{};
  std::array<std::atomic<std::uint64_t>, 7> skipped{};
  std::array<std::atomic<std::uint64_t>, 7> errored{};

  std::atomic<std::uint64_t> decode_errors{0};     // frames that did not decode
  std::atomic<std::uint64_t> duplicate_events{0};  // seq at or below the last applied
  std::atomic<std::uint64_t> ops_applied{0};
  std::atomic<std::uint64_t> ops_stale{0};         // not newer than the index
  std::atomic<std::uint64_t> records_rejected{0};  // invalid app.bulleted.node records
  std::atomic<std::uint64_t> resyncs_started{0};
  std::atomic<std::uint64_t> resyncs_done{0};
  std::atomic<std::uint64_t> resyncs_failed{0};
  std::atomic<std::uint64_t> reconnects{0};
  std::atomic<std::uint64_t> batches{0};
  std::atomic<std::uint64_t> apply_failures{0};
  std::atomic<std::int64_t> last_seq{-1};
  std::atomic<std::int64_t> lag_ms{0};  // now minus the last applied event's time
  std::atomic<int> connection{static_cast<int>(ConnectionState::kDisconnected)};
  std::atomic<std::uint64_t> queue_depth{0};

  // Commits, #syncs and repo CARs refused by verification, by reason
  // (indexed like VerifyReason: signature, key, commit, block, mst,
  // inversion), and DID documents read again after a signature failed.
  static constexpr std::array<std::string_view, 6> kVerifyReasons = {
      "signature", "key", "commit", "block", "mst", "inversion"};
  std::array<std::atomic<std::uint64_t>, 6> verification_failures{};
  std::atomic<std::uint64_t> key_refreshes{0};
  std::atomic<std::uint64_t> commits_verified{0};

  // Backfill and resyncs: repos listed by the initial backfill, repos waiting
  // for a getRepo, being fetched now; and whether the initial backfill is
  // still under way (/readyz says "backfilling" meanwhile).
  std::atomic<std::uint64_t> backfill_discovered{0};
  std::atomic<std::uint64_t> repos_pending{0};
  std::atomic<std::uint64_t> repos_in_flight{0};
  // Repos whose fetch failed (attempts used up), waiting to be tried again
  // later; records read from getRepo CARs applied, and their rate over the
  // last minute.
  std::atomic<std::uint64_t> repos_failed{0};
  std::atomic<std::uint64_t> repo_records_read{0};
  std::atomic<std::uint64_t> repo_records_per_second{0};
  std::atomic<bool> backfilling{false};
  // getRepo CARs over firehose.maxRepoBytes or firehose.maxRepoRecords.
  std::atomic<std::uint64_t> repos_over_limit{0};
};

}  // namespace bulleted::firehose
