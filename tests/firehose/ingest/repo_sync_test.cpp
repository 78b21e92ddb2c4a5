// Each repo's sync (firehose/repo_sync.hpp): the moves, the tries and their
// times on a clock the test moves, what a restart resumes, the commits held
// meanwhile, and the ingestor running resyncs through a pool of fetchers
// that the test answers for.
#include "firehose/repo_sync.hpp"

#include <gtest/gtest.h>

#include <deque>

#include "firehose/ingestor.hpp"
#include "schema/store.hpp"
#include "tests/support/files.hpp"
#include "tests/support/temp_dir.hpp"

namespace bulleted::firehose {
namespace {

using namespace std::chrono_literals;
using Clock = RepoSyncs::Clock;

constexpr const char* kRepo = "did:plc:aliceresync00000000000";

// Fetchers the test answers for: what was handed in, and the answers to
// hand back at the next take_done().
class AnsweredFetches final : public RepoFetches {
 public:
  explicit AnsweredFetches(std::size_t slots) : slots_(slots) {}
  std::size_t free() const override { return slots_ > out_ ? slots_ - out_ : 0; }
  void submit(const std::string& did) override {
    submitted.push_back(did);
    ++out_;
  }
  std::vector<std::pair<std::string, Result<std::string>>> take_done() override {
    auto done = std::move(answers_);
    answers_.clear();
    out_ -= done.size();
    return done;
  }
  void answer(const std::string& did, Result<std::string> car) {
    answers_.emplace_back(did, std::move(car));
  }

  std::vector<std::string> submitted;

 private:
  std::size_t slots_;
  std::size_t out_ = 0;
  std::vector<std::pair<std::string, Result<std::string>>> answers_;
};

Error upstream() { return Error{ErrorCode::kUpstreamFailure, "the host did not answer"}; }

CommitEvent commit(const std::string& rev) {
  CommitEvent event;
  event.repo = kRepo;
  event.rev = rev;
  return event;
}

class RepoSyncsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = schema::Store::open(dir_.file("index.db"));
    ASSERT_TRUE(opened.has_value());
    store_ = std::move(*opened);
  }

  // A RepoSyncs over the test's store and clock, as a start makes it.
  std::unique_ptr<RepoSyncs> start(RepoSyncOptions options = {}) {
    auto syncs = std::make_unique<RepoSyncs>(*store_, options, metrics_, [this] { return now_; });
    EXPECT_TRUE(syncs->load().has_value());
    return syncs;
  }

  schema::SyncState stored() { return (*store_->read().repo(kRepo))->sync_state; }

  testing::TempDir dir_;
  std::unique_ptr<schema::Store> store_;
  FirehoseMetrics metrics_;
  Clock::time_point now_ =
      Clock::time_point(std::chrono::sys_days{std::chrono::December / 4 / 2026});
};

TEST_F(RepoSyncsTest, AFailedFetchIsTriedAgainAfterFiveSecondsATry) {
  auto syncs = start({.attempts = 3});
  syncs->want(kRepo, "a gap");
  EXPECT_EQ(stored(), schema::SyncState::kDesynchronized);
  ASSERT_EQ(syncs->due(4), std::vector<std::string>{kRepo});
  EXPECT_EQ(syncs->state(kRepo), RepoSyncState::kFetching);
  EXPECT_EQ(stored(), schema::SyncState::kResyncing);
  EXPECT_TRUE(syncs->due(4).empty()) << "one fetch of a repo at a time";

  EXPECT_TRUE(syncs->fetch_failed(kRepo, upstream()).empty()) << "a try is left: still held";
  EXPECT_EQ(syncs->state(kRepo), RepoSyncState::kWanted);
  now_ += 4s;
  EXPECT_TRUE(syncs->due(4).empty());
  now_ += 1s;
  ASSERT_EQ(syncs->due(4), std::vector<std::string>{kRepo});

  EXPECT_TRUE(syncs->fetch_failed(kRepo, upstream()).empty());
  now_ += 9s;
  EXPECT_TRUE(syncs->due(4).empty()) << "the second wait is two steps";
  now_ += 1s;
  ASSERT_EQ(syncs->due(4), std::vector<std::string>{kRepo});

  syncs->fetch_failed(kRepo, upstream());
  EXPECT_EQ(syncs->state(kRepo), RepoSyncState::kFailed) << "no try left";
  EXPECT_EQ(stored(), schema::SyncState::kFailed);
  EXPECT_EQ(metrics_.resyncs_failed.load(), 1u);
}

TEST_F(RepoSyncsTest, FailedRoundsWaitTenMinutesDoublingToSixHours) {
  auto syncs = start({.attempts = 1});
  syncs->want(kRepo, "a gap");
  const std::vector<std::chrono::minutes> waits = {10min,  20min,  40min,  80min,
                                                   160min, 320min, 360min, 360min};
  ASSERT_EQ(syncs->due(1), std::vector<std::string>{kRepo});
  for (const auto wait : waits) {
    syncs->fetch_failed(kRepo, upstream());
    ASSERT_EQ(syncs->state(kRepo), RepoSyncState::kFailed);
    now_ += wait - 1s;
    EXPECT_TRUE(syncs->due(1).empty()) << "before " << wait.count() << " minutes";
    now_ += 1s;
    ASSERT_EQ(syncs->due(1), std::vector<std::string>{kRepo}) << "at " << wait.count();
  }
}

TEST_F(RepoSyncsTest, ARepoNotFoundFailsAtOnce) {
  auto syncs = start({.attempts = 3});
  syncs->want(kRepo, "a gap");
  syncs->due(1);
  syncs->fetch_failed(kRepo, Error{ErrorCode::kNotFound, "RepoNotFound"});
  EXPECT_EQ(syncs->state(kRepo), RepoSyncState::kFailed) << "a try would find nothing more";
}

TEST_F(RepoSyncsTest, ARestartResumesTheFailedRoundsAndTheNextTry) {
  {
    auto syncs = start({.attempts = 1});
    syncs->want(kRepo, "a gap");
    syncs->due(1);
    syncs->fetch_failed(kRepo, upstream());  // round 1: 10 minutes
    now_ += 10min;
    ASSERT_EQ(syncs->due(1), std::vector<std::string>{kRepo});
    syncs->fetch_failed(kRepo, upstream());  // round 2: 20 minutes
  }
  auto restarted = start({.attempts = 1});
  EXPECT_EQ(restarted->state(kRepo), RepoSyncState::kFailed);
  now_ += 19min;
  EXPECT_TRUE(restarted->due(1).empty()) << "its next try is kept";
  now_ += 1min;
  ASSERT_EQ(restarted->due(1), std::vector<std::string>{kRepo});
  restarted->fetch_failed(kRepo, upstream());
  now_ += 39min;
  EXPECT_TRUE(restarted->due(1).empty()) << "the rounds are kept: the third waits 40 minutes";
  now_ += 1min;
  EXPECT_EQ(restarted->due(1), std::vector<std::string>{kRepo});
}

TEST_F(RepoSyncsTest, ARepoOverTheLimitsIsGivenUpUntilTheNextStart) {
  auto syncs = start();
  syncs->want(kRepo, "first seen with history");
  syncs->due(1);
  syncs->fetch_failed(kRepo, Error{ErrorCode::kPayloadTooLarge, "over firehose.maxRepoBytes"});
  EXPECT_EQ(syncs->state(kRepo), RepoSyncState::kGivenUp);
  EXPECT_EQ(stored(), schema::SyncState::kGivenUp);
  now_ += 24h;
  EXPECT_TRUE(syncs->due(1).empty()) << "not fetched again while running";
  EXPECT_FALSE(syncs->holds(kRepo)) << "its commits apply as they come";
  auto restarted = start();
  EXPECT_EQ(restarted->state(kRepo), RepoSyncState::kWanted) << "the limits may have been raised";
  EXPECT_EQ(restarted->due(1), std::vector<std::string>{kRepo});
}

TEST_F(RepoSyncsTest, CommitsAreHeldUntilTheSnapshotAndGivenBackOldestFirst) {
  auto syncs = start({.max_held = 2});
  EXPECT_FALSE(syncs->hold(kRepo, commit("3a"))) << "a synced repo holds nothing";
  syncs->want(kRepo, "a gap");
  EXPECT_TRUE(syncs->holds(kRepo));
  EXPECT_TRUE(syncs->hold(kRepo, commit("3b")));
  syncs->due(1);
  EXPECT_TRUE(syncs->holds(kRepo)) << "held while it is fetched too";
  EXPECT_TRUE(syncs->hold(kRepo, commit("3c")));
  EXPECT_FALSE(syncs->hold(kRepo, commit("3d"))) << "past max_held, the snapshot covers it";
  const auto data = Cid::of_dag_cbor(std::string("\xa0", 1));
  auto held = syncs->applied(kRepo, "3c", data);
  ASSERT_EQ(held.size(), 2u);
  EXPECT_EQ(held[0].rev, "3b");
  EXPECT_EQ(held[1].rev, "3c");
  EXPECT_EQ(syncs->state(kRepo), RepoSyncState::kSynced);
  EXPECT_EQ(stored(), schema::SyncState::kSynced);
  EXPECT_EQ(syncs->chain(kRepo)->first, "3c");
  EXPECT_TRUE(syncs->idle());
}

TEST_F(RepoSyncsTest, MovesOffTheListChangeNothing) {
  auto syncs = start({.attempts = 1});
  EXPECT_TRUE(syncs->fetch_failed(kRepo, upstream()).empty());
  EXPECT_EQ(syncs->state(kRepo), RepoSyncState::kSynced) << "a repo nobody fetched cannot fail";
  syncs->want(kRepo, "a gap");
  syncs->due(1);
  syncs->want(kRepo, "a #sync");
  EXPECT_EQ(syncs->state(kRepo), RepoSyncState::kFetching) << "the fetch running covers it";
  EXPECT_TRUE(syncs->due(1).empty());
  EXPECT_FALSE(allowed_sync_move(RepoSyncState::kSynced, RepoSyncState::kFetching));
  EXPECT_FALSE(allowed_sync_move(RepoSyncState::kGivenUp, RepoSyncState::kFetching));
  EXPECT_EQ(metrics_.resyncs_started.load(), 1u);
}

TEST_F(RepoSyncsTest, ADeletedAccountIsForgotten) {
  auto syncs = start();
  syncs->want(kRepo, "a gap");
  syncs->hold(kRepo, commit("3b"));
  syncs->forget(kRepo);
  EXPECT_FALSE(syncs->holds(kRepo));
  EXPECT_TRUE(syncs->due(1).empty());
  EXPECT_TRUE(syncs->idle());
}

// The ingestor's resyncs on a captured stream with a gap in alice's chain
// (frame 11 left out), through fetchers the test answers for.
class IngestorResyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = schema::Store::open(dir_.file("index.db"));
    ASSERT_TRUE(opened.has_value());
    store_ = std::move(*opened);
    ingestor_ = std::make_unique<Ingestor>(
        *store_, IngestOptions{.resync_attempts = 2, .now = [this] { return now_; }}, metrics_);
    ASSERT_TRUE(ingestor_->start().has_value());
    const auto files = testing::frame_files("firehose/replay-cursor0");
    for (std::size_t i = 0; i < files.size(); ++i) {
      if (i == 11) continue;
      auto event = decode_frame(testing::read_file(files[i]));
      ASSERT_TRUE(event.has_value());
      if (auto* commit = std::get_if<CommitEvent>(&*event); commit && alice_.empty())
        alice_ = commit->repo;
      ASSERT_TRUE(ingestor_->add(std::move(*event)).has_value());
    }
    ASSERT_TRUE(ingestor_->flush().has_value());
    ASSERT_EQ(ingestor_->syncs().state(alice_), RepoSyncState::kWanted);
  }

  std::size_t visible_nodes() {
    std::size_t n = 0;
    const auto records = store_->read().indexed_records(alice_);
    for (const auto& record : *records) {
      if (store_->read().node(alice_, record.rkey)) ++n;
    }
    return n;
  }

  testing::TempDir dir_;
  std::unique_ptr<schema::Store> store_;
  FirehoseMetrics metrics_;
  Clock::time_point now_ =
      Clock::time_point(std::chrono::sys_days{std::chrono::December / 4 / 2026});
  std::unique_ptr<Ingestor> ingestor_;
  std::string alice_;
};

TEST_F(IngestorResyncTest, AFetchThatFailsIsTriedAgainAndItsSnapshotReplaysWhatWasHeld) {
  AnsweredFetches fetches(1);
  ASSERT_TRUE(ingestor_->run_resyncs(fetches).has_value());
  ASSERT_EQ(fetches.submitted, std::vector<std::string>{alice_});
  EXPECT_EQ(metrics_.repos_in_flight.load(), 1u);
  const std::size_t before = visible_nodes();

  fetches.answer(alice_, std::unexpected(upstream()));
  ASSERT_TRUE(ingestor_->run_resyncs(fetches).has_value());
  EXPECT_EQ(fetches.submitted.size(), 1u) << "not before its wait";
  EXPECT_EQ(metrics_.repos_pending.load(), 1u);
  EXPECT_EQ(visible_nodes(), before) << "its commits are still held";
  now_ += 5s;
  ASSERT_TRUE(ingestor_->run_resyncs(fetches).has_value());
  ASSERT_EQ(fetches.submitted.size(), 2u);

  fetches.answer(alice_, testing::read_file(testing::fixture_path("firehose/run/alice-repo.car")));
  ASSERT_TRUE(ingestor_->run_resyncs(fetches).has_value());
  EXPECT_EQ(ingestor_->syncs().state(alice_), RepoSyncState::kSynced);
  EXPECT_EQ((*store_->read().repo(alice_))->sync_state, schema::SyncState::kSynced);
  const auto expected =
      testing::read_json(testing::fixture_path("firehose/run/expected-final-state.json"));
  EXPECT_EQ(visible_nodes(), expected[alice_]["records"].size());
  EXPECT_EQ(metrics_.repos_pending.load() + metrics_.repos_in_flight.load(), 0u);
  EXPECT_EQ(metrics_.resyncs_done.load(), 1u);
}

TEST_F(IngestorResyncTest, ARepoThatCannotBeFetchedHasItsHeldCommitsAppliedAsTheyAre) {
  AnsweredFetches fetches(1);
  ASSERT_TRUE(ingestor_->run_resyncs(fetches).has_value());
  const std::size_t before = visible_nodes();
  fetches.answer(alice_, std::unexpected(Error{ErrorCode::kNotFound, "RepoNotFound"}));
  ASSERT_TRUE(ingestor_->run_resyncs(fetches).has_value());
  EXPECT_EQ(ingestor_->syncs().state(alice_), RepoSyncState::kFailed);
  EXPECT_EQ((*store_->read().repo(alice_))->sync_state, schema::SyncState::kFailed);
  EXPECT_GT(visible_nodes(), before) << "the commits held were applied rather than dropped";
  EXPECT_EQ(metrics_.repos_failed.load(), 1u);
  // A CAR that cannot be read is a failed try too.
  now_ += 10min;
  ASSERT_TRUE(ingestor_->run_resyncs(fetches).has_value());
  ASSERT_EQ(fetches.submitted.size(), 2u) << "tried again at its next round";
  fetches.answer(alice_, std::string("not a CAR"));
  ASSERT_TRUE(ingestor_->run_resyncs(fetches).has_value());
  EXPECT_EQ(ingestor_->syncs().state(alice_), RepoSyncState::kWanted) << "a try is left";
}

}  // namespace
}  // namespace bulleted::firehose
