// Properties of key generation: histograms of long append/prepend runs, exact
// inverses, jitter bounds, exhaustion, and random inserts into a growing list.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ordering/order_key.hpp"
#include "tests/support/position_list.hpp"

namespace bulleted::ordering {
namespace {

std::map<std::size_t, std::size_t> length_histogram(const std::vector<std::string>& keys) {
  std::map<std::size_t, std::size_t> histogram;
  for (const auto& key : keys) ++histogram[key.size()];
  return histogram;
}

TEST(OrderKeyGeneration, HundredThousandAppends) {
  auto jitter = Mulberry32::from_seed(1 ^ 0xA5A5A5A5u);
  std::vector<std::string> keys;
  std::string key = *between(std::nullopt, std::nullopt, jitter);
  ASSERT_EQ(key, "a0");
  for (int i = 0; i < 100'000; ++i) {
    auto next = between(key, std::nullopt, jitter);
    ASSERT_TRUE(next.has_value());
    ASSERT_LT(key, *next);
    key = *next;
    keys.push_back(key);
  }
  EXPECT_EQ(length_histogram(keys),
            (std::map<std::size_t, std::size_t>{{2, 61}, {3, 3844}, {4, 96095}}));
  EXPECT_EQ(keys[60], "az");
  EXPECT_EQ(keys[61], "b00");
  EXPECT_EQ(keys[3905], "c000");
  EXPECT_EQ(keys.back(), "cOzu");
}

TEST(OrderKeyGeneration, HundredThousandPrepends) {
  auto jitter = Mulberry32::from_seed(1 ^ 0xA5A5A5A5u);
  std::vector<std::string> keys;
  std::string key = "a0";
  for (int i = 0; i < 100'000; ++i) {
    auto next = between(std::nullopt, key, jitter);
    ASSERT_TRUE(next.has_value());
    ASSERT_LT(*next, key);
    key = *next;
    keys.push_back(key);
  }
  EXPECT_EQ(length_histogram(keys),
            (std::map<std::size_t, std::size_t>{{2, 62}, {3, 3844}, {4, 96094}}));
  EXPECT_EQ(keys[61], "Z0");
  EXPECT_EQ(keys[62], "Yzz");
  EXPECT_EQ(keys[3906], "Xzzz");
  EXPECT_EQ(keys.back(), "Xb06");
}

TEST(OrderKeyGeneration, IncrementAndDecrementAreExactInverses) {
  // Sequential walks both ways from the origin, across several width changes.
  for (bool upward : {true, false}) {
    std::vector<std::string> walk{"a0"};
    for (int i = 0; i < 10'000; ++i) {
      auto next = upward ? increment_integer(walk.back()) : decrement_integer(walk.back());
      ASSERT_TRUE(next.has_value());
      ASSERT_EQ(upward, walk.back() < *next) << walk.back() << " -> " << *next;
      walk.push_back(*next);
    }
    for (std::size_t i = walk.size() - 1; i > 0; --i) {
      auto back = upward ? decrement_integer(walk[i]) : increment_integer(walk[i]);
      ASSERT_TRUE(back.has_value());
      ASSERT_EQ(*back, walk[i - 1]);
    }
  }
  // Random integer parts of every width, with runs of the edge digits.
  auto rng = Mulberry32::from_seed(7);
  const std::string digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  const std::string heads = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  int checked = 0;
  while (checked < 20'000) {
    std::string integer(1, heads[below(rng.next(), 52)]);
    const std::size_t width = integer_width(integer[0]);
    for (std::size_t i = 1; i < width; ++i) {
      const std::uint32_t pick = below(rng.next(), 4);
      integer.push_back(pick == 0 ? '0' : pick == 1 ? 'z' : digits[below(rng.next(), 62)]);
    }
    if (auto up = increment_integer(integer)) {
      ASSERT_LT(integer, *up);
      ASSERT_EQ(*decrement_integer(*up), integer) << integer;
      ++checked;
    }
    if (auto down = decrement_integer(integer)) {
      ASSERT_LT(*down, integer);
      ASSERT_EQ(*increment_integer(*down), integer) << integer;
      ++checked;
    }
  }
}

TEST(OrderKeyGeneration, NarrowGapGrowsByOneFractionDigit) {
  auto jitter = Mulberry32::from_seed(3);
  auto key = between("a0", "a001", jitter);
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(key->size(), 5u);
  EXPECT_EQ(key->substr(0, 4), "a000");
  EXPECT_LT("a0", *key);
  EXPECT_LT(*key, "a001");
}

TEST(OrderKeyGeneration, BranchingDigitIsFromTheMiddleHalf) {
  // Wide gap: digits 0..62 exclusive; the middle half is 16..46 (31 digits).
  std::set<std::string> seen;
  auto jitter = Mulberry32::from_seed(11);
  for (int i = 0; i < 5'000; ++i) {
    auto key = between("a0", "a1", jitter);
    ASSERT_TRUE(key.has_value());
    ASSERT_EQ(key->size(), 3u);
    seen.insert(*key);
  }
  EXPECT_EQ(seen.size(), 31u);
  EXPECT_EQ(*seen.begin(), "a0G");   // digit 16
  EXPECT_EQ(*seen.rbegin(), "a0k");  // digit 46
}

TEST(OrderKeyGeneration, OneDrawPerBranchingDigitAndNoneForAppends) {
  struct CountingSource : RandomSource {
    Mulberry32 inner = Mulberry32::from_seed(5);
    int draws = 0;
    std::uint32_t next() override {
      ++draws;
      return inner.next();
    }
  } counting;
  ASSERT_TRUE(between("a0", std::nullopt, counting).has_value());
  ASSERT_TRUE(between(std::nullopt, "a0", counting).has_value());
  EXPECT_EQ(counting.draws, 0);
  ASSERT_TRUE(between("a0", "a1", counting).has_value());
  EXPECT_EQ(counting.draws, 1);
  ASSERT_TRUE(between("a0", "a001", counting).has_value());
  EXPECT_EQ(counting.draws, 2);
}

TEST(OrderKeyGeneration, PrependNeverProducesTheReservedKey) {
  auto jitter = Mulberry32::from_seed(9);
  std::string key = "A00000000000000000000000001";
  for (int i = 0; i < 200; ++i) {
    auto next = between(std::nullopt, key, jitter);
    ASSERT_TRUE(next.has_value()) << next.error().message;
    ASSERT_NE(*next, kReservedInteger);
    ASSERT_LT(*next, key);
    ASSERT_TRUE(is_valid_key(*next)) << *next;
    ASSERT_EQ(next->substr(0, kReservedInteger.size()), kReservedInteger);
    key = *next;
  }
}

TEST(OrderKeyGeneration, AppendAfterTheLargestIntegerUsesAFraction) {
  auto jitter = Mulberry32::from_seed(2);
  std::string key(kLargestInteger);
  for (int i = 0; i < 200; ++i) {
    auto next = between(key, std::nullopt, jitter);
    ASSERT_TRUE(next.has_value());
    ASSERT_LT(key, *next);
    ASSERT_TRUE(is_valid_key(*next));
    key = *next;
  }
  EXPECT_GT(key.size(), kLargestInteger.size());
}

// Inserting again and again next to one key ends in Exhausted, never in a key
// over the cap, a truncated key, or a key out of order.
void hammer(bool after_first) {
  for (std::uint32_t seed = 1; seed <= 5; ++seed) {
    auto jitter = Mulberry32::from_seed(seed ^ 0xA5A5A5A5u);
    std::string lo = "a0";
    std::string hi = "a1";
    int inserts = 0;
    while (true) {
      auto key = between(lo, hi, jitter);
      if (!key) {
        EXPECT_EQ(key.error().code, KeyErrorCode::kExhausted) << key.error().message;
        break;
      }
      ASSERT_LE(key->size(), kMaxKeyBytes);
      ASSERT_LT(lo, *key);
      ASSERT_LT(*key, hi);
      ASSERT_TRUE(is_valid_key(*key));
      (after_first ? hi : lo) = *key;
      ++inserts;
      ASSERT_LT(inserts, 100'000) << "no exhaustion";
    }
    // Jitter keeps keys short enough for thousands of inserts into one gap.
    EXPECT_GT(inserts, 1'000);
  }
}

TEST(OrderKeyGeneration, HammeringAfterTheFirstKeyEndsInExhausted) { hammer(true); }
TEST(OrderKeyGeneration, HammeringBeforeTheLastKeyEndsInExhausted) { hammer(false); }

TEST(OrderKeyGeneration, RandomInsertsIntoAGrowingList) {
  auto positions = Mulberry32::from_seed(1);
  auto jitter = Mulberry32::from_seed(1 ^ 0xA5A5A5A5u);
  testing::PositionList list;
  for (int i = 0; i < 100'000; ++i) {
    const std::size_t p = below(positions.next(), static_cast<std::uint32_t>(list.size() + 1));
    const auto lo = list.before(p);
    const auto hi = list.at(p);
    auto key = between(lo, hi, jitter);
    ASSERT_TRUE(key.has_value()) << key.error().message;
    ASSERT_TRUE(is_valid_key(*key)) << *key;
    if (lo) {
      ASSERT_LT(*lo, *key);
    }
    if (hi) {
      ASSERT_LT(*key, *hi);
    }
    ASSERT_TRUE(list.insert(*key)) << "duplicate " << *key;
    ASSERT_EQ(list.position_of(*key), p);
  }
  EXPECT_EQ(list.size(), 100'000u);
}

TEST(OrderKeyGeneration, NBetweenFromEmptyIsAppends) {
  auto jitter = Mulberry32::from_seed(1);
  auto keys = n_between(std::nullopt, std::nullopt, 3000, jitter);
  ASSERT_TRUE(keys.has_value());
  ASSERT_EQ(keys->size(), 3000u);
  EXPECT_EQ(keys->front(), "a0");
  EXPECT_EQ(length_histogram(*keys), (std::map<std::size_t, std::size_t>{{2, 62}, {3, 2938}}));
  for (std::size_t i = 1; i < keys->size(); ++i) ASSERT_LT((*keys)[i - 1], (*keys)[i]);
}

TEST(OrderKeyGeneration, NBetweenOpenLowerEndIsPrepends) {
  auto jitter = Mulberry32::from_seed(1);
  auto keys = n_between(std::nullopt, "a0", 100, jitter);
  ASSERT_TRUE(keys.has_value());
  ASSERT_EQ(keys->size(), 100u);
  EXPECT_EQ(keys->back(), "Zz");
  for (std::size_t i = 1; i < keys->size(); ++i) ASSERT_LT((*keys)[i - 1], (*keys)[i]);
  EXPECT_LT(keys->back(), "a0");
}

TEST(OrderKeyGeneration, NBetweenTwoKeysDrawsTheMiddleFirst) {
  for (std::size_t n : {1u, 2u, 3u, 7u, 3000u}) {
    auto jitter = Mulberry32::from_seed(4);
    auto keys = n_between("a0", "a1", n, jitter);
    ASSERT_TRUE(keys.has_value());
    ASSERT_EQ(keys->size(), n);
    EXPECT_LT("a0", keys->front());
    EXPECT_LT(keys->back(), "a1");
    for (std::size_t i = 1; i < keys->size(); ++i) ASSERT_LT((*keys)[i - 1], (*keys)[i]);
    // The same stream's first draw makes the middle key.
    auto fresh = Mulberry32::from_seed(4);
    EXPECT_EQ((*keys)[n / 2], *between("a0", "a1", fresh));
    // Left half next: for n = 3, keys[0] is between a0 and the middle key.
    if (n == 3) {
      EXPECT_EQ((*keys)[0], *between("a0", (*keys)[1], fresh));
      EXPECT_EQ((*keys)[2], *between((*keys)[1], "a1", fresh));
    }
  }
  // Evenly spread: 3,000 keys in one wide gap stay short.
  auto jitter = Mulberry32::from_seed(4);
  auto keys = n_between("a0", "a1", 3000, jitter);
  for (const auto& key : *keys) EXPECT_LE(key.size(), 5u) << key;
}

TEST(OrderKeyGeneration, NBetweenRefusesBadInput) {
  auto jitter = Mulberry32::from_seed(1);
  EXPECT_EQ(n_between("a1", "a0", 3, jitter).error().code, KeyErrorCode::kOutOfOrder);
  EXPECT_EQ(n_between("a00", std::nullopt, 3, jitter).error().code, KeyErrorCode::kInvalidKey);
  EXPECT_EQ(n_between("a1", "a0", 0, jitter).error().code, KeyErrorCode::kOutOfOrder);
}

}  // namespace
}  // namespace bulleted::ordering
