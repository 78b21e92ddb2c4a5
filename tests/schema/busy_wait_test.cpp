// Waiting for another connection's lock: a write that finds the write lock
// held waits for it in short steps up to its busy timeout, then gives up.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "schema/sqlite.hpp"
#include "tests/support/temp_dir.hpp"

namespace bulleted::schema {
namespace {

class BusyWaitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    holder_ = Database::open(dir_.file("index.db"), 0).value();
    ASSERT_TRUE(holder_->exec("CREATE TABLE t (x INTEGER)").has_value());
  }

  std::unique_ptr<Database> waiter(int timeout_ms) {
    return Database::open(dir_.file("index.db"), timeout_ms).value();
  }

  testing::TempDir dir_;
  std::unique_ptr<Database> holder_;
};

TEST_F(BusyWaitTest, AWriterTakesTheLockOnceItIsLetGo) {
  auto db = waiter(60'000);
  auto held = Transaction::begin(*holder_, Transaction::Kind::kWrite);
  ASSERT_TRUE(held.has_value());
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    ASSERT_TRUE(held->commit().has_value());
  });
  auto tx = Transaction::begin(*db, Transaction::Kind::kWrite);
  release.join();
  ASSERT_TRUE(tx.has_value()) << tx.error().message;
  ASSERT_TRUE(db->exec("INSERT INTO t VALUES (1)").has_value());
  EXPECT_TRUE(tx->commit().has_value());
}

TEST_F(BusyWaitTest, AWriterGivesUpWhenItsTimeoutRunsOut) {
  auto db = waiter(20);
  auto held = Transaction::begin(*holder_, Transaction::Kind::kWrite);
  ASSERT_TRUE(held.has_value());
  auto tx = Transaction::begin(*db, Transaction::Kind::kWrite);
  ASSERT_FALSE(tx.has_value());
  EXPECT_EQ(tx.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(sqlite3_extended_errcode(db->handle()), SQLITE_BUSY);
  ASSERT_TRUE(held->commit().has_value());
  EXPECT_TRUE(Transaction::begin(*db, Transaction::Kind::kWrite).has_value());
}

TEST_F(BusyWaitTest, ATimeoutOfZeroDoesNotWait) {
  auto db = waiter(60'000);
  set_busy_timeout(db->handle(), 0);
  auto held = Transaction::begin(*holder_, Transaction::Kind::kWrite);
  ASSERT_TRUE(held.has_value());
  // Would wait a minute with the timeout it was opened with.
  EXPECT_FALSE(Transaction::begin(*db, Transaction::Kind::kWrite).has_value());
  ASSERT_TRUE(held->commit().has_value());
}

}  // namespace
}  // namespace bulleted::schema
