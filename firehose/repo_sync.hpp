// Each repo's sync, owned in one place: whether the index follows the repo's
// commits as they come or must fetch the repo whole (getRepo) first, the
// commits held meanwhile, the tries and their times, and the chain the
// next commit must follow (its rev and MST root). The ingestor and the
// consumer's scheduler move repos through these states; nothing else keeps
// any of it. No sockets, no threads; time comes from a clock that tests
// replace.
//
// States (kept beside the repo as schema::SyncState, so that a restart
// resumes them):
//
//   kSynced    the index follows the repo's commits as they come.
//   kWanted    a resync is needed: a gap or a broken chain, a #sync, an
//              unreadable or refused commit, a repo first seen with history,
//              a backfill, a full resync, or a restart in the middle of one.
//              Its commits are held (at most max_held) until the snapshot
//              applies. Fetched once its time has come and a fetcher is free.
//   kFetching  a fetcher is getting the repo, or its snapshot is applying.
//   kFailed    its fetches failed `attempts` times in a row, or the repo was
//              not found: the commits held were applied as they were, and
//              it is tried again after 10 minutes x 2^round, at most 6 hours
//              (the rounds and the next try are kept across restarts).
//   kGivenUp   its repo is over the limits (firehose.maxRepoBytes,
//              maxRepoRecords): the commits held were applied as they were;
//              not fetched again before the next start, where it is wanted.
//
// The moves, and the function that makes each (transition() refuses any
// other, and says so in the log):
//
//   kSynced   -> kWanted    want()
//   kWanted   -> kWanted    want() (another reason: still wanted, one fetch)
//   kFailed   -> kWanted    want(); due(): its next try has come
//   kGivenUp  -> kWanted    load(): the next start
//   kWanted   -> kFetching  due()
//   kFetching -> kSynced    applied()
//   kFetching -> kWanted    fetch_failed(): a try is left (after 5 s x tries)
//   kFetching -> kFailed    fetch_failed(): no try left, or not found
//   kFetching -> kGivenUp   fetch_failed(): over the limits
//   any       -> (none)     forget(): the account is deleted
//
// A repo that was never wanted is kSynced (and kept nowhere). Not
// thread-safe: the indexing thread owns it.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "firehose/cid.hpp"
#include "firehose/frame.hpp"
#include "firehose/metrics.hpp"
#include "schema/error.hpp"
#include "schema/store.hpp"

namespace bulleted::firehose {

enum class RepoSyncState { kSynced, kWanted, kFetching, kFailed, kGivenUp };

// Where repos are fetched (getRepo), seen from the indexing thread: the
// consumer's pool of fetcher threads, or a test's fake. Fetches run
// elsewhere; their CARs (or errors) are taken back here.
class RepoFetches {
 public:
  virtual ~RepoFetches() = default;
  // Fetchers free for another repo now.
  virtual std::size_t free() const = 0;
  virtual void submit(const std::string& did) = 0;
  // Fetches that ended since the last call: the repo's CAR, or why not.
  virtual std::vector<std::pair<std::string, Result<std::string>>> take_done() = 0;
};

std::string_view to_string(RepoSyncState state);

// Whether `from` -> `to` is one of the moves above.
bool allowed_sync_move(RepoSyncState from, RepoSyncState to);

struct RepoSyncOptions {
  int attempts = 3;                       // fetches before a repo has failed
  std::size_t max_held = 10'000;          // commits held while it resyncs
  std::chrono::seconds retry_step{5};     // the wait before try n + 1: n steps
  std::chrono::minutes failed_first{10};  // the wait after a first failed round
  std::chrono::hours failed_most{6};      // the longest wait
};

class RepoSyncs {
 public:
  using Clock = std::chrono::system_clock;

  RepoSyncs(schema::Store& store, RepoSyncOptions options, FirehoseMetrics& metrics,
            std::function<Clock::time_point()> now = {});

  // Resumes what the store kept: repos wanted or fetching when the process
  // stopped are wanted again (their held commits are behind the cursor
  // now), failed ones keep their rounds and next try, given-up ones are
  // wanted (the limits may have been raised).
  Result<void> load();

  RepoSyncState state(const std::string& did) const;
  // Whether the repo's commits wait for its resync (wanted or fetching).
  bool holds(const std::string& did) const;
  // Holds a commit for after the resync; false when max_held are held (the
  // snapshot covers it).
  bool hold(const std::string& did, CommitEvent commit);

  // A resync is needed, for `why` (logged once, when it becomes wanted).
  void want(const std::string& did, const std::string& why);
  // The repos to hand to fetchers now, at most `free`: wanted ones whose
  // time has come, and failed ones whose next try has (moved to kFetching).
  std::vector<std::string> due(std::size_t free);
  // The snapshot at `rev` (MST root `data`) applied: the commits held,
  // oldest first, for the caller to replay (those newer than the snapshot).
  // A snapshot that came without the scheduler (`backfill`, a PDS refresh)
  // takes the repo through the moves a fetch would have.
  std::deque<CommitEvent> applied(const std::string& did, const std::string& rev, const Cid& data);
  // The fetch (or the snapshot's apply) failed: a try left keeps it wanted
  // (and its commits held: none returned); otherwise the commits held,
  // for the caller to apply as they are.
  std::deque<CommitEvent> fetch_failed(const std::string& did, const Error& error);
  // The account is gone: everything of the repo dropped.
  void forget(const std::string& did);

  // The chain: the newest rev the index has of a repo (from the store the
  // first time), and the (rev, MST root) of the newest commit applied.
  Result<std::optional<std::string>> known_rev(const std::string& did);
  void set_rev(const std::string& did, std::optional<std::string> rev);
  void advance(const std::string& did, const std::string& rev, const Cid& data);
  std::optional<std::pair<std::string, Cid>> chain(const std::string& did) const;

  // Repos in a state (for the metrics).
  std::size_t count(RepoSyncState state) const;
  std::vector<std::string> in_state(RepoSyncState state) const;
  bool idle() const { return repos_.empty(); }

 private:
  struct Repo {
    RepoSyncState state = RepoSyncState::kSynced;
    int tries = 0;          // failed fetches in this round
    int failed_rounds = 0;  // rounds that failed (kept across restarts)
    Clock::time_point next{};
    std::deque<CommitEvent> held;
  };
  // Moves `repo` to `to` when the move is on the list (by `by`, for the
  // log), and keeps the new state in the store; false when refused.
  bool transition(const std::string& did, Repo& repo, RepoSyncState to, const char* by);
  // Drops a repo back to kSynced (not kept here).
  void settle(const std::string& did);
  Clock::duration failed_wait(int rounds) const;

  schema::Store& store_;
  RepoSyncOptions options_;
  FirehoseMetrics& metrics_;
  std::function<Clock::time_point()> now_;
  std::map<std::string, Repo> repos_;  // every repo not synced
  std::map<std::string, std::optional<std::string>> revs_;
  std::map<std::string, std::pair<std::string, Cid>> chains_;
};

}  // namespace bulleted::firehose
