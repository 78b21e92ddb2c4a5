#include "ordering/tid.hpp"

#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

#include "tests/support/vector_file.hpp"

namespace bulleted::ordering {
namespace {

std::string syntax_path(const std::string& name) {
  return std::string(BULLETED_FIXTURES_DIR) + "/interop/syntax/" + name;
}

TEST(Tid, InteropValidSyntax) {
  const auto values = testing::read_syntax_file(syntax_path("tid_syntax_valid.txt"));
  ASSERT_FALSE(values.empty());
  for (const auto& value : values) {
    auto tid = Tid::parse(value);
    ASSERT_TRUE(tid.has_value()) << value << ": " << tid.error();
    EXPECT_EQ(tid->str(), value);
  }
}

TEST(Tid, InteropInvalidSyntax) {
  const auto values = testing::read_syntax_file(syntax_path("tid_syntax_invalid.txt"));
  ASSERT_FALSE(values.empty());
  for (const auto& value : values) EXPECT_FALSE(Tid::parse(value).has_value()) << value;
}

TEST(Tid, PartsRoundTrip) {
  const Tid tid = Tid::from_parts(1'700'000'000'123'456ULL, 987);
  EXPECT_EQ(tid.micros(), 1'700'000'000'123'456ULL);
  EXPECT_EQ(tid.clock_id(), 987u);
  auto parsed = Tid::parse(tid.str());
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(*parsed, tid);
  EXPECT_EQ(Tid::from_parts(0, 0).str(), "2222222222222");
}

TEST(Tid, TextOrderIsNumericOrder) {
  const Tid a = Tid::from_parts(1000, 5);
  const Tid b = Tid::from_parts(1000, 6);
  const Tid c = Tid::from_parts(1001, 0);
  EXPECT_LT(a.str(), b.str());
  EXPECT_LT(b.str(), c.str());
}

TEST(TidClock, StrictlyIncreasingAcrossThreads) {
  TidClock clock(3);
  std::vector<std::vector<std::string>> per_thread(4);
  std::vector<std::thread> threads;
  for (auto& out : per_thread) {
    threads.emplace_back([&clock, &out] {
      for (int i = 0; i < 5'000; ++i) out.push_back(clock.next().str());
    });
  }
  for (auto& t : threads) t.join();
  std::set<std::string> all;
  for (const auto& out : per_thread) {
    for (std::size_t i = 1; i < out.size(); ++i) ASSERT_LT(out[i - 1], out[i]);
    all.insert(out.begin(), out.end());
  }
  EXPECT_EQ(all.size(), 20'000u);
  const Tid floor = Tid::from_parts(clock.next().micros() + 10'000'000, 0);
  EXPECT_GT(clock.next_after(floor), floor);
  EXPECT_GT(clock.next().micros(), floor.micros());
}

}  // namespace
}  // namespace bulleted::ordering
