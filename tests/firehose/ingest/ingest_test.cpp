// The ingest path on captured streams: replaying the frames yields exactly
// the PDS's final state; replays and duplicates change nothing; account
// events hide, restore and remove; gaps ask for a resync.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "firehose/ingestor.hpp"
#include "schema/store.hpp"
#include "schema/syntax.hpp"
#include "tests/support/files.hpp"
#include "tests/support/temp_dir.hpp"

namespace bulleted::firehose {
namespace {

using nlohmann::json;

class IngestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = schema::Store::open(dir_.file("index.db"));
    ASSERT_TRUE(opened.has_value());
    store_ = std::move(*opened);
    ingestor_ = std::make_unique<Ingestor>(*store_, IngestOptions{.max_batch_events = 7}, metrics_);
    ASSERT_TRUE(ingestor_->start().has_value());
  }

  // `predecode`: records read ahead, as the consumer's socket thread does.
  void feed(const std::string& capture, bool predecode = false) {
    for (const auto& file : testing::frame_files(capture)) {
      auto event = decode_frame(testing::read_file(file));
      ASSERT_TRUE(event.has_value()) << file;
      if (predecode) predecode_records(*event);
      ASSERT_TRUE(ingestor_->add(std::move(*event)).has_value()) << file;
    }
    ASSERT_TRUE(ingestor_->flush().has_value());
  }

  // (rkey -> cid, text, sortKey) of every visible node of a repo, by paging.
  std::map<std::string, std::tuple<std::string, std::string, std::string>> indexed(
      const std::string& did) {
    std::map<std::string, std::tuple<std::string, std::string, std::string>> out;
    const auto records = store_->read().indexed_records(did);
    for (const auto& record : *records) {
      auto node = store_->read().node(did, record.rkey);
      if (!node) continue;  // hidden
      out[node->rkey] = {node->cid, node->text, node->sort_key_raw.value_or("<none>")};
    }
    return out;
  }

  void expect_final_state(const std::string& path) {
    const json expected = testing::read_json(testing::fixture_path(path));
    ASSERT_FALSE(expected.empty());
    for (const auto& [did, repo] : expected.items()) {
      std::map<std::string, std::tuple<std::string, std::string, std::string>> want;
      for (const auto& record : repo["records"]) {
        const std::string uri = record["uri"];
        const std::string rkey = uri.substr(uri.rfind('/') + 1);
        const json& value = record["value"];
        want[rkey] = {record["cid"], value["text"],
                      value.contains("sortKey") && value["sortKey"].is_string()
                          ? value["sortKey"].get<std::string>()
                          : "<none>"};
      }
      EXPECT_EQ(indexed(did), want) << did;
      EXPECT_EQ((*store_->read().repo(did))->rev, repo["head"]["rev"]) << did;
    }
  }

  testing::TempDir dir_;
  std::unique_ptr<schema::Store> store_;
  FirehoseMetrics metrics_;
  std::unique_ptr<Ingestor> ingestor_;
};

TEST_F(IngestTest, ReplayFromZeroYieldsTheFinalState) {
  feed("firehose/replay-cursor0");
  expect_final_state("firehose/run/expected-final-state.json");
  EXPECT_EQ(metrics_.ops_stale.load(), 0u);
  EXPECT_EQ(metrics_.last_seq.load(), 44);
  EXPECT_EQ(**store_->read().cursor("firehose"), 44);
  EXPECT_GT(metrics_.applied[0].load(), 10u);
  // Account creation commits carry no node op: skipped without reading a CAR.
  EXPECT_GE(metrics_.skipped[0].load(), 2u);
}

TEST_F(IngestTest, RecordsReadAheadYieldTheSameState) {
  feed("firehose/replay-cursor0", true);
  expect_final_state("firehose/run/expected-final-state.json");
  EXPECT_EQ(metrics_.ops_stale.load(), 0u);
  EXPECT_EQ(**store_->read().cursor("firehose"), 44);
}

TEST_F(IngestTest, MalformedSortKeysSortLast) {
  feed("firehose/replay-cursor0");
  const json expected =
      testing::read_json(testing::fixture_path("firehose/run/expected-final-state.json"));
  for (const auto& [did, repo] : expected.items()) {
    auto top = store_->read().children({.did = did, .limit = 1000});
    ASSERT_TRUE(top.has_value());
    bool seen_invalid = false;
    for (const auto& node : top->nodes) {
      if (!node.sort_key_valid)
        seen_invalid = true;
      else
        EXPECT_FALSE(seen_invalid) << "valid key " << node.sort_key << " after an invalid one";
    }
  }
}

TEST_F(IngestTest, ReposFirstSeenAtTheirFirstRecordsNeedNoBackfill) {
  // The live capture starts after both accounts were made (their first
  // commits, without records, are not in it) and before their first writes:
  // each repo's first commit here builds on the empty tree, which its
  // verified ops prove, so nothing before it is missing.
  feed("firehose/live");
  EXPECT_TRUE(ingestor_->take_resync_requests().empty());
  expect_final_state("firehose/run/expected-final-state.json");
  // A getRepo CAR of the same repo changes nothing.
  const std::string alice = testing::read_json(
      testing::fixture_path("firehose/run/alice-repo.car.json"))["commit"]["did"];
  const std::string before = *store_->read().dump();
  auto applied = ingestor_->resync_from_car(
      testing::read_file(testing::fixture_path("firehose/run/alice-repo.car")), alice);
  ASSERT_TRUE(applied.has_value()) << applied.error().message;
  EXPECT_EQ(*store_->read().dump(), before);
}

TEST_F(IngestTest, ReplayingAgainChangesNothing) {
  feed("firehose/replay-cursor0");
  const std::string once = *store_->read().dump();
  const auto applied = metrics_.ops_applied.load();
  // The same frames again: every event is at or below the cursor.
  feed("firehose/replay-cursor0");
  EXPECT_EQ(*store_->read().dump(), once);
  EXPECT_EQ(metrics_.ops_applied.load(), applied);
  // Every frame of the capture carries a seq, so every one is a duplicate.
  EXPECT_EQ(metrics_.duplicate_events.load(),
            testing::frame_files("firehose/replay-cursor0").size());
  // A fresh ingestor over the same store resumes after the stored cursor.
  Ingestor again(*store_, {}, metrics_);
  ASSERT_TRUE(again.start().has_value());
  EXPECT_EQ(again.resume_cursor(), 44);
}

TEST_F(IngestTest, AccountEventsHideRestoreAndRemove) {
  // Frames 1..30: both accounts and all of alice's writes, bob's node.
  const auto files = testing::frame_files("firehose/replay-cursor0");
  for (std::size_t i = 0; i < files.size(); ++i) {
    auto event = decode_frame(testing::read_file(files[i]));
    ASSERT_TRUE(ingestor_->add(std::move(*event)).has_value());
    ASSERT_TRUE(ingestor_->flush().has_value());
  }
  const json expected =
      testing::read_json(testing::fixture_path("firehose/run/expected-final-state.json"));
  std::string bob;
  for (const auto& [did, repo] : expected.items()) {
    if (repo["handle"] == "bob.test") bob = did;
  }
  ASSERT_FALSE(bob.empty());
  // After the takedown reversal bob is visible: take him down again by hand.
  AccountEvent takedown{.seq = 1000,
                        .did = bob,
                        .time = "2026-11-30T10:00:00.000Z",
                        .active = false,
                        .status = "takendown"};
  ASSERT_TRUE(ingestor_->add(takedown).has_value());
  EXPECT_TRUE(indexed(bob).empty());
  EXPECT_EQ(store_->read().children({.did = bob})->nodes.size(), 0u);
  AccountEvent reactivate{
      .seq = 1001, .did = bob, .time = "2026-11-30T10:00:01.000Z", .active = true};
  ASSERT_TRUE(ingestor_->add(reactivate).has_value());
  EXPECT_EQ(indexed(bob).size(), expected[bob]["records"].size());
  AccountEvent removal{.seq = 1002,
                       .did = bob,
                       .time = "2026-11-30T10:00:02.000Z",
                       .active = false,
                       .status = "deleted"};
  ASSERT_TRUE(ingestor_->add(removal).has_value());
  EXPECT_TRUE(store_->read().indexed_records(bob)->empty());
}

TEST_F(IngestTest, AGapAsksForAResyncAndHoldsTheRepo) {
  const auto files = testing::frame_files("firehose/replay-cursor0");
  // Skip one of alice's commits (frame 12): the next one does not follow.
  std::string alice;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (i == 11) continue;
    auto event = decode_frame(testing::read_file(files[i]));
    if (auto* commit = std::get_if<CommitEvent>(&*event); commit && alice.empty())
      alice = commit->repo;
    ASSERT_TRUE(ingestor_->add(std::move(*event)).has_value());
  }
  ASSERT_TRUE(ingestor_->flush().has_value());
  auto wanted = ingestor_->take_resync_requests();
  ASSERT_EQ(wanted, std::vector<std::string>{alice});
  EXPECT_EQ((*store_->read().repo(alice))->sync_state, schema::SyncState::kDesynchronized);
  // The resync from the repo's CAR brings the index to the repo's state.
  auto snapshot =
      read_repo(testing::read_file(testing::fixture_path("firehose/run/alice-repo.car")), alice);
  ASSERT_TRUE(snapshot.has_value()) << snapshot.error().message;
  ASSERT_TRUE(ingestor_->apply_resync(*snapshot).has_value());
  EXPECT_EQ((*store_->read().repo(alice))->sync_state, schema::SyncState::kSynced);
  const json expected =
      testing::read_json(testing::fixture_path("firehose/run/expected-final-state.json"));
  EXPECT_EQ(indexed(alice).size(), expected[alice]["records"].size());
  EXPECT_TRUE(ingestor_->take_resync_requests().empty());
}

TEST_F(IngestTest, AnUnfinishedResyncIsAskedForAgainAfterARestart) {
  const auto files = testing::frame_files("firehose/replay-cursor0");
  std::string alice;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (i == 11) continue;  // a gap in alice's chain
    auto event = decode_frame(testing::read_file(files[i]));
    if (auto* commit = std::get_if<CommitEvent>(&*event); commit && alice.empty())
      alice = commit->repo;
    ASSERT_TRUE(ingestor_->add(std::move(*event)).has_value());
  }
  ASSERT_TRUE(ingestor_->flush().has_value());
  ASSERT_EQ(ingestor_->take_resync_requests(), std::vector<std::string>{alice});
  // The process stops here, before the resync; the cursor is already past
  // the held commits. A new ingestor must ask for the resync again.
  Ingestor restarted(*store_, {}, metrics_);
  ASSERT_TRUE(restarted.start().has_value());
  EXPECT_EQ(restarted.take_resync_requests(), std::vector<std::string>{alice});
}

TEST_F(IngestTest, CommitsTheAppViewWroteItselfAreSkipped) {
  // pds mode: a commit applied from the PDS's answer is noted; its firehose
  // echo (and anything older) is a skip, not a gap, and applies nothing.
  const auto files = testing::frame_files("firehose/replay-cursor0");
  std::vector<CommitEvent> commits;
  for (const auto& file : files) {
    auto event = decode_frame(testing::read_file(file));
    ASSERT_TRUE(event.has_value());
    if (auto* commit = std::get_if<CommitEvent>(&*event)) commits.push_back(*commit);
  }
  ASSERT_GE(commits.size(), 3u);
  // The repo's second commit with ops "was written by us".
  std::vector<const CommitEvent*> with_ops;
  for (const auto& commit : commits) {
    if (!commit.ops.empty() && (with_ops.empty() || commit.repo == with_ops[0]->repo)) {
      with_ops.push_back(&commit);
    }
  }
  ASSERT_GE(with_ops.size(), 2u);
  const CommitEvent& marked = *with_ops[1];
  WrittenRevs written;
  Ingestor ingestor(*store_, {.written = &written}, metrics_);
  ASSERT_TRUE(ingestor.start().has_value());
  // The second commit of the stream "was written by us": noted before the
  // stream reaches it, so both it and the first (older) are skipped.
  const std::string did = marked.repo;
  written.note(did, marked.rev);
  written.note(did, "1111111111111");  // an older note never lowers the mark
  EXPECT_EQ(written.newest(did), marked.rev);
  const auto skipped_before = metrics_.skipped[0].load();
  std::size_t expected_skips = 0;
  for (const auto& commit : commits) {
    // Skipped: the written ones and older, and commits with no node in them.
    const bool touches_nodes =
        std::any_of(commit.ops.begin(), commit.ops.end(),
                    [](const auto& op) { return op.collection == schema::kNodeCollection; });
    if ((commit.repo == did && commit.rev <= marked.rev) || !touches_nodes) ++expected_skips;
    ASSERT_TRUE(ingestor.add(commit).has_value());
  }
  ASSERT_TRUE(ingestor.flush().has_value());
  EXPECT_EQ(metrics_.skipped[0].load() - skipped_before, expected_skips);
  EXPECT_TRUE(ingestor.take_resync_requests().empty()) << "the skip is not a gap";
}

}  // namespace
}  // namespace bulleted::firehose
