// Ingest logic: decoded firehose events in, index batches out. No sockets:
// the consumer feeds it, tests feed it fixture frames directly.
//
// Nothing unverified is applied: a commit of a repo the index tracks, or one
// with app.bulleted.node ops, is checked against its blocks (check_commit_proof)
// and the repo's key (one DID-document refresh when the signature fails);
// a failure is counted, logged, dropped, and the repo resynced. A repo is
// taken up at its first commit with a node op; when that commit has history
// before it (`since` set and `prevData` not the empty tree) the repo is
// backfilled (resynced) before its commits apply. Commits of untracked repos
// with no node op are skipped undecoded, a new account's first one included.
//
// Events are gathered into batches (one SQLite transaction each, with the
// cursor of the last event in it) and flushed when a batch is full or the
// caller says so. Each repo's commits are checked against the stored rev
// (`since`); a gap, a missing block or a #sync naming another rev marks the
// repo desynchronized and asks for a resync, and that repo's commits are held
// until the resync is applied (then replayed if newer than the snapshot).
// Each repo's sync (wanted, fetching, failed, the commits held, the chain
// its next commit must follow) is its RepoSyncs' (repo_sync.hpp).
//
// Not thread-safe: one thread owns an Ingestor.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "firehose/frame.hpp"
#include "firehose/metrics.hpp"
#include "firehose/records.hpp"
#include "firehose/repo_sync.hpp"
#include "firehose/verify.hpp"
#include "schema/store.hpp"

namespace bulleted::firehose {

// Repo revs the app view committed itself (pds mode writes go to the PDS and
// into the index at once): the firehose echo of such a commit, and anything
// older, is a skip rather than a gap. Thread-safe.
class WrittenRevs {
 public:
  void note(const std::string& did, const std::string& rev);
  std::optional<std::string> newest(const std::string& did) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::string> revs_;
};

struct IngestOptions {
  std::string source = "firehose";        // cursor name in the store
  std::size_t max_batch_ops = 5000;       // node ops in one transaction
  std::size_t max_batch_events = 1000;    // events in one transaction
  std::size_t max_held_commits = 10'000;  // per repo, while it resyncs
  int resync_attempts = 3;                // fetches of a repo before it has failed
  // The clock of the repos' sync (tests move it); unset: the system's.
  std::function<RepoSyncs::Clock::time_point()> now;
  const WrittenRevs* written = nullptr;  // revs written by this app view
  // Where repo signing keys come from. Without it signatures go unchecked
  // (everything else about a commit still is): only for tests of captured
  // streams whose DID documents are gone. The consumer always has one.
  RepoKeys* keys = nullptr;
  // Records a repo may hold to be backfilled or resynced (a getRepo CAR
  // with more is refused: kPayloadTooLarge).
  std::size_t max_repo_records = 1'000'000;
};

class Ingestor {
 public:
  Ingestor(schema::Store& store, IngestOptions options, FirehoseMetrics& metrics);

  // Loads the stored cursor; call once before add().
  Result<void> start();
  // The cursor to resume from (the seq of the last event taken in, applied
  // or pending).
  std::optional<std::int64_t> resume_cursor() const;

  // Takes one event. May apply a full batch.
  Result<void> add(FirehoseEvent event);
  // Applies whatever is pending.
  Result<void> flush();
  bool has_pending() const { return !batch_.empty() || pending_cursor_.has_value(); }

  // Asks for `did` to be fetched whole (backfill) before its commits apply,
  // unless the index has synced it already; the request is kept in the
  // store, so a restart asks again.
  Result<void> request_backfill(const std::string& did);
  // Repos whose resync is wanted and not yet being fetched.
  std::vector<std::string> take_resync_requests();
  // Every repo the index knows (after OutdatedCursor/FutureCursor).
  Result<void> request_full_resync();
  // Forgets the cursor (the server's history does not reach it): the next
  // events are taken whatever their seq.
  void reset_cursor();
  // Applies a fetched snapshot, then replays the repo's held commits.
  Result<void> apply_resync(const RepoSnapshot& snapshot);
  // The whole chain for a repo's getRepo CAR, wherever it came from (a
  // resync, `backfill`, a PDS refresh): read it (read_repo) and apply it.
  // A CAR that cannot be read is kUpstreamFailure ("the repo could not be
  // read: ..."). Returns what was applied.
  Result<RepoSnapshot> resync_from_car(std::string_view car, std::string_view did);
  // A resync's fetch (or the apply of what it brought) failed: tried again,
  // or, with no try left, the repo's held commits are applied as they are
  // (better than dropping them) until its next round (repo_sync.hpp).
  Result<void> resync_failed(const std::string& did, const Error& error);
  // One round of resyncs, between batches: applies what `fetches` brought
  // back (a CAR that fails, or no CAR, is a failed try), then hands it the
  // repos whose time has come, as many as it has fetchers free.
  Result<void> run_resyncs(RepoFetches& fetches);
  // Each repo's sync.
  RepoSyncs& syncs() { return syncs_; }

 private:
  Result<void> add_commit(CommitEvent commit, bool replaying);
  Result<void> add_sync(const SyncEvent& sync);
  Result<void> add_account(const AccountEvent& account);
  // The signature of a proven commit against the repo's key.
  Verified<void> check_key(const SignedCommit& commit);
  // Counts and logs a verification failure and asks for a resync of `did`
  // (when `resync`).
  void refuse(const std::string& did, const std::string& what, const VerifyFailure& failure,
              bool resync = true);
  Result<std::optional<std::string>> known_rev(const std::string& did);
  void want_resync(const std::string& did, const std::string& why);
  void note_event(const FirehoseEvent& event);
  Result<void> maybe_flush();

  schema::Store& store_;
  IngestOptions options_;
  FirehoseMetrics& metrics_;
  schema::ApplyBatch batch_;
  std::size_t batch_events_ = 0;
  std::optional<std::int64_t> pending_cursor_;
  std::optional<std::string> pending_time_;
  std::optional<std::int64_t> last_seq_;
  RepoSyncs syncs_;
};

}  // namespace bulleted::firehose
