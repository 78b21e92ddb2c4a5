// The change streams' follower, turn by turn, over a real index file: what
// each stream is written (ids, events, data), resumption, the limits, the
// heartbeat, other processes' commits, status changes, stalls and shutdown.
// Answers are recording stand-ins whose queue the test controls.
#include "appview/live/stream_follow.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "appview/xrpc/views.hpp"
#include "tests/support/store_fixtures.hpp"
#include "tests/support/temp_dir.hpp"

namespace bulleted::appview {
namespace {

using testing::upsert;
using Clock = std::chrono::steady_clock;

// An answer that keeps what it is written; `holding` makes written bytes
// stay queued (a client that does not read) until drain().
class RecordingAnswer final : public HeldAnswer {
 public:
  bool write(std::string_view bytes) override {
    if (ended || gone) return false;
    text += bytes;
    if (holding) waiting += bytes.size();
    return true;
  }
  std::size_t queued() const override { return waiting; }
  bool over() const override { return ended || gone; }
  void end(bool abort) override {
    ended = true;
    aborted = abort;
  }
  void drain() { waiting = 0; }

  std::string text;
  std::size_t waiting = 0;
  bool holding = false;
  bool ended = false;
  bool aborted = false;
  bool gone = false;
};

struct Event {
  std::optional<std::int64_t> id;
  std::string event;
  nlohmann::json data;
  std::optional<int> retry;
};

std::vector<Event> events_of(const std::string& text) {
  std::vector<Event> events;
  std::size_t at = 0;
  while (true) {
    const std::size_t end = text.find("\n\n", at);
    if (end == std::string::npos) break;
    Event event;
    std::string_view block(text.data() + at, end - at);
    while (!block.empty()) {
      const std::size_t line_end = std::min(block.find('\n'), block.size());
      const std::string_view line = block.substr(0, line_end);
      block.remove_prefix(std::min(block.size(), line_end + 1));
      if (line.starts_with("id: ")) event.id = std::stoll(std::string(line.substr(4)));
      if (line.starts_with("event: ")) event.event = line.substr(7);
      if (line.starts_with("data: ")) event.data = nlohmann::json::parse(line.substr(6));
      if (line.starts_with("retry: ")) event.retry = std::stoi(std::string(line.substr(7)));
    }
    if (!event.event.empty()) events.push_back(std::move(event));
    at = end + 2;
  }
  return events;
}

class StreamFollowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    writer_ = std::move(*schema::Store::open(dir_.file("index.db")));
    follower_ = make({});
  }
  std::unique_ptr<StreamFollower> make(StreamLimits limits) {
    limits_ = limits;
    auto store = schema::Store::open(dir_.file("index.db"));
    auto follower = StreamFollower::create(std::move(*store), limits, write_change, counters_);
    (*follower)->set_clock([this] { return now_; });
    return std::move(*follower);
  }
  // Applies ops and returns the notice the commit gave.
  schema::CommitNotice apply(std::vector<schema::RecordOp> ops) {
    schema::CommitNotice heard;
    writer_->set_commit_listener([&](const schema::CommitNotice& notice) { heard = notice; });
    schema::ApplyBatch batch;
    batch.ops = std::move(ops);
    EXPECT_TRUE(writer_->apply(batch).has_value());
    writer_->set_commit_listener(nullptr);
    return heard;
  }
  std::shared_ptr<RecordingAnswer> open(std::optional<std::int64_t> cursor,
                                        std::string repo = "did:plc:alice",
                                        std::string client = "1.2.3.4") {
    auto answer = std::make_shared<RecordingAnswer>();
    follower_->add({std::move(repo), cursor, std::move(client)}, answer);
    return answer;
  }
  // A turn told of `notice` (as ChangeStreams::committed hands it over).
  void turn(const schema::CommitNotice& notice = {}) {
    std::map<std::string, RepoTold> woken;
    for (const auto& [did, seq] : notice.repos) woken.emplace(did, RepoTold{now_, seq});
    std::map<std::int64_t, std::int64_t> told;
    if (notice.to > notice.from) told[notice.from] = notice.to;
    follower_->turn(woken, told);
  }
  std::vector<std::int64_t> change_ids(const RecordingAnswer& answer) {
    std::vector<std::int64_t> ids;
    for (const auto& event : events_of(answer.text)) {
      if (event.event == "change") ids.push_back(*event.id);
    }
    return ids;
  }

  testing::TempDir dir_;
  std::unique_ptr<schema::Store> writer_;
  StreamCounters counters_;
  StreamLimits limits_;
  Clock::time_point now_ = Clock::now();
  std::unique_ptr<StreamFollower> follower_;
};

TEST_F(StreamFollowTest, AResumedStreamGetsExactlyWhatCameAfterItsCursorInOrder) {
  apply({upsert({.rkey = "a"}), upsert({.rkey = "b"})});
  apply({upsert({.rkey = "c"})});
  apply({upsert({.did = "did:plc:bob", .rkey = "x"})});  // another repo's change: 4
  auto answer = open(1);
  turn();
  EXPECT_EQ(change_ids(*answer), (std::vector<std::int64_t>{2, 3}));
  const auto notice = apply({upsert({.rkey = "a", .text = "edited", .rev = 2}),
                             testing::remove("did:plc:alice", "b", 3)});
  turn(notice);
  const auto events = events_of(answer->text);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[2].data["op"], "upsert");
  EXPECT_EQ(events[2].data["node"]["text"], "edited");
  EXPECT_EQ(events[3].data, (nlohmann::json{{"op", "delete"}, {"rkey", "b"}}));
  EXPECT_EQ(change_ids(*answer), (std::vector<std::int64_t>{2, 3, 5, 6}));
  EXPECT_EQ(counters_.events.load(), 4);
  EXPECT_EQ(counters_.deliveries.load(), 2) << "the told commit's two events";
}

TEST_F(StreamFollowTest, FromNowItIsToldWhereItStartsAndNothingOlder) {
  apply({upsert({.rkey = "a"})});
  auto answer = open(std::nullopt);
  turn();
  auto events = events_of(answer->text);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].event, "cursor");
  EXPECT_EQ(events[0].id, 1);
  EXPECT_EQ(events[0].data["cursor"], "1");
  turn(apply({upsert({.rkey = "b"})}));
  EXPECT_EQ(change_ids(*answer), (std::vector<std::int64_t>{2}));
}

TEST_F(StreamFollowTest, AFutureCursorEndsTheStreamWithAnError) {
  apply({upsert({.rkey = "a"})});
  auto answer = open(2);
  const auto events = events_of(answer->text);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].event, "error");
  EXPECT_EQ(events[0].data["error"], "FutureCursor");
  EXPECT_TRUE(answer->ended);
  EXPECT_EQ(follower_->size(), 0u);
  EXPECT_EQ(counters_.closed[static_cast<std::size_t>(StreamEnd::kFutureCursor)].load(), 1);
  EXPECT_EQ(counters_.open.load(), 0);
}

TEST_F(StreamFollowTest, PastItsLimitAClientLosesItsOldestStream) {
  follower_ = make({.per_client = 2});
  auto first = open(std::nullopt);
  auto second = open(std::nullopt);
  auto elsewhere = open(std::nullopt, "did:plc:alice", "5.6.7.8");
  EXPECT_FALSE(first->ended);
  auto third = open(std::nullopt);
  EXPECT_TRUE(first->ended);
  EXPECT_EQ(events_of(first->text).back().data["error"], "TooManyStreams");
  EXPECT_FALSE(second->ended);
  EXPECT_FALSE(third->ended);
  EXPECT_FALSE(elsewhere->ended) << "another client's streams are its own";
  EXPECT_EQ(follower_->size(), 3u);
  EXPECT_EQ(counters_.closed[static_cast<std::size_t>(StreamEnd::kReplaced)].load(), 1);
}

// A stream replaced while its client reads nothing of what it has queued
// is cut off at once (its queue dropped): it is not left to send what its
// client will never take.
TEST_F(StreamFollowTest, AReplacedStreamWhoseClientDoesNotReadIsCutOffAtOnce) {
  follower_ = make({.per_client = 1, .buffer_bytes = 4096});
  auto stuck = open(std::nullopt);
  stuck->holding = true;
  stuck->waiting = 5000;  // past the bound: its client takes nothing
  auto next = open(std::nullopt);
  EXPECT_TRUE(stuck->ended);
  EXPECT_TRUE(stuck->aborted);
  EXPECT_EQ(stuck->text.find("TooManyStreams"), std::string::npos);
  auto newest = open(std::nullopt);
  EXPECT_TRUE(next->ended);
  EXPECT_FALSE(next->aborted) << "a reading client is told why, and gets what is queued";
  EXPECT_EQ(events_of(next->text).back().data["error"], "TooManyStreams");
  EXPECT_EQ(counters_.closed[static_cast<std::size_t>(StreamEnd::kReplaced)].load(), 2);
}

// What all streams keep queued is bounded: past the total, the streams
// keeping the most are closed until it holds, the others kept.
TEST_F(StreamFollowTest, PastTheTotalBoundTheStreamsKeepingTheMostAreClosed) {
  follower_ = make({.buffer_bytes = 4096, .total_buffer_bytes = 10'000});
  std::vector<std::shared_ptr<RecordingAnswer>> answers;
  for (std::size_t queued : {5000u, 6000u, 1000u, 0u}) {
    answers.push_back(open(std::nullopt, "did:plc:alice", "10.0.0." + std::to_string(queued)));
    answers.back()->holding = true;
    answers.back()->waiting = queued;
  }
  turn();
  EXPECT_TRUE(answers[1]->ended) << "the heaviest";
  EXPECT_TRUE(answers[1]->aborted);
  EXPECT_FALSE(answers[0]->ended) << "under the total once the heaviest is gone";
  EXPECT_FALSE(answers[2]->ended);
  EXPECT_FALSE(answers[3]->ended);
  EXPECT_EQ(counters_.closed[static_cast<std::size_t>(StreamEnd::kStalled)].load(), 1);
  EXPECT_EQ(follower_->size(), 3u);
}

// Catching up is fair between clients: one client's eight streams at
// eight cursors do not take all of a turn's pages, and another's stream at
// a later cursor is read for in the same turn (the lowest cursors were
// served first, and it waited behind them).
TEST_F(StreamFollowTest, CatchUpIsFairBetweenClients) {
  std::vector<schema::RecordOp> ops;
  for (int i = 0; i < 3000; ++i)
    ops.push_back(upsert({.did = "did:plc:bob", .rkey = "n" + std::to_string(i)}));
  turn(apply(std::move(ops)));
  std::vector<std::shared_ptr<RecordingAnswer>> crowd;
  for (int i = 0; i < 8; ++i) crowd.push_back(open(i, "did:plc:bob", "10.0.0.1"));
  auto other = open(100, "did:plc:bob", "10.0.0.2");
  turn();
  EXPECT_FALSE(change_ids(*other).empty()) << "the other client was read for in the first turn";
  std::size_t crowd_pages = 0;
  for (const auto& answer : crowd) crowd_pages += change_ids(*answer).empty() ? 0 : 1;
  EXPECT_LT(crowd_pages, 8u) << "the crowd did not take every page of the turn";
  for (int i = 0; i < 100; ++i) turn();
  EXPECT_EQ(change_ids(*other).size(), 2900u);
  for (const auto& answer : crowd)
    EXPECT_EQ(change_ids(*answer).size(), 3000u - (&answer - &crowd[0]));
}

// What a client reads through streams counts against its budget: once it
// is spent, its streams catch up no further (another client's go on).
TEST_F(StreamFollowTest, CatchUpStopsWhereItsClientsBudgetEnds) {
  std::vector<schema::RecordOp> ops;
  for (int i = 0; i < 3000; ++i)
    ops.push_back(upsert({.did = "did:plc:bob", .rkey = "n" + std::to_string(i)}));
  turn(apply(std::move(ops)));
  std::map<std::string, std::size_t> left{{"10.0.0.1", 20'000}};
  std::map<std::string, std::size_t> charged;
  std::map<std::string, std::size_t> live;
  follower_->set_charge(
      [&](const std::string& client, std::size_t bytes, bool history) -> std::size_t {
        if (!history) live[client] += bytes;
        charged[client] += bytes;
        auto budget = left.find(client);
        if (budget == left.end()) return bytes;
        const std::size_t granted = std::min(bytes, budget->second);
        budget->second -= granted;
        return granted;
      });
  auto poor = open(0, "did:plc:bob", "10.0.0.1");
  auto rich = open(1, "did:plc:bob", "10.0.0.2");
  for (int i = 0; i < 100; ++i) turn();
  EXPECT_EQ(change_ids(*rich).size(), 2999u);
  EXPECT_GT(change_ids(*poor).size(), 0u);
  EXPECT_LT(change_ids(*poor).size(), 3000u) << "it stopped once its budget was spent";
  EXPECT_EQ(left["10.0.0.1"], 0u);
  EXPECT_GE(charged["10.0.0.2"], rich->text.size() / 2) << "the rich one's reads were counted";
  EXPECT_EQ(live["10.0.0.1"], 0u) << "all of it history";
  // Live changes still reach the spent client's streams, whole, and are
  // counted as live.
  auto following = open(std::nullopt, "did:plc:bob", "10.0.0.1");
  turn();
  std::vector<schema::RecordOp> burst;
  for (int i = 0; i < 600; ++i)
    burst.push_back(upsert({.did = "did:plc:bob", .rkey = "b" + std::to_string(i)}));
  turn(apply(std::move(burst)));
  for (int i = 0; i < 40; ++i) turn();
  EXPECT_EQ(change_ids(*following).size(), 600u);
  EXPECT_GT(live["10.0.0.1"], 0u);
}

// A heartbeat that finds a change nobody was told of delivers it and
// leaves the stream live (it marked it behind, and a live stream then
// waited behind everyone's catch-up).
TEST_F(StreamFollowTest, AHeartbeatLeavesALiveStreamLive) {
  auto answer = open(std::nullopt);
  turn();
  EXPECT_FALSE(follower_->any_behind());
  apply({upsert({.rkey = "untold"})});  // no notice, no poll yet
  now_ += limits_.heartbeat;
  turn();
  EXPECT_EQ(change_ids(*answer).size(), 1u);
  EXPECT_FALSE(follower_->any_behind());
}

TEST_F(StreamFollowTest, CommitsOfAnotherProcessAreFound) {
  auto answer = open(std::nullopt);
  turn();
  // A commit nobody was told of (another process on the same file).
  apply({upsert({.rkey = "a"})});
  now_ += limits_.poll;
  turn();
  EXPECT_EQ(change_ids(*answer), (std::vector<std::int64_t>{1}));
  // Commits told are not searched for again, and nothing comes twice.
  const auto told = apply({upsert({.rkey = "b"})});
  now_ += limits_.poll;
  turn(told);
  turn();
  EXPECT_EQ(change_ids(*answer), (std::vector<std::int64_t>{1, 2}));
}

TEST_F(StreamFollowTest, AStatusChangeIsToldAndHidesTheRepo) {
  apply({upsert({.rkey = "a"})});
  auto answer = open(std::nullopt);
  ASSERT_TRUE(writer_->set_repo_status("did:plc:alice", schema::RepoStatus::kDeactivated));
  turn({.repos = {{"did:plc:alice", 0}}});
  turn(apply({upsert({.rkey = "b"})}));
  ASSERT_TRUE(writer_->set_repo_status("did:plc:alice", schema::RepoStatus::kActive));
  turn({.repos = {{"did:plc:alice", 0}}});
  std::vector<std::string> told;
  for (const auto& event : events_of(answer->text)) {
    if (event.event == "info") told.push_back(event.data["status"]);
    if (event.event == "change") told.push_back("change " + std::to_string(*event.id));
  }
  EXPECT_EQ(told, (std::vector<std::string>{"deactivated", "active", "change 2"}));
}

TEST_F(StreamFollowTest, TheHeartbeatGivesTheIndexsLatestCursorAsAnId) {
  auto answer = open(std::nullopt);
  apply({upsert({.did = "did:plc:bob", .rkey = "x"})});
  apply({upsert({.did = "did:plc:bob", .rkey = "y"})});
  now_ += limits_.heartbeat;
  turn();
  auto events = events_of(answer->text);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].event, "cursor");
  EXPECT_EQ(events[1].id, 2) << "a quiet repo's stream resumes near the tip";
  EXPECT_NE(answer->text.find(":\n"), std::string::npos) << "a comment line for proxies";
  // Nothing new: no id again (ids never repeat).
  now_ += limits_.heartbeat;
  turn();
  events = events_of(answer->text);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_FALSE(events[2].id.has_value());
}

TEST_F(StreamFollowTest, CatchUpRunsInPagesUnderTheBufferBoundWithNothingTwice) {
  follower_ = make({.buffer_bytes = 16 * 1024});
  std::vector<schema::RecordOp> ops;
  for (int i = 0; i < 2500; ++i) ops.push_back(upsert({.rkey = "n" + std::to_string(i)}));
  apply(std::move(ops));
  auto answer = open(0);
  answer->holding = true;
  int turns = 0;
  while (change_ids(*answer).size() < 2500 && turns < 10'000) {
    turn();
    EXPECT_LE(answer->waiting, 16u * 1024 + 16u * 1024) << "a page stops near the bound";
    answer->drain();
    ++turns;
  }
  const auto ids = change_ids(*answer);
  ASSERT_EQ(ids.size(), 2500u);
  for (std::size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(ids[i], static_cast<std::int64_t>(i + 1));
  EXPECT_GT(turns, 10) << "in pages, not at once";
  EXPECT_FALSE(follower_->any_behind()) << "its last page read to the repo's last change";
  turn();
  EXPECT_EQ(change_ids(*answer).size(), 2500u);
}

TEST_F(StreamFollowTest, AClientThatStopsReadingIsClosedAfterTheStallAndCostsNoReads) {
  follower_ = make({.buffer_bytes = 4096, .stall = std::chrono::seconds(30)});
  auto answer = open(std::nullopt);
  answer->holding = true;
  answer->waiting = 5000;  // past the bound
  turn(apply({upsert({.rkey = "a"})}));
  EXPECT_TRUE(change_ids(*answer).empty()) << "nothing more is read for it";
  now_ += std::chrono::seconds(29);
  turn();
  EXPECT_FALSE(answer->ended);
  now_ += std::chrono::seconds(2);
  turn();
  EXPECT_TRUE(answer->ended);
  EXPECT_TRUE(answer->aborted) << "its queue dropped, its connection closed";
  EXPECT_EQ(counters_.closed[static_cast<std::size_t>(StreamEnd::kStalled)].load(), 1);
  EXPECT_EQ(follower_->size(), 0u);
}

TEST_F(StreamFollowTest, AReaderWhoseRefillsKeepItPastTheBoundIsNotStalled) {
  follower_ = make({.buffer_bytes = 4096, .stall = std::chrono::seconds(1)});
  std::vector<schema::RecordOp> ops;
  const std::string text(6000, 'x');  // each event alone is past the bound
  for (int i = 0; i < 40; ++i)
    ops.push_back(upsert({.rkey = "n" + std::to_string(i), .text = text}));
  apply(std::move(ops));
  auto answer = open(0);
  answer->holding = true;
  for (int i = 0; i < 20; ++i) {
    answer->drain();  // the client took what was queued...
    turn();           // ...and the stream is refilled past the bound, where the sweep finds it
    EXPECT_GT(answer->waiting, 4096u);
    now_ += std::chrono::milliseconds(400);
  }
  EXPECT_FALSE(answer->ended) << "eight seconds past the bound at every sweep, and still reading";
  EXPECT_EQ(change_ids(*answer).size(), 20u);
}

TEST_F(StreamFollowTest, CatchUpTakesTurnsAndNeverDelaysALiveChange) {
  std::vector<schema::RecordOp> ops;
  for (int i = 0; i < 3000; ++i)
    ops.push_back(upsert({.did = "did:plc:bob", .rkey = "n" + std::to_string(i)}));
  turn(apply(std::move(ops)));  // told: nothing to search for
  // Twenty catching up from the start of bob's 3000 changes, each on a
  // cursor of its own, and one following alice live.
  std::vector<std::shared_ptr<RecordingAnswer>> behind;
  for (int i = 0; i < 20; ++i)
    behind.push_back(open(i, "did:plc:bob", "10.0.0." + std::to_string(i)));
  auto live = open(std::nullopt);
  turn();
  turn(apply({upsert({.rkey = "now"})}));
  EXPECT_EQ(change_ids(*live).size(), 1u) << "the live change, in the turn it was told";
  std::size_t progressed = 0;
  for (const auto& answer : behind) progressed += change_ids(*answer).empty() ? 0 : 1;
  EXPECT_LT(progressed, 20u) << "not every catch-up in one turn";
  // A change told to the repo they catch up on reads nothing more for them
  // than their turn's pages.
  std::vector<std::size_t> had;
  for (const auto& answer : behind) had.push_back(change_ids(*answer).size());
  turn(apply({upsert({.did = "did:plc:bob", .rkey = "live"})}));
  std::size_t read = 0;
  for (std::size_t i = 0; i < behind.size(); ++i) read += change_ids(*behind[i]).size() > had[i];
  EXPECT_LE(read, 8u) << "still their turn's pages, not a page each";
  for (int i = 0; i < 200; ++i) turn();
  for (const auto& answer : behind)
    EXPECT_EQ(change_ids(*answer).size(), 3001u - (&answer - &behind[0]));
}

TEST_F(StreamFollowTest, AClientGoneIsForgottenAtTheSweep) {
  auto answer = open(std::nullopt);
  answer->gone = true;
  now_ += std::chrono::seconds(2);
  turn();
  EXPECT_EQ(follower_->size(), 0u);
  EXPECT_EQ(counters_.closed[static_cast<std::size_t>(StreamEnd::kClient)].load(), 1);
}

TEST_F(StreamFollowTest, ShutdownTellsEveryStreamWithARetryOfOneToFiveSeconds) {
  auto one = open(std::nullopt);
  auto two = open(std::nullopt, "did:plc:bob");
  follower_->shut_down();
  for (const auto& answer : {one, two}) {
    const auto events = events_of(answer->text);
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events.back().event, "info");
    EXPECT_EQ(events.back().data["name"], "ServerShutdown");
    ASSERT_TRUE(events.back().retry.has_value());
    EXPECT_GE(*events.back().retry, 1000);
    EXPECT_LE(*events.back().retry, 5000);
    EXPECT_TRUE(answer->ended);
    EXPECT_FALSE(answer->aborted);
  }
  EXPECT_EQ(counters_.closed[static_cast<std::size_t>(StreamEnd::kShutdown)].load(), 2);
}

TEST_F(StreamFollowTest, StreamsAtOneCursorShareTheirReadAndGetTheSameText) {
  auto a = open(std::nullopt);
  auto b = open(std::nullopt, "did:plc:alice", "9.9.9.9");
  turn(apply({upsert({.rkey = "a"}), upsert({.rkey = "b"})}));
  EXPECT_EQ(change_ids(*a), (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(a->text, b->text);
}

}  // namespace
}  // namespace bulleted::appview
