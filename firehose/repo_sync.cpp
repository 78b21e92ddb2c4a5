#include "firehose/repo_sync.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>

#include "schema/enum_names.hpp"

namespace bulleted::firehose {
namespace {

using State = RepoSyncState;

constexpr schema::EnumNames<State, 5> kStateNames{{{
    {State::kSynced, "synced"},
    {State::kWanted, "wanted"},
    {State::kFetching, "fetching"},
    {State::kFailed, "failed"},
    {State::kGivenUp, "given up"},
}}};
static_assert(kStateNames.covers(State::kGivenUp));

// The moves of repo_sync.hpp's list.
struct Move {
  State from;
  State to;
};
constexpr std::array<Move, 9> kMoves = {{
    {State::kSynced, State::kWanted},
    {State::kWanted, State::kWanted},
    {State::kFailed, State::kWanted},
    {State::kGivenUp, State::kWanted},
    {State::kWanted, State::kFetching},
    {State::kFetching, State::kSynced},
    {State::kFetching, State::kWanted},
    {State::kFetching, State::kFailed},
    {State::kFetching, State::kGivenUp},
}};

// How each state is stored.
constexpr std::array<schema::SyncState, 5> kStored = {
    schema::SyncState::kSynced, schema::SyncState::kDesynchronized, schema::SyncState::kResyncing,
    schema::SyncState::kFailed, schema::SyncState::kGivenUp};

std::int64_t unix_ms(RepoSyncs::Clock::time_point at) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(at.time_since_epoch()).count();
}

}  // namespace

std::string_view to_string(RepoSyncState state) { return kStateNames.name(state); }

bool allowed_sync_move(RepoSyncState from, RepoSyncState to) {
  return std::any_of(kMoves.begin(), kMoves.end(),
                     [&](const Move& move) { return move.from == from && move.to == to; });
}

RepoSyncs::RepoSyncs(schema::Store& store, RepoSyncOptions options, FirehoseMetrics& metrics,
                     std::function<Clock::time_point()> now)
    : store_(store),
      options_(options),
      metrics_(metrics),
      now_(now ? std::move(now) : [] { return Clock::now(); }) {}

Result<void> RepoSyncs::load() {
  auto unsynced = store_.read().unsynced_repos();
  if (!unsynced) return std::unexpected(unsynced.error());
  for (const auto& row : *unsynced) {
    Repo& repo = repos_[row.did];
    repo.failed_rounds = row.failed_rounds;
    if (row.state == schema::SyncState::kFailed) {
      // Its next try as it was set; the held commits were applied then.
      repo.state = State::kFailed;
      repo.next =
          row.retry_at_ms ? Clock::time_point(std::chrono::milliseconds(*row.retry_at_ms)) : now_();
      continue;
    }
    // Wanted, fetching or given up: the commits it held are behind the
    // cursor now, so the repo must be fetched again.
    repo.state = row.state == schema::SyncState::kGivenUp ? State::kGivenUp : State::kSynced;
    transition(row.did, repo, State::kWanted, "load");
    spdlog::warn("firehose: repo {} needs a resync: {}", row.did,
                 row.state == schema::SyncState::kGivenUp
                     ? "it was over the limits before the last stop"
                     : "a resync did not finish before the last stop");
    metrics_.resyncs_started++;
  }
  return {};
}

bool RepoSyncs::transition(const std::string& did, Repo& repo, RepoSyncState to, const char* by) {
  if (!allowed_sync_move(repo.state, to)) {
    spdlog::error("firehose: {}: no move of {} from {} to {} (a bug)", by, did,
                  to_string(repo.state), to_string(to));
    return false;
  }
  repo.state = to;
  schema::RepoSyncRow row{did, kStored[static_cast<std::size_t>(to)], repo.failed_rounds,
                          std::nullopt};
  if (to == State::kFailed) row.retry_at_ms = unix_ms(repo.next);
  if (auto r = store_.set_sync(row); !r) {
    // The index keeps the previous state: at worst a restart resyncs again.
    spdlog::warn("firehose: the sync state of {} was not kept: {}", did, r.error().message);
  }
  return true;
}

void RepoSyncs::settle(const std::string& did) {
  (void)store_.set_sync(schema::RepoSyncRow{did, schema::SyncState::kSynced, 0, std::nullopt});
  repos_.erase(did);
}

RepoSyncState RepoSyncs::state(const std::string& did) const {
  auto it = repos_.find(did);
  return it == repos_.end() ? State::kSynced : it->second.state;
}

bool RepoSyncs::holds(const std::string& did) const {
  const State now = state(did);
  return now == State::kWanted || now == State::kFetching;
}

bool RepoSyncs::hold(const std::string& did, CommitEvent commit) {
  auto it = repos_.find(did);
  if (it == repos_.end() || it->second.held.size() >= options_.max_held) return false;
  it->second.held.push_back(std::move(commit));
  return true;
}

void RepoSyncs::want(const std::string& did, const std::string& why) {
  Repo& repo = repos_[did];
  if (repo.state == State::kWanted || repo.state == State::kFetching) return;
  if (!transition(did, repo, State::kWanted, "want")) return;
  repo.tries = 0;
  repo.next = now_();
  spdlog::warn("firehose: repo {} needs a resync: {}", did, why);
  metrics_.resyncs_started++;
}

std::vector<std::string> RepoSyncs::due(std::size_t free) {
  std::vector<std::string> out;
  const auto now = now_();
  for (auto& [did, repo] : repos_) {
    if (out.size() >= free) break;
    if (repo.next > now) continue;
    if (repo.state == State::kFailed) {
      // Its next try has come: a new round of tries.
      if (!transition(did, repo, State::kWanted, "due")) continue;
      repo.tries = 0;
    }
    if (repo.state != State::kWanted) continue;
    if (transition(did, repo, State::kFetching, "due")) out.push_back(did);
  }
  return out;
}

std::deque<CommitEvent> RepoSyncs::applied(const std::string& did, const std::string& rev,
                                           const Cid& data) {
  auto it = repos_.find(did);
  std::deque<CommitEvent> held;
  if (it != repos_.end()) {
    Repo& repo = it->second;
    if (repo.state == State::kFailed || repo.state == State::kGivenUp) {
      transition(did, repo, State::kWanted, "applied");
    }
    if (repo.state == State::kWanted) transition(did, repo, State::kFetching, "applied");
    if (!transition(did, repo, State::kSynced, "applied")) return held;
    held = std::move(repo.held);
  }
  settle(did);
  revs_[did] = rev;
  chains_.insert_or_assign(did, std::pair{rev, data});
  metrics_.resyncs_done++;
  return held;
}

std::deque<CommitEvent> RepoSyncs::fetch_failed(const std::string& did, const Error& error) {
  auto it = repos_.find(did);
  if (it == repos_.end()) return {};
  Repo& repo = it->second;
  // A fetch made without the scheduler (`backfill`): as if due() had made it.
  if (repo.state == State::kWanted) transition(did, repo, State::kFetching, "fetch_failed");
  if (repo.state != State::kFetching) return {};
  const bool too_large = error.code == ErrorCode::kPayloadTooLarge;
  const bool not_found = error.code == ErrorCode::kNotFound;
  if (!too_large && !not_found && ++repo.tries < options_.attempts) {
    repo.next = now_() + options_.retry_step * repo.tries;
    spdlog::warn("firehose: resync of {} failed (attempt {}): {}", did, repo.tries, error.message);
    transition(did, repo, State::kWanted, "fetch_failed");
    return {};
  }
  if (too_large) {
    spdlog::error("firehose: not resyncing {}: {}", did, error.message);
    transition(did, repo, State::kGivenUp, "fetch_failed");
  } else {
    const auto wait = failed_wait(repo.failed_rounds);
    ++repo.failed_rounds;
    repo.next = now_() + wait;
    spdlog::error("firehose: resync of {} failed {} times, trying again in {} minutes: {}", did,
                  std::max(repo.tries, 1),
                  std::chrono::duration_cast<std::chrono::minutes>(wait).count(), error.message);
    transition(did, repo, State::kFailed, "fetch_failed");
  }
  metrics_.resyncs_failed++;
  return std::move(repo.held);
}

RepoSyncs::Clock::duration RepoSyncs::failed_wait(int rounds) const {
  const auto wait = std::chrono::duration_cast<Clock::duration>(options_.failed_first) *
                    (std::int64_t{1} << std::min(rounds, 16));
  return std::min<Clock::duration>(wait, options_.failed_most);
}

void RepoSyncs::forget(const std::string& did) {
  repos_.erase(did);
  revs_[did] = std::nullopt;
  chains_.erase(did);
}

Result<std::optional<std::string>> RepoSyncs::known_rev(const std::string& did) {
  auto it = revs_.find(did);
  if (it == revs_.end()) {
    auto repo = store_.read().repo(did);
    if (!repo) return std::unexpected(repo.error());
    it = revs_.emplace(did, *repo ? (*repo)->rev : std::nullopt).first;
  }
  return it->second;
}

void RepoSyncs::set_rev(const std::string& did, std::optional<std::string> rev) {
  revs_[did] = std::move(rev);
}

void RepoSyncs::advance(const std::string& did, const std::string& rev, const Cid& data) {
  revs_[did] = rev;
  chains_.insert_or_assign(did, std::pair{rev, data});
}

std::optional<std::pair<std::string, Cid>> RepoSyncs::chain(const std::string& did) const {
  auto it = chains_.find(did);
  if (it == chains_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> RepoSyncs::in_state(RepoSyncState state) const {
  std::vector<std::string> out;
  for (const auto& [did, repo] : repos_) {
    if (repo.state == state) out.push_back(did);
  }
  return out;
}

std::size_t RepoSyncs::count(RepoSyncState state) const {
  return static_cast<std::size_t>(
      std::count_if(repos_.begin(), repos_.end(),
                    [&](const auto& entry) { return entry.second.state == state; }));
}

}  // namespace bulleted::firehose
