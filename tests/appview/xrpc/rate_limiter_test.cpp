// Per-client limits: a bucket per client refilling at its rate, charges past
// the bucket, and the gate of long requests.
#include "appview/xrpc/rate_limiter.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <variant>

namespace bulleted::appview {
namespace {

TEST(RateLimiterTest, ABucketPerClientRefillingAtTheRate) {
  RateLimiter limiter(6);  // one every 10 s, six at once
  const auto t0 = RateLimiter::Clock::now();
  for (int i = 0; i < 6; ++i)
    EXPECT_FALSE(limiter.take(ClientKey::address("a"), t0).has_value()) << i;
  auto wait = limiter.take(ClientKey::address("a"), t0);
  ASSERT_TRUE(wait.has_value());
  EXPECT_EQ(*wait, 10);
  EXPECT_FALSE(limiter.take(ClientKey::address("b"), t0).has_value()) << "another client";
  EXPECT_EQ(limiter.take(ClientKey::address("a"), t0 + std::chrono::seconds(4)).value_or(0), 6);
  EXPECT_FALSE(limiter.take(ClientKey::address("a"), t0 + std::chrono::seconds(10)).has_value());
  EXPECT_TRUE(limiter.take(ClientKey::address("a"), t0 + std::chrono::seconds(11)).has_value());
  // Idle for long: full again, never more than the capacity.
  const auto later = t0 + std::chrono::hours(1);
  for (int i = 0; i < 6; ++i)
    EXPECT_FALSE(limiter.take(ClientKey::address("a"), later).has_value()) << i;
  EXPECT_TRUE(limiter.take(ClientKey::address("a"), later).has_value());
  RateLimiter off(0);
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(off.take(ClientKey::address("a"), t0).has_value());
}

// What was used already is paid whole: what the bucket holds, and a debt
// for the rest that the client's next asks wait out (a stream's pages).
TEST(RateLimiterTest, SpendingPastTheBucketIsOwedAndWaitedOut) {
  RateLimiter bytes(6000);  // 100 a second
  const auto t0 = RateLimiter::Clock::now();
  const auto a = ClientKey::address("a");
  EXPECT_EQ(bytes.spend(a, 4000, t0), 4000);
  EXPECT_EQ(bytes.spend(a, 5000, t0), 2000) << "what was left; 3,000 owed";
  EXPECT_EQ(bytes.spend(a, 1, t0 + std::chrono::seconds(20)), 0) << "still owing 1,000";
  EXPECT_EQ(bytes.take_up_to(a, 1, t0 + std::chrono::seconds(20)).units, 0);
  EXPECT_EQ(bytes.spend(a, 1, t0 + std::chrono::seconds(31)), 1) << "repaid, and 99 more";
  EXPECT_EQ(bytes.spend(ClientKey::address("b"), 7000, t0), 6000) << "another client";
  RateLimiter off(0);
  EXPECT_EQ(off.spend(a, 1e9, t0), 1e9);
}

TEST(RateLimiterTest, ChargesPastTheBucketMakeTheClientWait) {
  RateLimiter bytes(6000);  // 100 a second
  const auto t0 = RateLimiter::Clock::now();
  EXPECT_FALSE(bytes.take(ClientKey::address("a"), 1000, t0).has_value());
  bytes.charge(ClientKey::address("a"), 20'000, t0);  // an answer far larger than what was left
  auto wait = bytes.take(ClientKey::address("a"), 1000, t0);
  ASSERT_TRUE(wait.has_value());
  EXPECT_EQ(*wait, 160) << "15,000 in debt plus 1,000 at 100 a second";
  EXPECT_FALSE(bytes.take(ClientKey::address("b"), 1000, t0).has_value()) << "another client";
  EXPECT_FALSE(
      bytes.take(ClientKey::address("a"), 1000, t0 + std::chrono::seconds(160)).has_value());
}

TEST(LongRequestGateTest, OnePerClientAndATotal) {
  LongRequestGate gate(2);
  auto first = gate.enter(ClientKey::address("a"));
  ASSERT_TRUE(std::holds_alternative<std::unique_ptr<LongRequestGate::Pass>>(first));
  auto again = gate.enter(ClientKey::address("a"));
  ASSERT_TRUE(std::holds_alternative<LongRequestGate::Refusal>(again));
  EXPECT_EQ(std::get<LongRequestGate::Refusal>(again), LongRequestGate::Refusal::kClientBusy);
  auto second = gate.enter(ClientKey::address("b"));
  ASSERT_TRUE(std::holds_alternative<std::unique_ptr<LongRequestGate::Pass>>(second));
  auto third = gate.enter(ClientKey::address("c"));
  ASSERT_TRUE(std::holds_alternative<LongRequestGate::Refusal>(third));
  EXPECT_EQ(std::get<LongRequestGate::Refusal>(third), LongRequestGate::Refusal::kServerBusy);
  first = LongRequestGate::Refusal::kServerBusy;  // releases a's pass
  EXPECT_TRUE(std::holds_alternative<std::unique_ptr<LongRequestGate::Pass>>(
      gate.enter(ClientKey::address("c"))));
}

}  // namespace
}  // namespace bulleted::appview

namespace bulleted::appview {
namespace {

TEST(WorkGateTest, AsManyWaitAsRunAndTheRestAreRefusedAtOnce) {
  using namespace std::chrono_literals;
  WorkGate gate(1, 1);
  auto running = gate.enter(0ms);
  ASSERT_NE(running, nullptr);
  EXPECT_EQ(gate.running(), 1);
  EXPECT_EQ(gate.enter(0ms), nullptr) << "no place, and no wait asked for";
  // One waits; while it does, another is refused without waiting.
  std::unique_ptr<WorkGate::Place> waited;
  std::thread waiter([&] { waited = gate.enter(5s); });
  while (gate.waiting() == 0) std::this_thread::yield();
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(gate.enter(5s), nullptr);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 4s) << "refused without waiting";
  running.reset();  // frees the place: the waiter takes it
  waiter.join();
  EXPECT_NE(waited, nullptr);
  EXPECT_EQ(gate.running(), 1);
  waited.reset();
  EXPECT_EQ(gate.running(), 0);
}

}  // namespace
}  // namespace bulleted::appview
