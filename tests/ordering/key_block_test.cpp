// The 16-byte block forms of key checks (ordering/key_block.hpp) against their
// byte-by-byte meaning, and between() on short bounds against plain byte
// order and invalid_reason.
#include "ordering/key_block.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "ordering/order_key.hpp"
#include "ordering/random_source.hpp"

namespace bulleted::ordering {
namespace {

// Bytes at and around the edges of the base-62 ranges, and a few that no key
// may hold.
constexpr char kEdgeBytes[] = {'/', '0', '1',    '8',    '9',    ':',    '@', 'A',
                               'B', 'Y', 'Z',    '[',    '`',    'a',    'b', 'y',
                               'z', '{', '\x00', '\x7f', '\x80', '\xff', ' ', '_'};

bool is_base62_byte(char c) {
  return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

std::string random_bytes(Mulberry32& random, std::size_t n, bool edges_only) {
  std::string s(n, '\0');
  for (auto& c : s) {
    c = edges_only ? kEdgeBytes[below(random.next(), sizeof kEdgeBytes)]
                   : static_cast<char>(random.next() & 0xFF);
  }
  return s;
}

TEST(KeyBlock, HoldsTheKeyBytesThenZeros) {
  auto random = Mulberry32::from_seed(7);
  for (int round = 0; round < 2'000; ++round) {
    const std::size_t n = round % (detail::kBlockBytes + 1);
    const std::string key = random_bytes(random, n, round % 2 == 0);
    const detail::Block block = detail::load_block(key);
    for (std::size_t i = 0; i < detail::kBlockBytes; ++i) {
      const unsigned char want = i < n ? static_cast<unsigned char>(key[i]) : 0;
      ASSERT_EQ(detail::block_byte(block, i), want) << "length " << n << " byte " << i;
    }
  }
}

TEST(KeyBlock, PrefixAndByteReplacementKeepTheOtherBytes) {
  auto random = Mulberry32::from_seed(9);
  for (int round = 0; round < 2'000; ++round) {
    const std::string key = random_bytes(random, detail::kBlockBytes, round % 2 == 0);
    const detail::Block block = detail::load_block(key);
    const std::size_t n = round % (detail::kBlockBytes + 1);
    const detail::Block prefix = detail::block_prefix(block, n);
    const std::size_t at = below(random.next(), detail::kBlockBytes);
    const char c = static_cast<char>(random.next() & 0xFF);
    const detail::Block replaced = detail::block_with_byte(block, at, c);
    for (std::size_t i = 0; i < detail::kBlockBytes; ++i) {
      const auto byte = static_cast<unsigned char>(key[i]);
      ASSERT_EQ(detail::block_byte(prefix, i), i < n ? byte : 0) << "prefix " << n << " byte " << i;
      ASSERT_EQ(detail::block_byte(replaced, i), i == at ? static_cast<unsigned char>(c) : byte)
          << "byte " << at << " replaced, byte " << i;
    }
  }
}

TEST(KeyBlock, Base62CheckAgreesWithTheByteRanges) {
  auto random = Mulberry32::from_seed(8);
  int accepted = 0;
  for (int round = 0; round < 20'000; ++round) {
    const std::size_t n = round % (detail::kBlockBytes + 1);
    std::string key = random_bytes(random, n, true);
    // Mostly digits, so that acceptance is common too.
    for (auto& c : key) {
      if (below(random.next(), 4) != 0) c = "0aZz9A"[below(random.next(), 6)];
    }
    const bool want = std::all_of(key.begin(), key.end(), is_base62_byte);
    ASSERT_EQ(detail::block_is_base62(detail::load_block(key), n), want) << "key of length " << n;
    accepted += want;
  }
  EXPECT_GT(accepted, 1'000);
  EXPECT_LT(accepted, 19'000);
}

TEST(KeyBlock, MismatchIsTheCommonPrefixLength) {
  auto random = Mulberry32::from_seed(9);
  for (int round = 0; round < 20'000; ++round) {
    const std::string a = random_bytes(random, below(random.next(), 17), true);
    // b shares a random prefix of a, then goes its own way.
    std::string b = a.substr(0, below(random.next(), static_cast<std::uint32_t>(a.size() + 1)));
    b +=
        random_bytes(random, below(random.next(), static_cast<std::uint32_t>(17 - b.size())), true);
    std::size_t want = 0;
    while (want < a.size() && want < b.size() && a[want] == b[want]) ++want;
    if (a == b) want = detail::kBlockBytes;
    // Zero bytes pad both blocks, so a string holding one can look equal to
    // a shorter one; no key holds a zero byte, so such strings are skipped.
    if (a.find('\0') != std::string::npos || b.find('\0') != std::string::npos) continue;
    ASSERT_EQ(detail::block_mismatch(detail::load_block(a), detail::load_block(b)), want)
        << a << " / " << b;
  }
}

// A key of at most 16 bytes that is valid about half the time: an integer
// part for a random head, then a fraction, with the odd bad byte.
std::string short_key(Mulberry32& random) {
  static constexpr char kHeads[] = "abcdZYXW";
  const char head = kHeads[below(random.next(), 8)];
  const std::size_t width = integer_width(head);
  std::string key(1, head);
  while (key.size() < width) key += "0az9AZ"[below(random.next(), 6)];
  const std::size_t fraction = below(random.next(), static_cast<std::uint32_t>(17 - width));
  for (std::size_t i = 0; i < fraction; ++i) key += "01yzAZ"[below(random.next(), 6)];
  if (below(random.next(), 8) == 0 && !key.empty()) {
    key[below(random.next(), static_cast<std::uint32_t>(key.size()))] =
        kEdgeBytes[below(random.next(), sizeof kEdgeBytes)];
  }
  return key;
}

TEST(KeyBlock, BetweenShortBoundsFollowsByteOrderAndValidity) {
  auto random = Mulberry32::from_seed(10);
  auto jitter = Mulberry32::from_seed(11);
  int generated = 0;
  int out_of_order = 0;
  int invalid = 0;
  for (int round = 0; round < 50'000; ++round) {
    std::string a = short_key(random);
    // Half the pairs share a long prefix, where the order hinges on late bytes.
    std::string b = below(random.next(), 2) ? short_key(random)
                                            : a.substr(0, a.size() / 2 + 1) + short_key(random);
    if (b.size() > detail::kBlockBytes) b.resize(detail::kBlockBytes);
    const auto result = between(a, b, jitter);
    if (invalid_reason(a) || invalid_reason(b)) {
      ASSERT_FALSE(result.has_value()) << a << " / " << b;
      ASSERT_EQ(result.error().code, KeyErrorCode::kInvalidKey) << a << " / " << b;
      ++invalid;
    } else if (!(a < b)) {
      ASSERT_FALSE(result.has_value()) << a << " / " << b;
      ASSERT_EQ(result.error().code, KeyErrorCode::kOutOfOrder) << a << " / " << b;
      ++out_of_order;
    } else {
      ASSERT_TRUE(result.has_value()) << a << " / " << b << ": " << result.error().message;
      ASSERT_EQ(invalid_reason(*result), std::nullopt) << *result;
      ASSERT_LT(a, *result);
      ASSERT_LT(*result, b);
      ++generated;
    }
  }
  EXPECT_GT(generated, 5'000);
  EXPECT_GT(out_of_order, 5'000);
  EXPECT_GT(invalid, 5'000);
}

// between() computes its common cases whole in registers; n_between(a, b, 1)
// always takes the general path. With the same jitter stream they must give
// the same key, for appends, prepends and inserts alike.
TEST(KeyBlock, BetweenGivesTheGeneralPathsKey) {
  auto random = Mulberry32::from_seed(12);
  int compared = 0;
  for (int round = 0; round < 50'000; ++round) {
    std::string a = short_key(random);
    std::string b = below(random.next(), 2) ? short_key(random)
                                            : a.substr(0, a.size() / 2 + 1) + short_key(random);
    if (b.size() > detail::kBlockBytes) b.resize(detail::kBlockBytes);
    if (b < a) std::swap(a, b);
    if (invalid_reason(a) || invalid_reason(b) || a == b) continue;
    const std::uint32_t seed = random.next();
    const auto same = [&](std::optional<std::string_view> lower,
                          std::optional<std::string_view> upper) {
      auto one = Mulberry32::from_seed(seed);
      auto other = Mulberry32::from_seed(seed);
      const auto quick = between(lower, upper, one);
      const auto general = n_between(lower, upper, 1, other);
      ASSERT_EQ(quick.has_value(), general.has_value()) << a << " / " << b;
      if (quick) {
        ASSERT_EQ(*quick, general->at(0)) << a << " / " << b;
      }
      ASSERT_EQ(one.next(), other.next()) << "draws differ: " << a << " / " << b;
    };
    same(a, b);
    same(a, std::nullopt);
    same(std::nullopt, b);
    ++compared;
  }
  EXPECT_GT(compared, 20'000);
}

// Appends and prepends after and before short keys, valid or not: the same
// key and draws as the general path, or the same error.
TEST(KeyBlock, OpenEndsGiveTheGeneralPathsAnswer) {
  auto random = Mulberry32::from_seed(13);
  int keys = 0;
  int errors = 0;
  for (int round = 0; round < 50'000; ++round) {
    const std::string key = short_key(random);
    const std::uint32_t seed = random.next();
    for (const bool append : {true, false}) {
      auto one = Mulberry32::from_seed(seed);
      auto other = Mulberry32::from_seed(seed);
      const auto lower = append ? std::optional<std::string_view>(key) : std::nullopt;
      const auto upper = append ? std::nullopt : std::optional<std::string_view>(key);
      const auto quick = between(lower, upper, one);
      const auto general = n_between(lower, upper, 1, other);
      ASSERT_EQ(quick.has_value(), general.has_value()) << key;
      if (quick) {
        ASSERT_EQ(*quick, general->at(0)) << key;
        ASSERT_TRUE(append ? key < *quick : *quick < key) << key << " -> " << *quick;
        ++keys;
      } else {
        ASSERT_EQ(quick.error().code, general.error().code) << key;
        ++errors;
      }
      ASSERT_EQ(one.next(), other.next()) << "draws differ: " << key;
    }
  }
  EXPECT_GT(keys, 20'000);
  EXPECT_GT(errors, 10'000);
}

}  // namespace
}  // namespace bulleted::ordering
