// Positions from the counted blocks (schema/positions.hpp) against the order
// itself, through every change that moves a node, on a real database file.
#include "schema/positions.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <tuple>

#include "ordering/order_key.hpp"
#include "ordering/random_source.hpp"
#include "schema/sqlite.hpp"
#include "tests/support/index_fixture.hpp"
#include "tests/support/store_fixtures.hpp"
#include "tests/support/store_internals.hpp"
#include "tests/support/temp_dir.hpp"

namespace bulleted::schema {
namespace {

using testing::upsert;

constexpr const char* kDid = "did:plc:alice";

// What the index should hold: each group's keys in order, kept beside it.
struct Model {
  std::map<std::string, std::set<std::tuple<std::string, std::string>>> groups;
  std::map<std::string, std::pair<std::string, std::string>> where;  // rkey -> (group, key)

  void put(const std::string& group, const std::string& key, const std::string& rkey) {
    drop(rkey);
    groups[group].emplace(key, rkey);
    where[rkey] = {group, key};
  }
  void drop(const std::string& rkey) {
    auto it = where.find(rkey);
    if (it == where.end()) return;
    groups[it->second.first].erase({it->second.second, rkey});
    where.erase(it);
  }
};

// `n` ascending keys, as a bulk insert gets them.
std::vector<std::string> keys(std::size_t n) {
  auto jitter = ordering::Mulberry32::from_seed(static_cast<std::uint32_t>(n));
  return *ordering::n_between(std::nullopt, std::nullopt, n, jitter);
}

// `n` top-level nodes n10000, n10001, ... in that order.
std::vector<RecordOp> ascending(std::size_t n) {
  const auto sorted = keys(n);
  std::vector<RecordOp> ops;
  for (std::size_t i = 0; i < n; ++i) {
    ops.push_back(upsert({.rkey = "n" + std::to_string(10000 + i), .sort_key = sorted[i]}));
  }
  return ops;
}

class PositionsTest : public testing::IndexTest {
 protected:
  std::int64_t blocks(int level) {
    auto n = query_value<std::int64_t>(bulleted::testing::database_of(*store_),
                                       "SELECT count(*) FROM order_blocks WHERE lvl = ?1", level);
    return n && *n ? **n : -1;
  }
  // The largest count of a block at `level`.
  std::int64_t largest_block(int level) {
    auto n = query_value<std::int64_t>(bulleted::testing::database_of(*store_),
                                       "SELECT max(n) FROM order_blocks WHERE lvl = ?1", level);
    return n && *n ? **n : -1;
  }
  // Every position and every index of every group against the model.
  void expect_matches(const Model& model) {
    for (const auto& [group, keys] : model.groups) {
      std::int64_t i = 0;
      for (const auto& [key, rkey] : keys) {
        auto position = store_->read().position(kDid, rkey);
        ASSERT_TRUE(position.has_value()) << position.error().message;
        ASSERT_EQ(position->index, i) << rkey;
        ASSERT_EQ(position->sibling_count, static_cast<std::int64_t>(keys.size()));
        auto at = store_->read().sibling_key_at(group, i);
        ASSERT_TRUE(at.has_value() && *at);
        ASSERT_EQ((*at)->rkey, rkey) << i;
        ++i;
      }
      auto past = store_->read().sibling_key_at(group, i);
      ASSERT_TRUE(past.has_value());
      EXPECT_FALSE(*past);
    }
    auto report = store_->integrity_report();
    ASSERT_TRUE(report.has_value());
    EXPECT_EQ(report->wrong_blocks, 0);
    EXPECT_TRUE(report->ok());
  }

  std::uint64_t rev_ = 1;
};

TEST_F(PositionsTest, SmallGroupsHaveNoBlocks) {
  apply(ascending(kBlockedGroup));
  EXPECT_EQ(blocks(1), 0);
  auto position = store_->read().position(kDid, "n" + std::to_string(10000 + kBlockedGroup / 2));
  ASSERT_TRUE(position.has_value());
  EXPECT_EQ(position->index, kBlockedGroup / 2);
  // One more and the group is counted in blocks.
  auto jitter = ordering::Mulberry32::from_seed(1);
  const std::string after_all =
      *ordering::between(keys(kBlockedGroup).back(), std::nullopt, jitter);
  apply({upsert({.rkey = "n99999", .sort_key = after_all})});
  EXPECT_GT(blocks(1), 1);
  EXPECT_EQ(blocks(2), 1);
  position = store_->read().position(kDid, "n99999");
  ASSERT_TRUE(position.has_value());
  EXPECT_EQ(position->index, kBlockedGroup);
}

// Balance: a block that grows past twice the fan-out is split, whether the
// nodes come one a batch (a lone create) or many to a batch, each block
// then met once whatever number of them it takes.
TEST_F(PositionsTest, BlocksStaySplitWhetherNodesComeOneOrManyABatch) {
  Model model;
  const std::string top = root_group(kDid);
  const auto sorted = keys(kBlockedGroup + 1);
  std::vector<RecordOp> first;
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const std::string rkey = "n" + std::to_string(10000 + i);
    first.push_back(upsert({.rkey = rkey, .sort_key = sorted[i]}));
    model.put(top, sorted[i], rkey);
  }
  apply(std::move(first));
  ASSERT_GT(blocks(1), 1);
  auto jitter = ordering::Mulberry32::from_seed(3);
  std::string last = sorted.back();
  int next = 20000;
  auto append = [&](std::size_t count) {
    std::vector<RecordOp> batch;
    for (std::size_t i = 0; i < count; ++i) {
      last = *ordering::between(last, std::nullopt, jitter);
      const std::string rkey = "n" + std::to_string(next++);
      batch.push_back(upsert({.rkey = rkey, .sort_key = last}));
      model.put(top, last, rkey);
    }
    apply(std::move(batch));
  };
  for (int i = 0; i < 3 * kBlockFanout; ++i) append(1);  // one a batch, into the last block
  EXPECT_LE(largest_block(1), 2 * kBlockFanout);
  append(10 * kBlockFanout);  // one batch, many into the last block
  EXPECT_LE(largest_block(1), 2 * kBlockFanout);
  expect_matches(model);
}

// Appends past two levels of splits, then random inserts, moves within and
// across groups, edits that keep their place, deletes, and a group emptied.
TEST_F(PositionsTest, PositionsMatchTheOrderThroughEveryChange) {
  Model model;
  std::mt19937 rng(7);
  auto jitter = ordering::Mulberry32::from_seed(7);
  const std::string top = root_group(kDid);
  const std::string under_p = children_group(kDid, "p");
  apply({upsert({.rkey = "p", .sort_key = "Zz"})});
  model.put(top, "Zz", "p");
  // Appends: the last block of each level keeps splitting.
  std::string last = "a0";
  int next_rkey = 0;
  auto rkey_of = [](int n) { return "r" + std::to_string(100000 + n); };
  const int appends = static_cast<int>(5 * kBlockFanout * kBlockFanout * kBlockFanout);
  for (int done = 0; done < appends;) {
    std::vector<RecordOp> batch;
    for (int i = 0; i < 500 && done < appends; ++i, ++done) {
      last = *ordering::between(last, std::nullopt, jitter);
      const std::string rkey = rkey_of(next_rkey++);
      batch.push_back(upsert({.rkey = rkey, .parent_rkey = "p", .sort_key = last, .rev = rev_}));
      model.put(under_p, last, rkey);
    }
    apply(std::move(batch));
  }
  EXPECT_GT(blocks(kBlockLevels), 1)
      << "the appends split a block of the top level; levels 1 and 2 have " << blocks(1) << " and "
      << blocks(2);
  expect_matches(model);

  // Random changes, in batches.
  auto random_live = [&]() {
    auto it = model.where.begin();
    std::advance(it, static_cast<long>(rng() % model.where.size()));
    return it->first;
  };
  auto key_near = [&](const std::string& group) {
    // Between two neighbours of the group, or an equal key (a tie broken by
    // the rkey), or an invalid one (sorts last).
    const auto& keys = model.groups[group];
    const int kind = static_cast<int>(rng() % 20);
    if (kind == 0) return std::string("not a key!");
    if (keys.empty()) return std::string("a0");
    auto it = keys.begin();
    std::advance(it, static_cast<long>(rng() % keys.size()));
    if (kind == 1 && std::get<0>(*it) != "~") return std::get<0>(*it);
    auto next = std::next(it);
    std::optional<std::string> lo =
        std::get<0>(*it) == "~" ? std::nullopt : std::optional(std::get<0>(*it));
    std::optional<std::string> hi;
    if (next != keys.end() && std::get<0>(*next) != "~" && lo && *lo < std::get<0>(*next)) {
      hi = std::get<0>(*next);
    }
    auto key = lo ? ordering::between(*lo, hi, jitter)
                  : ordering::between(std::nullopt, std::nullopt, jitter);
    return key ? *key : std::string("a0");
  };
  for (int round = 0; round < 30; ++round) {
    std::vector<RecordOp> batch;
    for (int i = 0; i < 100; ++i) {
      ++rev_;  // each op newer than any before it, even on the same record
      const int what = static_cast<int>(rng() % 10);
      // A new node, or a move in its group or to the other: `rkey` placed
      // near a random sibling of one of the two groups.
      auto place = [&](const std::string& rkey, bool top_level) {
        const std::string group = top_level ? top : under_p;
        const std::string key = key_near(group);
        batch.push_back(upsert({.rkey = rkey,
                                .parent_rkey = top_level ? std::nullopt : std::optional("p"),
                                .sort_key = key,
                                .rev = rev_}));
        model.put(group, ordering::is_valid_key(key) ? key : "~", rkey);
      };
      if (what < 4) {  // a new node
        place(rkey_of(next_rkey++), rng() % 4 == 0);
      } else if (what < 7) {  // a move, in its group or to the other
        const std::string rkey = random_live();
        if (rkey == "p") continue;
        place(rkey, rng() % 2 == 0);
      } else if (what < 8) {  // an edit in place
        const std::string rkey = random_live();
        if (rkey == "p") continue;
        const auto [group, key] = model.where[rkey];
        batch.push_back(upsert({.rkey = rkey,
                                .parent_rkey = group == top ? std::nullopt : std::optional("p"),
                                .sort_key = key == "~" ? std::optional<std::string>() : key,
                                .text = "edited",
                                .rev = rev_}));
      } else {  // a delete
        const std::string rkey = random_live();
        if (rkey == "p") continue;
        batch.push_back(testing::remove(kDid, rkey, rev_));
        model.drop(rkey);
      }
    }
    apply(std::move(batch));
  }
  expect_matches(model);

  // Emptying the group takes its blocks with it; refilling starts again.
  std::vector<RecordOp> removals;
  ++rev_;
  for (const auto& [key, rkey] : std::set(model.groups[under_p])) {
    removals.push_back(testing::remove(kDid, rkey, rev_));
    model.drop(rkey);
  }
  apply(std::move(removals));
  auto left =
      query_value<std::int64_t>(bulleted::testing::database_of(*store_),
                                "SELECT count(*) FROM order_blocks WHERE grp = ?1", under_p);
  ASSERT_TRUE(left.has_value());
  EXPECT_EQ(left->value_or(-1), 0);
  expect_matches(model);
}

// Blocks are kept, not merged, when their group shrinks back under
// kBlockedGroup: every later change must still move them.
TEST_F(PositionsTest, AGroupThatShrankKeepsItsBlocksRight) {
  const auto ops = ascending(2 * kBlockedGroup);
  apply(std::vector<RecordOp>(ops));
  ASSERT_GT(blocks(1), 1);
  const std::string top = root_group(kDid);
  Model model;
  for (const auto& op : ops) model.put(top, *op.record->sort_key, op.rkey);
  ++rev_;
  std::vector<RecordOp> removals;
  for (std::size_t i = 0; i < ops.size(); i += 4) {
    if (model.where.size() <= static_cast<std::size_t>(kBlockedGroup / 2)) break;
    removals.push_back(testing::remove(kDid, ops[i].rkey, rev_));
    model.drop(ops[i].rkey);
  }
  for (std::size_t i = 1; i < ops.size() && model.where.size() > 20; i += 2) {
    removals.push_back(testing::remove(kDid, ops[i].rkey, rev_));
    model.drop(ops[i].rkey);
  }
  apply(std::move(removals));
  ASSERT_GT(blocks(1), 0);  // still counted in blocks
  expect_matches(model);
  // Now small, the group still changes: an insert at the front, a move to
  // the end, a delete.
  auto jitter = ordering::Mulberry32::from_seed(3);
  const auto& order = model.groups[top];
  const std::string front = *ordering::between(std::nullopt, std::get<0>(*order.begin()), jitter);
  const std::string end = *ordering::between(std::get<0>(*order.rbegin()), std::nullopt, jitter);
  const std::string moved = std::get<1>(*std::next(order.begin(), 3));
  const std::string gone = std::get<1>(*std::next(order.begin(), 5));
  ++rev_;
  apply({upsert({.rkey = "front", .sort_key = front, .rev = rev_}),
         upsert({.rkey = moved, .sort_key = end, .text = "moved", .rev = rev_}),
         testing::remove(kDid, gone, rev_)});
  model.put(top, front, "front");
  model.put(top, end, moved);
  model.drop(gone);
  expect_matches(model);
  // A batch that only adds to it (its count grows, still small).
  const std::string first = *ordering::between(std::nullopt, front, jitter);
  ++rev_;
  apply({upsert({.rkey = "first", .sort_key = first, .rev = rev_})});
  model.put(top, first, "first");
  expect_matches(model);
}

TEST_F(PositionsTest, ADeletedRepoTakesItsBlocks) {
  apply(ascending(2 * kBlockedGroup));
  ASSERT_GT(blocks(1), 0);
  ASSERT_TRUE(store_->set_repo_status(kDid, RepoStatus::kDeleted).has_value());
  EXPECT_EQ(blocks(1), 0);
  EXPECT_EQ(blocks(2), 0);
}

TEST_F(PositionsTest, CheckReportsABlockThatIsOff) {
  apply(ascending(2 * kBlockedGroup));
  auto report = store_->integrity_report();
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->wrong_blocks, 0);
  ASSERT_TRUE(bulleted::testing::database_of(*store_)
                  .exec("UPDATE order_blocks SET n = n + 1 WHERE lvl = 1 AND lo_key <> ''")
                  .has_value());
  report = store_->integrity_report();
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->wrong_blocks, blocks(1) - 1);
  EXPECT_FALSE(report->ok());
}

// An index written before schema 7 gets the blocks of its large groups when
// it is opened, with progress, and answers the same positions.
TEST(PositionsMigration, BuildsTheBlocksOfAnExistingIndexWithProgress) {
  testing::TempDir dir;
  const std::string path = dir.file("index.db");
  {
    auto store = Store::open(path);
    ASSERT_TRUE(store.has_value());
    ApplyBatch batch;
    batch.ops = ascending(3000);
    ASSERT_TRUE((*store)->apply(batch).has_value());
    // Back to schema 6: no blocks.
    ASSERT_TRUE(bulleted::testing::rewind_schema(**store, 6).has_value());
  }
  std::vector<MigrationProgress> steps;
  auto store = Store::open(
      path, {.on_migration = [&](const MigrationProgress& step) { steps.push_back(step); }});
  ASSERT_TRUE(store.has_value()) << store.error().message;
  // Schema 7's reports (later steps follow them).
  std::erase_if(steps, [](const MigrationProgress& step) { return step.version != 7; });
  ASSERT_GE(steps.size(), 2u);
  EXPECT_FALSE(steps.front().finished);
  EXPECT_TRUE(steps.back().finished);
  EXPECT_EQ(steps.back().total, 3000);
  EXPECT_EQ(steps.back().done, 3000);
  auto position = (*store)->read().position(kDid, "n12999");
  ASSERT_TRUE(position.has_value());
  EXPECT_EQ(position->index, 2999);
  auto report = (*store)->integrity_report();
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->wrong_blocks, 0);
  auto levels = query_value<std::int64_t>(bulleted::testing::database_of(**store),
                                          "SELECT count(DISTINCT lvl) FROM order_blocks");
  ASSERT_TRUE(levels.has_value());
  EXPECT_EQ(levels->value_or(0), kBlockLevels);
  // A new file reports nothing.
  steps.clear();
  ASSERT_TRUE(
      Store::open(dir.file("new.db"),
                  {.on_migration = [&](const MigrationProgress& step) { steps.push_back(step); }})
          .has_value());
  EXPECT_TRUE(steps.empty());
}

}  // namespace
}  // namespace bulleted::schema
