// The per-host request budget: a host's burst goes at once, the next request
// waits for its token, other hosts are not held up, and idle buckets are
// dropped when the table is full. Times are given, not measured.
#include "firehose/client/host_budget.hpp"

#include <gtest/gtest.h>

namespace bulleted::firehose {
namespace {

using namespace std::chrono_literals;
using Clock = HostBudget::Clock;

TEST(HostBudgetTest, AHostsBurstGoesAtOnceThenRequestsWaitForTheirTokens) {
  HostBudget budget(4);
  const auto t0 = Clock::now();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(budget.reserve("https://pds.example", t0), 0ns) << i;
  // The fifth waits a quarter of a second, the sixth half a second: each
  // reserved token is taken from those still to come.
  EXPECT_EQ(budget.reserve("https://pds.example", t0), 250ms);
  EXPECT_EQ(budget.reserve("https://pds.example", t0), 500ms);
  // Another host has its own burst.
  EXPECT_EQ(budget.reserve("https://other.example", t0), 0ns);
  // A second later the debt is paid and two tokens came back.
  EXPECT_EQ(budget.reserve("https://pds.example", t0 + 1s), 0ns);
  EXPECT_EQ(budget.reserve("https://pds.example", t0 + 1s), 0ns);
  EXPECT_EQ(budget.reserve("https://pds.example", t0 + 1s), 250ms);
  // A long idle time refills no more than the burst.
  for (int i = 0; i < 4; ++i) EXPECT_EQ(budget.reserve("https://pds.example", t0 + 1h), 0ns);
  EXPECT_GT(budget.reserve("https://pds.example", t0 + 1h), 0ns);
}

TEST(HostBudgetTest, NoLimitNeverWaitsAndKeepsNothing) {
  HostBudget budget(0);
  const auto t0 = Clock::now();
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(budget.reserve("https://pds.example", t0), 0ns);
  EXPECT_EQ(budget.hosts(), 0u);
  EXPECT_TRUE(budget.acquire("https://pds.example"));
}

TEST(HostBudgetTest, IdleHostsAreDroppedWhenTheTableIsFull) {
  HostBudget budget(2, 3);
  const auto t0 = Clock::now();
  (void)budget.reserve("https://a.example", t0);
  (void)budget.reserve("https://b.example", t0);
  (void)budget.reserve("https://c.example", t0);
  (void)budget.reserve("https://c.example", t0);
  (void)budget.reserve("https://c.example", t0);  // c is in debt
  EXPECT_EQ(budget.hosts(), 3u);
  // Later a and b are full again, c still owes: a new host drops a and b.
  (void)budget.reserve("https://d.example", t0 + 1s);
  EXPECT_EQ(budget.hosts(), 2u);
  // c's bucket was kept: one token back since, not a fresh burst of two.
  EXPECT_EQ(budget.reserve("https://c.example", t0 + 1s), 0ns);
  EXPECT_GT(budget.reserve("https://c.example", t0 + 1s), 0ns);
}

TEST(HostBudgetTest, AcquireStopsWaitingWhenAskedTo) {
  HostBudget budget(1);
  EXPECT_TRUE(budget.acquire("https://pds.example"));
  // The next token is a second away: a stop ends the wait at once.
  EXPECT_FALSE(budget.acquire("https://pds.example", [] { return true; }));
}

}  // namespace
}  // namespace bulleted::firehose
