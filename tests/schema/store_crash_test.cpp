// A writer killed with SIGKILL in the middle of applying batches: the file,
// reopened, holds exactly the batches that committed, and the cursor agrees.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <thread>

#include "schema/store.hpp"
#include "tests/support/store_fixtures.hpp"
#include "tests/support/temp_dir.hpp"

namespace bulleted::schema {
namespace {

constexpr int kOpsPerBatch = 25;

std::string rkey_of(std::int64_t batch, int op) {
  return "b" + std::to_string(batch) + "-" + std::to_string(op);
}

// The child: applies batch after batch, from the stored cursor on, until killed.
[[noreturn]] void write_forever(const std::string& path) {
  auto store = Store::open(path);
  if (!store) _exit(3);
  std::int64_t next = (*store)->read().cursor("crash")->value_or(0) + 1;
  while (true) {
    ApplyBatch batch;
    for (int op = 0; op < kOpsPerBatch; ++op) {
      batch.ops.push_back(testing::upsert({.rkey = rkey_of(next, op),
                                           .text = std::string(200, 'x'),
                                           .rev = static_cast<std::uint64_t>(next)}));
    }
    batch.cursor = std::make_pair(std::string("crash"), next);
    if (!(*store)->apply(batch)) _exit(4);
    ++next;
  }
}

TEST(StoreCrash, KilledWriterLeavesExactlyTheCommittedBatches) {
  testing::TempDir dir;
  const std::string path = dir.file("crash.db");
  ASSERT_TRUE(Store::open(path).has_value());  // create the schema up front
  std::mt19937 rng(99);
  std::int64_t previous_cursor = 0;
  for (int round = 0; round < 6; ++round) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) write_forever(path);
    std::this_thread::sleep_for(std::chrono::milliseconds(40 + rng() % 200));
    ASSERT_EQ(kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "writer exited on its own with " << WEXITSTATUS(status);

    auto store = Store::open(path);
    ASSERT_TRUE(store.has_value()) << store.error().message;
    const std::int64_t cursor = (*store)->read().cursor("crash")->value_or(0);
    EXPECT_GE(cursor, previous_cursor);
    // Every op of every committed batch is there, and nothing beyond.
    EXPECT_EQ(*(*store)->read().node_count(), cursor * kOpsPerBatch) << "round " << round;
    // The first batch and the last that committed (none when the writer was
    // killed before its first commit).
    for (std::int64_t batch : {std::int64_t{1}, cursor}) {
      if (batch < 1 || batch > cursor) continue;
      for (int op = 0; op < kOpsPerBatch; ++op) {
        EXPECT_TRUE((*store)->read().node("did:plc:alice", rkey_of(batch, op)).has_value());
      }
    }
    EXPECT_FALSE((*store)->read().node("did:plc:alice", rkey_of(cursor + 1, 0)).has_value());
    std::printf("round %d: %lld batches committed\n", round, static_cast<long long>(cursor));
    previous_cursor = cursor;
  }
  EXPECT_GT(previous_cursor, 0);
}

}  // namespace
}  // namespace bulleted::schema
