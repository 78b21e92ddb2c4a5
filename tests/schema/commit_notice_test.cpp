// The store's post-commit notice: which repos a commit of apply() changed,
// with their last change sequence, told once the outermost transaction has
// committed (never for one rolled back, nor for a batch that changed
// nothing). What live streams wait on.
#include <gtest/gtest.h>

#include "schema/sqlite.hpp"
#include "schema/store.hpp"
#include "tests/support/store_fixtures.hpp"
#include "tests/support/temp_dir.hpp"

namespace bulleted::schema {
namespace {

using testing::upsert;

class CommitNoticeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(*Store::open(dir_.file("index.db")));
    store_->set_commit_listener([this](const CommitNotice& notice) { heard_.push_back(notice); });
  }
  void apply(std::vector<RecordOp> ops) {
    ApplyBatch batch;
    batch.ops = std::move(ops);
    ASSERT_TRUE(store_->apply(batch).has_value());
  }
  std::int64_t last_seq(const std::string& did) {
    auto changes = store_->read().changes(did, std::nullopt, 1000);
    return changes->changes.empty() ? 0 : changes->changes.back().seq;
  }

  testing::TempDir dir_;
  std::unique_ptr<Store> store_;
  std::vector<CommitNotice> heard_;
};

TEST_F(CommitNoticeTest, EachCommitTellsTheReposItChangedAndWhereTheirChangesReached) {
  apply(
      {upsert({.rkey = "a"}), upsert({.rkey = "b"}), upsert({.did = "did:plc:bob", .rkey = "x"})});
  ASSERT_EQ(heard_.size(), 1u);
  const auto& repos = heard_[0].repos;
  ASSERT_EQ(repos.size(), 2u);
  EXPECT_EQ(repos[0],
            (std::pair<std::string, std::int64_t>{"did:plc:alice", last_seq("did:plc:alice")}));
  EXPECT_EQ(repos[1],
            (std::pair<std::string, std::int64_t>{"did:plc:bob", last_seq("did:plc:bob")}));
  // A replay changes nothing: nothing is told.
  apply({upsert({.rkey = "a"})});
  EXPECT_EQ(heard_.size(), 1u);
  // A delete is a change.
  apply({testing::remove("did:plc:alice", "a", 2)});
  ASSERT_EQ(heard_.size(), 2u);
  EXPECT_EQ(heard_[1].repos.front().second, last_seq("did:plc:alice"));
}

TEST_F(CommitNoticeTest, InsideACallersTransactionItWaitsForTheCommitAndGoesWithARollback) {
  {
    auto tx = store_->begin_write();
    ASSERT_TRUE(tx.has_value());
    EXPECT_TRUE(store_->in_write_transaction());
    apply({upsert({.rkey = "a"})});
    EXPECT_TRUE(heard_.empty()) << "not committed yet";
    // Dropped without a commit: rolled back, and nothing is told.
  }
  EXPECT_FALSE(store_->in_write_transaction());
  EXPECT_TRUE(heard_.empty());
  auto tx = store_->begin_write();
  ASSERT_TRUE(tx.has_value());
  apply({upsert({.rkey = "b"})});
  apply({upsert({.did = "did:plc:bob", .rkey = "x"})});
  EXPECT_TRUE(heard_.empty());
  ASSERT_TRUE(tx->commit().has_value());
  ASSERT_EQ(heard_.size(), 1u) << "one notice for the one commit";
  EXPECT_EQ(heard_[0].repos.size(), 2u);
}

TEST_F(CommitNoticeTest, NoticesCoverTheChangeSequenceWithoutGapsAndStatusesAreTold) {
  apply({upsert({.rkey = "a"}), upsert({.rkey = "b"})});
  apply({upsert({.rkey = "a", .text = "edited", .rev = 2})});
  ASSERT_EQ(heard_.size(), 2u);
  EXPECT_EQ(heard_[0].from, 0);
  EXPECT_EQ(heard_[0].to, 2);
  EXPECT_EQ(heard_[1].from, 2) << "the next commit starts where the last ended";
  EXPECT_EQ(heard_[1].to, 3);
  auto sequence = store_->read().change_sequence();
  ASSERT_TRUE(sequence.has_value());
  EXPECT_EQ(*sequence, 3);
  // A status alone: its repo, no change of the sequence.
  ASSERT_TRUE(store_->set_repo_status("did:plc:alice", RepoStatus::kDeactivated).has_value());
  ASSERT_EQ(heard_.size(), 3u);
  EXPECT_EQ(heard_[2].repos,
            (std::vector<std::pair<std::string, std::int64_t>>{{"did:plc:alice", 0}}));
  EXPECT_EQ(heard_[2].from, 3);
  EXPECT_EQ(heard_[2].to, 3);
}

}  // namespace
}  // namespace bulleted::schema
