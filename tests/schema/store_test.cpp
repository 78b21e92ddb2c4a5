// The SQLite index: migrations, idempotent apply, and every read, on a real
// database file.
#include "schema/store.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "ordering/order_key.hpp"
#include "schema/migrations.hpp"
#include "schema/sqlite.hpp"
#include "tests/support/index_fixture.hpp"
#include "tests/support/store_fixtures.hpp"
#include "tests/support/store_internals.hpp"
#include "tests/support/temp_dir.hpp"

namespace bulleted::schema {
namespace {

using testing::NodeSpec;
using testing::upsert;

class StoreTest : public testing::IndexTest {
 protected:
  std::vector<std::string> rkeys(const std::vector<NodeRow>& rows) {
    std::vector<std::string> out;
    for (const auto& row : rows) out.push_back(row.rkey);
    return out;
  }
};

TEST_F(StoreTest, OpensWithWalAndTheLatestSchema) {
  {
    auto mode = bulleted::testing::database_of(*store_).prepare("PRAGMA journal_mode");
    ASSERT_TRUE(mode.has_value());
    ASSERT_TRUE(*(*mode)->step());
    EXPECT_EQ((*mode)->text(0), "wal");
    auto version = bulleted::testing::database_of(*store_).prepare("PRAGMA user_version");
    ASSERT_TRUE(*(*version)->step());
    EXPECT_EQ((*version)->integer(0), Store::schema_version());
  }
  // Reopening an up-to-date file changes nothing.
  store_.reset();
  EXPECT_TRUE(Store::open(dir_.file("index.db")).has_value());
}

// Regression: a read must not leave its statement open, or the connection
// keeps a stale snapshot (later reads miss new rows, writes fail busy).
TEST_F(StoreTest, ReadsOnOneConnectionSeeWritesOfAnother) {
  auto reader = Store::open(dir_.file("index.db"));
  ASSERT_TRUE(reader.has_value());
  apply({upsert({.rkey = "a", .sort_key = "a0"}), upsert({.rkey = "b", .sort_key = "a1"})});
  // Partial reads: a sibling-key page smaller than the group.
  auto first =
      (*reader)->read().sibling_keys(schema::root_group("did:plc:alice"), std::nullopt, false, 1);
  ASSERT_TRUE(first.has_value());
  ASSERT_EQ(first->size(), 1u);
  ASSERT_TRUE((*reader)->read().sibling_key_at(schema::root_group("did:plc:alice"), 0).has_value());
  apply({upsert({.rkey = "c", .sort_key = "a2"})});
  auto page = (*reader)->read().children({.did = "did:plc:alice"});
  ASSERT_TRUE(page.has_value());
  EXPECT_EQ(rkeys(page->nodes), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE((*reader)->check_writable().has_value());
}

TEST_F(StoreTest, WritabilityIsSeenWithoutWaitingBehindAWriter) {
  // Another connection holds the write lock (an ingest batch, an import):
  // the check answers at once that the file takes writes, instead of waiting
  // out the busy timeout and calling it unusable.
  auto other = Store::open(dir_.file("index.db"), {.busy_timeout_ms = 60'000});
  ASSERT_TRUE(other.has_value());
  auto held = schema::Transaction::begin(bulleted::testing::database_of(*store_),
                                         schema::Transaction::Kind::kWrite);
  ASSERT_TRUE(held.has_value());
  EXPECT_TRUE((*other)->check_writable().has_value());
  ASSERT_TRUE(held->commit().has_value());
  EXPECT_TRUE((*other)->check_writable().has_value());
}

TEST_F(StoreTest, TransactionsBegunInsideAnotherAreItsSavepoints) {
  Database& db = bulleted::testing::database_of(*store_);
  ASSERT_TRUE(db.exec("CREATE TABLE scratch (x INTEGER)").has_value());
  auto other = Store::open(dir_.file("index.db"));
  ASSERT_TRUE(other.has_value());
  auto values = [](Database& on) {
    auto rows = query_texts(on, "SELECT x FROM scratch ORDER BY x");
    EXPECT_TRUE(rows.has_value());
    return rows.value_or(std::vector<std::string>{});
  };
  {
    auto outer = Transaction::begin(db, Transaction::Kind::kWrite);
    ASSERT_TRUE(outer.has_value());
    ASSERT_TRUE(db.exec("INSERT INTO scratch VALUES (1)").has_value());
    {
      // Dropped without a commit: only its own insert goes.
      auto inner = Transaction::begin(db, Transaction::Kind::kWrite);
      ASSERT_TRUE(inner.has_value());
      ASSERT_TRUE(db.exec("INSERT INTO scratch VALUES (2)").has_value());
    }
    {
      auto inner = Transaction::begin(db, Transaction::Kind::kWrite);
      ASSERT_TRUE(inner.has_value());
      ASSERT_TRUE(db.exec("INSERT INTO scratch VALUES (3)").has_value());
      ASSERT_TRUE(inner->commit().has_value());
    }
    EXPECT_EQ(values(db), (std::vector<std::string>{"1", "3"}));
    // Committed inside, still the outer transaction's to commit.
    EXPECT_TRUE(values(bulleted::testing::database_of(**other)).empty());
    ASSERT_TRUE(outer->commit().has_value());
  }
  EXPECT_EQ(values(bulleted::testing::database_of(**other)), (std::vector<std::string>{"1", "3"}));

  // A write never nests inside a read.
  auto read = Transaction::begin(db, Transaction::Kind::kRead);
  ASSERT_TRUE(read.has_value());
  auto write = Transaction::begin(db, Transaction::Kind::kWrite);
  ASSERT_FALSE(write.has_value());
  EXPECT_EQ(write.error().code, ErrorCode::kInternal);
}

TEST_F(StoreTest, AWriteScopeHoldsTheStoresOwnWritesUntilItCommits) {
  auto other = Store::open(dir_.file("index.db"));
  ASSERT_TRUE(other.has_value());
  auto scope = store_->begin_write();
  ASSERT_TRUE(scope.has_value());
  apply({upsert({.rkey = "a", .sort_key = "a0"})});
  // The store reads its own write; another connection does not see it yet.
  EXPECT_TRUE(store_->read().node("did:plc:alice", "a").has_value());
  EXPECT_FALSE((*other)->read().node("did:plc:alice", "a").has_value());
  ASSERT_TRUE(scope->commit().has_value());
  EXPECT_TRUE((*other)->read().node("did:plc:alice", "a").has_value());
  // And a scope dropped uncommitted leaves nothing behind.
  {
    auto dropped = store_->begin_write();
    ASSERT_TRUE(dropped.has_value());
    apply({upsert({.rkey = "b", .sort_key = "a1"})});
  }
  EXPECT_FALSE(store_->read().node("did:plc:alice", "b").has_value());
  EXPECT_FALSE((*other)->read().node("did:plc:alice", "b").has_value());
}

TEST_F(StoreTest, RefusesANewerSchema) {
  ASSERT_TRUE(
      bulleted::testing::database_of(*store_).exec("PRAGMA user_version = 999").has_value());
  store_.reset();
  auto reopened = Store::open(dir_.file("index.db"));
  ASSERT_FALSE(reopened.has_value());
  EXPECT_EQ(reopened.error().code, ErrorCode::kSchemaTooNew);
  EXPECT_NE(reopened.error().message.find("999"), std::string::npos);
}

TEST_F(StoreTest, ApplyOnlyNewerRevs) {
  apply({upsert({.rkey = "a", .text = "v2", .rev = 2})});
  ApplyBatch older;
  older.ops = {upsert({.rkey = "a", .text = "v1", .rev = 1}),
               upsert({.rkey = "a", .text = "v2 again", .rev = 2})};
  auto outcome = store_->apply(older);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->applied, 0u);
  EXPECT_EQ(outcome->stale, 2u);
  EXPECT_EQ(store_->read().node("did:plc:alice", "a")->text, "v2");
  // Delete at rev 3 leaves a tombstone: a replayed create at rev 2 stays dead.
  apply({testing::remove("did:plc:alice", "a", 3), upsert({.rkey = "a", .rev = 2})});
  EXPECT_EQ(store_->read().node("did:plc:alice", "a").error().code, ErrorCode::kNotFound);
  // A newer create brings it back.
  apply({upsert({.rkey = "a", .text = "v4", .rev = 4})});
  EXPECT_EQ(store_->read().node("did:plc:alice", "a")->text, "v4");
  // A late delete, older than the row or as old, leaves it and its place in
  // the changes feed alone.
  const auto seq = store_->read().node("did:plc:alice", "a")->change_seq;
  ApplyBatch late;
  late.ops = {testing::remove("did:plc:alice", "a", 3), testing::remove("did:plc:alice", "a", 4)};
  outcome = store_->apply(late);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->applied, 0u);
  EXPECT_EQ(outcome->stale, 2u);
  EXPECT_EQ(store_->read().node("did:plc:alice", "a")->text, "v4");
  EXPECT_EQ(store_->read().node("did:plc:alice", "a")->change_seq, seq);
  apply({upsert({.rkey = "b", .rev = 5})});
  EXPECT_EQ(store_->read().node("did:plc:alice", "b")->change_seq, seq + 1);
}

TEST_F(StoreTest, CursorCommitsWithTheBatch) {
  ApplyBatch batch;
  batch.ops = {upsert({.rkey = "a"})};
  batch.cursor = std::make_pair(std::string("relay"), std::int64_t{42});
  batch.repo_revs = {{"did:plc:alice", testing::rev(1)}};
  ASSERT_TRUE(store_->apply(batch).has_value());
  EXPECT_EQ(**store_->read().cursor("relay"), 42);
  EXPECT_FALSE(store_->read().cursor("other")->has_value());
  EXPECT_EQ((*store_->read().repo("did:plc:alice"))->rev, testing::rev(1));
  // A repo rev never moves backwards.
  batch.ops.clear();
  batch.repo_revs = {{"did:plc:alice", testing::rev(0)}};
  ASSERT_TRUE(store_->apply(batch).has_value());
  EXPECT_EQ((*store_->read().repo("did:plc:alice"))->rev, testing::rev(1));
}

TEST_F(StoreTest, ChildCountsAreKeptWithTheRowsThroughEveryChange) {
  auto count_of = [&](const std::string& rkey) {
    auto node = store_->read().node("did:plc:alice", rkey);
    EXPECT_TRUE(node.has_value()) << rkey;
    return node ? node->child_count : -1;
  };
  apply({upsert({.rkey = "p"}), upsert({.rkey = "q"}), upsert({.rkey = "c1", .parent_rkey = "p"}),
         upsert({.rkey = "c2", .parent_rkey = "p"}), upsert({.rkey = "c3", .parent_rkey = "p"})});
  EXPECT_EQ(count_of("p"), 3);
  EXPECT_EQ(count_of("q"), 0);
  // A move to another parent, an edit in place, a stale op, a delete.
  apply({upsert({.rkey = "c1", .parent_rkey = "q", .rev = 2})});
  apply({upsert({.rkey = "c2", .parent_rkey = "p", .text = "edited", .rev = 2})});
  apply({upsert({.rkey = "c3", .parent_rkey = "q", .rev = 0})});  // older: ignored
  EXPECT_EQ(count_of("p"), 2);
  EXPECT_EQ(count_of("q"), 1);
  apply({testing::remove("did:plc:alice", "c2", 3)});
  apply({testing::remove("did:plc:alice", "c2", 4)});  // again: nothing to remove
  EXPECT_EQ(count_of("p"), 1);
  // Children arriving before their parent are counted once it arrives.
  apply({upsert({.rkey = "e1", .parent_rkey = "late"}),
         upsert({.rkey = "e2", .parent_rkey = "late"})});
  apply({upsert({.rkey = "late"})});
  EXPECT_EQ(count_of("late"), 2);
  // A group emptied keeps no count (check would count it as wrong).
  apply({testing::remove("did:plc:alice", "c1", 5)});
  EXPECT_EQ(count_of("q"), 0);
  auto emptied = query_value<std::int64_t>(bulleted::testing::database_of(*store_),
                                           "SELECT n FROM group_counts WHERE grp = ?1",
                                           children_group("did:plc:alice", "q"));
  ASSERT_TRUE(emptied.has_value());
  EXPECT_FALSE(emptied->has_value());
  auto page = store_->read().children({.did = "did:plc:alice"});
  ASSERT_TRUE(page.has_value());
  for (const auto& row : page->nodes) {
    auto children =
        store_->read().children({.did = "did:plc:alice", .parent_rkey = row.rkey, .limit = 1000});
    EXPECT_EQ(row.child_count, static_cast<std::int64_t>(children->nodes.size())) << row.rkey;
  }
  auto report = store_->integrity_report();
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->wrong_counts, 0);
  EXPECT_TRUE(report->ok());
  // A deleted repo takes its counts with it.
  ASSERT_TRUE(store_->set_repo_status("did:plc:alice", RepoStatus::kDeleted).has_value());
  auto left = query_value<std::int64_t>(bulleted::testing::database_of(*store_),
                                        "SELECT COUNT(*) FROM group_counts");
  ASSERT_TRUE(left.has_value());
  EXPECT_EQ(left->value_or(-1), 0);
  // A count that no longer matches its group is corruption `check` reports.
  apply({upsert({.did = "did:plc:bob", .rkey = "b"}),
         upsert({.did = "did:plc:bob", .rkey = "b1", .parent_rkey = "b"})});
  ASSERT_TRUE(bulleted::testing::database_of(*store_)
                  .exec("UPDATE group_counts SET n = n + 1")
                  .has_value());
  report = store_->integrity_report();
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->wrong_counts, 2);
  EXPECT_FALSE(report->ok());
}

TEST_F(StoreTest, RepoStatusHidesRestoresAndRemoves) {
  apply({upsert({.rkey = "a"}), upsert({.rkey = "b", .parent_rkey = "a"})});
  for (auto status : {RepoStatus::kTakendown, RepoStatus::kSuspended, RepoStatus::kDeactivated}) {
    ASSERT_TRUE(store_->set_repo_status("did:plc:alice", status).has_value());
    EXPECT_EQ(store_->read().node("did:plc:alice", "a").error().code, ErrorCode::kNotFound);
    EXPECT_TRUE(store_->read().children({.did = "did:plc:alice"})->nodes.empty());
    EXPECT_TRUE(store_->read().changes("did:plc:alice", std::nullopt, 10)->changes.empty());
    EXPECT_FALSE(store_->read().subtree({.did = "did:plc:alice"})->node.has_value());
    EXPECT_TRUE(store_->read().subtree({.did = "did:plc:alice"})->children.empty());
    ASSERT_TRUE(store_->set_repo_status("did:plc:alice", RepoStatus::kActive).has_value());
    EXPECT_EQ(store_->read().node("did:plc:alice", "a")->child_count, 1);
  }
  ASSERT_TRUE(store_->set_repo_status("did:plc:alice", RepoStatus::kDeleted).has_value());
  EXPECT_EQ(*store_->read().node_count(), 0);
  // Ops for a deleted repo are ignored.
  ApplyBatch late;
  late.ops = {upsert({.rkey = "c", .rev = 9})};
  EXPECT_EQ(store_->apply(late)->ignored, 1u);
  EXPECT_EQ(*store_->read().node_count(), 0);
}

TEST_F(StoreTest, ChangesFeedIncludesDeletes) {
  apply({upsert({.rkey = "a"}), upsert({.rkey = "b"})});
  auto first = store_->read().changes("did:plc:alice", std::nullopt, 10);
  ASSERT_TRUE(first.has_value());
  ASSERT_EQ(first->changes.size(), 2u);
  EXPECT_FALSE(first->changes[0].deleted);
  EXPECT_EQ(first->changes[0].node->rkey, "a");
  apply({testing::remove("did:plc:alice", "a", 2),
         upsert({.rkey = "b", .text = "edited", .rev = 2})});
  auto next = store_->read().changes("did:plc:alice", first->cursor, 10);
  ASSERT_EQ(next->changes.size(), 2u);
  EXPECT_TRUE(next->changes[0].deleted);
  EXPECT_EQ(next->changes[0].rkey, "a");
  EXPECT_EQ(next->changes[1].node->text, "edited");
  auto idle = store_->read().changes("did:plc:alice", next->cursor, 10);
  EXPECT_TRUE(idle->changes.empty());
  EXPECT_EQ(idle->cursor, next->cursor);
  // Pages of one.
  auto one = store_->read().changes("did:plc:alice", std::nullopt, 1);
  EXPECT_EQ(one->changes.size(), 1u);
  // The sequence is the index's: a cursor past it (a restored backup, another
  // app view's cursor) is refused, not echoed.
  EXPECT_EQ(*store_->read().change_sequence(), 4);
  EXPECT_TRUE(store_->read().changes("did:plc:bob", "4", 10).has_value());
  EXPECT_EQ(store_->read().changes("did:plc:alice", "5", 10).error().code,
            ErrorCode::kFutureCursor);
}

// A random stream over a few hundred records, applied once, and applied again
// with duplicates, replayed prefixes and per-record reordering: same index.
TEST_F(StoreTest, ApplyIsIdempotentUnderReplayAndReordering) {
  std::mt19937 rng(12345);
  std::vector<RecordOp> stream;
  const std::vector<std::string> dids = {"did:plc:alice", "did:plc:bob"};
  for (int i = 1; i <= 4000; ++i) {
    const std::string did = dids[rng() % 2];
    const std::string rkey = "r" + std::to_string(rng() % 300);
    if (rng() % 5 == 0) {
      stream.push_back(testing::remove(did, rkey, i));
    } else {
      std::optional<std::string> parent;
      if (rng() % 3 == 0) parent = "r" + std::to_string(rng() % 300);
      stream.push_back(upsert({.did = did,
                               .rkey = rkey,
                               .parent_rkey = parent,
                               .sort_key = "a" + std::string(1, "0123456789abc"[rng() % 13]),
                               .text = "t" + std::to_string(i),
                               .rev = static_cast<std::uint64_t>(i)}));
    }
  }
  auto apply_in_batches = [&](Store& store, const std::vector<RecordOp>& ops) {
    for (std::size_t i = 0; i < ops.size(); i += 97) {
      ApplyBatch batch;
      batch.ops.assign(ops.begin() + i, ops.begin() + std::min(ops.size(), i + 97));
      ASSERT_TRUE(store.apply(batch).has_value());
    }
  };
  apply_in_batches(*store_, stream);
  const std::string once = *store_->read().dump();
  ASSERT_GT(once.size(), 1000u);

  // A different arrival order: shuffle globally (which reorders each record's
  // ops), then append duplicates and replays of random prefixes.
  std::vector<RecordOp> messy = stream;
  std::shuffle(messy.begin(), messy.end(), rng);
  for (int replay = 0; replay < 3; ++replay) {
    const std::size_t prefix = rng() % stream.size();
    messy.insert(messy.end(), stream.begin(), stream.begin() + static_cast<std::ptrdiff_t>(prefix));
  }
  for (int dup = 0; dup < 500; ++dup) messy.push_back(stream[rng() % stream.size()]);
  auto other = Store::open(dir_.file("other.db"));
  ASSERT_TRUE(other.has_value());
  apply_in_batches(**other, messy);
  EXPECT_EQ(*(*other)->read().dump(), once);
  // Applying everything again to the first changes nothing.
  apply_in_batches(*store_, messy);
  EXPECT_EQ(*store_->read().dump(), once);
}

}  // namespace
// Digests that share the indexed selector are told apart by the whole-digest
// comparison; a digest that is a prefix or differs in its last character
// finds nothing.
TEST_F(StoreTest, TokensAndSessionsAreFoundOnlyByTheirWholeDigest) {
  const std::string selector(kDigestSelector, 'a');
  const std::string first = selector + std::string(48, '1');
  const std::string second = selector + std::string(48, '2');
  ASSERT_TRUE(store_->tokens().add(first, "did:plc:first").has_value());
  ASSERT_TRUE(store_->tokens().add(second, "did:plc:second").has_value());
  EXPECT_EQ(store_->tokens().did_of(first).value(), std::optional<std::string>("did:plc:first"));
  EXPECT_EQ(store_->tokens().did_of(second).value(), std::optional<std::string>("did:plc:second"));
  EXPECT_FALSE(store_->tokens().did_of(selector + std::string(47, '1') + "3").value().has_value());
  EXPECT_FALSE(store_->tokens().did_of(selector).value().has_value());
  EXPECT_FALSE(store_->tokens().did_of(first + "0").value().has_value());

  ASSERT_TRUE(
      store_->sessions().put({first, "did:plc:s1", std::nullopt, "http://pds", "a1", "r1"}));
  ASSERT_TRUE(store_->sessions().put({second, "did:plc:s2", "two.test", "http://pds", "a2", "r2"}));
  auto found = store_->sessions().find(second).value();
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->did, "did:plc:s2");
  EXPECT_EQ(found->access_sealed, "a2");
  EXPECT_FALSE(store_->sessions().find(selector + std::string(48, '3')).value().has_value());
}

TEST(ConstantTimeEqual, ComparesWholeStrings) {
  EXPECT_TRUE(constant_time_equal("", ""));
  EXPECT_TRUE(constant_time_equal("abc", "abc"));
  EXPECT_FALSE(constant_time_equal("abc", "abd"));
  EXPECT_FALSE(constant_time_equal("abc", "ab"));
  EXPECT_FALSE(constant_time_equal("xbc", "abc"));
}

}  // namespace bulleted::schema
