// The index's node total (schema 9): kept by every write in its own
// transaction, so that health and metrics read one row and never count the
// nodes; filled by the migration; checked by `check`.
#include <gtest/gtest.h>

#include "schema/sqlite.hpp"
#include "schema/store.hpp"
#include "tests/support/store_fixtures.hpp"
#include "tests/support/store_internals.hpp"
#include "tests/support/temp_dir.hpp"

namespace bulleted::schema {
namespace {

using testing::upsert;

std::int64_t counted(Store& store) {
  auto report = store.integrity_report();
  EXPECT_TRUE(report.has_value());
  return report ? report->nodes : -1;
}

TEST(NodeTotal, IsKeptByEveryWriteAndEqualsTheNodesCounted) {
  testing::TempDir dir;
  auto store = std::move(*Store::open(dir.file("index.db")));
  EXPECT_EQ(*store->read().node_count(), 0);
  ApplyBatch batch;
  for (int i = 0; i < 20; ++i) {
    batch.ops.push_back(
        upsert({.rkey = "n" + std::to_string(i), .sort_key = "a" + std::to_string(i % 10)}));
    batch.ops.push_back(upsert({.did = "did:plc:bob", .rkey = "b" + std::to_string(i)}));
  }
  ASSERT_TRUE(store->apply(batch).has_value());
  EXPECT_EQ(*store->read().node_count(), 40);
  // Updates and moves change no total; deletes do; a replayed delete not again.
  ApplyBatch more;
  more.ops = {upsert({.rkey = "n1", .parent_rkey = "n2", .text = "moved", .rev = 2}),
              testing::remove("did:plc:alice", "n3", 2), testing::remove("did:plc:alice", "n3", 3),
              testing::remove("did:plc:alice", "gone", 2)};
  ASSERT_TRUE(store->apply(more).has_value());
  EXPECT_EQ(*store->read().node_count(), 39);
  EXPECT_EQ(*store->read().node_count(), counted(*store));
  // A deleted repo takes its nodes with it; a hidden one keeps them.
  ASSERT_TRUE(store->set_repo_status("did:plc:alice", RepoStatus::kTakendown).has_value());
  EXPECT_EQ(*store->read().node_count(), 39);
  ASSERT_TRUE(store->set_repo_status("did:plc:bob", RepoStatus::kDeleted).has_value());
  EXPECT_EQ(*store->read().node_count(), 19);
  EXPECT_EQ(*store->read().node_count(), counted(*store));
  auto report = store->integrity_report();
  ASSERT_TRUE(report.has_value());
  EXPECT_TRUE(report->ok());
  // A total that drifted is corruption `check` reports.
  ASSERT_TRUE(bulleted::testing::database_of(*store)
                  .exec("UPDATE index_totals SET nodes = nodes + 1")
                  .has_value());
  report = store->integrity_report();
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->kept_node_total, report->nodes + 1);
  EXPECT_FALSE(report->ok());
}

TEST(NodeTotal, TheMigrationCountsAnExistingIndexOnce) {
  testing::TempDir dir;
  const std::string path = dir.file("index.db");
  {
    auto store = std::move(*Store::open(path));
    ApplyBatch batch;
    for (int i = 0; i < 7; ++i) batch.ops.push_back(upsert({.rkey = "n" + std::to_string(i)}));
    ASSERT_TRUE(store->apply(batch).has_value());
    ASSERT_TRUE(bulleted::testing::rewind_schema(*store, 8).has_value());
  }
  std::vector<MigrationProgress> steps;
  auto store = Store::open(
      path, {.on_migration = [&](const MigrationProgress& step) { steps.push_back(step); }});
  ASSERT_TRUE(store.has_value()) << store.error().message;
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps.front().version, 9);
  EXPECT_TRUE(steps.back().finished);
  EXPECT_EQ(*(*store)->read().node_count(), 7);
}

}  // namespace
}  // namespace bulleted::schema
