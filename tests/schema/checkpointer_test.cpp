// Background WAL checkpoints: commits on the store's connections leave the
// WAL to the checkpointer's thread, which copies it into the database file.
#include "schema/checkpointer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "schema/sqlite.hpp"
#include "schema/store.hpp"
#include "tests/support/store_fixtures.hpp"
#include "tests/support/store_internals.hpp"
#include "tests/support/temp_dir.hpp"

namespace bulleted::schema {
namespace {

// `count` nodes named `prefix` and their number from `first`, each with a
// text of `text_bytes`.
ApplyBatch nodes(const std::string& prefix, int first, int count, std::size_t text_bytes) {
  ApplyBatch apply;
  for (int i = first; i < first + count; ++i) {
    testing::NodeSpec spec;
    spec.rkey = prefix + std::to_string(i);
    spec.text = std::string(text_bytes, static_cast<char>('a' + i % 26));
    apply.ops.push_back(testing::upsert(spec));
  }
  return apply;
}

// Writes about 12 MB of nodes (3,000 pages and more) in batches of 100.
void write_nodes(Store& store) {
  for (int batch = 0; batch < 30; ++batch) {
    ASSERT_TRUE(store.apply(nodes("node", batch * 100, 100, 4000)).has_value());
  }
}

TEST(Checkpointer, StoresOfOneFileShareOne) {
  testing::TempDir dir;
  auto first = Checkpointer::for_path(dir.file("a.db"));
  EXPECT_EQ(first, Checkpointer::for_path(dir.file("a.db")));
  EXPECT_NE(first, Checkpointer::for_path(dir.file("b.db")));
}

TEST(Checkpointer, CopiesTheWalIntoTheFileOffTheWritersThread) {
  testing::TempDir dir;
  const std::string path = dir.file("index.db");
  auto store = Store::open(path);
  ASSERT_TRUE(store.has_value()) << store.error().message;
  auto checkpointer = Checkpointer::for_path(path);
  const auto before = checkpointer->runs();
  write_nodes(**store);
  // The writer's commits only woke the thread; the pages reach the file once
  // it has run.
  checkpointer->wait_idle();
  EXPECT_GT(checkpointer->runs(), before);
  EXPECT_GE(std::filesystem::file_size(path), 8'000'000u);
  // Everything is there for a new connection.
  auto reader = Store::open(path);
  ASSERT_TRUE(reader.has_value());
  EXPECT_EQ((*reader)->read().node_count().value(), 3000);
}

TEST(Checkpointer, AWalThatCannotBeReusedIsCheckpointedOnceEveryThousandPagesNotEveryCommit) {
  // A reader holds an old snapshot, so no checkpoint can let the WAL start
  // over and it only grows. Many small commits then ask for a checkpoint
  // once per kWalPages new pages, not at each of them.
  testing::TempDir dir;
  const std::string path = dir.file("index.db");
  auto store = Store::open(path);
  ASSERT_TRUE(store.has_value());
  auto reader = Store::open(path);
  ASSERT_TRUE(reader.has_value());
  ASSERT_TRUE(bulleted::testing::database_of(**reader)
                  .exec("BEGIN; SELECT count(*) FROM nodes;")
                  .has_value());
  auto checkpointer = Checkpointer::for_path(path);
  const int commits = 1500;
  for (int i = 0; i < commits; ++i) {
    ASSERT_TRUE((*store)->apply(nodes("small", i, 1, 1500)).has_value());
  }
  const auto wal_bytes = std::filesystem::file_size(path + "-wal");
  const auto wal_pages = (wal_bytes - 32) / (4096 + 24);
  ASSERT_GT(wal_pages, 3u * Checkpointer::kWalPages) << "the WAL grew past several thresholds";
  // Once the last run asked for is done, counts the asks and the runs.
  checkpointer->wait_idle();
  const auto runs = checkpointer->runs();
  EXPECT_GE(runs, 1u);
  EXPECT_LE(checkpointer->asks(), wal_pages / Checkpointer::kWalPages + 1)
      << "a checkpoint asked for at each of " << commits << " commits past the threshold";
  EXPECT_LE(runs, checkpointer->asks());
  ASSERT_TRUE(bulleted::testing::database_of(**reader).exec("COMMIT").has_value());
}

TEST(Checkpointer, AWalUnderASteadyStreamOfWritesIsStartedOverNotLeftToGrow) {
  // One writer commits back to back while the checkpointer copies: every
  // write begins while the WAL holds frames not yet copied, so no writer may
  // start it over by itself. Without RESTART checkpoints the WAL holds every
  // page the writer ever wrote (114,000 here, 470 MB); with them it is
  // started over near kRestartPages: 4,500 to 6,500 pages alone, and up to
  // 25,000 beside other tests on two cores (a checkpointer short of CPU
  // runs late). So the bound is what the writer wrote, not the threshold.
  testing::TempDir dir;
  const std::string path = dir.file("index.db");
  auto store = Store::open(path);
  ASSERT_TRUE(store.has_value());
  auto checkpointer = Checkpointer::for_path(path);
  std::uintmax_t largest = 0;
  for (int commit = 0; commit < 3000; ++commit) {
    ASSERT_TRUE((*store)->apply(nodes("steady", commit * 4, 4, 3000)).has_value());
    largest = std::max(largest, std::filesystem::file_size(path + "-wal"));
  }
  const std::uintmax_t largest_pages = largest / (4096 + 24);
  // The pages the writer's connection wrote, each a frame of the WAL.
  int written = 0;
  int most = 0;
  ASSERT_EQ(sqlite3_db_status(bulleted::testing::database_of(**store).handle(),
                              SQLITE_DBSTATUS_CACHE_WRITE, &written, &most, 0),
            SQLITE_OK);
  ASSERT_GT(written, 20 * Checkpointer::kRestartPages) << "the writes fill the WAL many times";
  EXPECT_GT(checkpointer->restarts(), 0u);
  EXPECT_EQ((*store)->checkpoints().restarts, checkpointer->restarts());
  EXPECT_LT(largest_pages, static_cast<std::uintmax_t>(written) / 2)
      << "the WAL was not started over: it holds most of the " << written << " pages written";
}

TEST(Checkpointer, AStoreCanKeepSqlitesOwnCheckpoints) {
  testing::TempDir dir;
  const std::string path = dir.file("index.db");
  auto store = Store::open(path, {.background_checkpoints = false});
  ASSERT_TRUE(store.has_value());
  write_nodes(**store);
  // SQLite's automatic checkpoint ran at the writer's commits.
  EXPECT_GE(std::filesystem::file_size(path), 8'000'000u);
  EXPECT_EQ(Checkpointer::for_path(path)->runs(), 0u);
}

}  // namespace
}  // namespace bulleted::schema
