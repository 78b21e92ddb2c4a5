// Table-driven order-key checks against tests/ordering/vectors/.
#include "ordering/order_key.hpp"

#include <gtest/gtest.h>

#include <string>

#include "tests/support/vector_file.hpp"

namespace bulleted::ordering {
namespace {

using testing::read_vector_file;
using testing::unescape_field;

std::string vector_path(const std::string& name) {
  return std::string(BULLETED_SOURCE_DIR) + "/tests/ordering/vectors/" + name;
}

std::optional<std::string_view> bound(const std::string& field) {
  if (field == "-") return std::nullopt;
  return std::string_view(field);
}

TEST(OrderKeyVectors, ValidKeysAreAccepted) {
  const auto lines = read_vector_file(vector_path("valid_keys.txt"));
  ASSERT_GE(lines.size(), 10u);
  for (const auto& line : lines) {
    const std::string key = unescape_field(line.fields.at(0));
    EXPECT_EQ(invalid_reason(key), std::nullopt) << "line " << line.line_number << ": " << key;
    EXPECT_TRUE(OrderKey::parse(key).has_value());
  }
}

TEST(OrderKeyVectors, InvalidKeysAreRejectedWithTheirReason) {
  const auto lines = read_vector_file(vector_path("invalid_keys.txt"));
  ASSERT_GE(lines.size(), 10u);
  for (const auto& line : lines) {
    const std::string key = unescape_field(line.fields.at(0));
    const std::string expected = line.rest_after(1);
    const auto reason = invalid_reason(key);
    ASSERT_TRUE(reason.has_value()) << "line " << line.line_number << " accepted: " << key;
    EXPECT_NE(reason->find(expected), std::string::npos)
        << "line " << line.line_number << ": reason '" << *reason << "' lacks '" << expected << "'";
    auto parsed = OrderKey::parse(key);
    ASSERT_FALSE(parsed.has_value());
    EXPECT_EQ(parsed.error().code, KeyErrorCode::kInvalidKey);
  }
}

TEST(OrderKeyVectors, IncrementAndDecrementPairs) {
  const auto lines = read_vector_file(vector_path("increment.txt"));
  ASSERT_GE(lines.size(), 10u);
  for (const auto& line : lines) {
    const std::string& from = line.fields.at(0);
    const std::string& to = line.fields.at(1);
    auto inc = increment_integer(from);
    if (to == "!Exhausted") {
      ASSERT_FALSE(inc.has_value()) << "line " << line.line_number;
      EXPECT_EQ(inc.error().code, KeyErrorCode::kExhausted);
      continue;
    }
    ASSERT_TRUE(inc.has_value()) << "line " << line.line_number << ": " << inc.error().message;
    EXPECT_EQ(*inc, to) << "increment of " << from;
    auto dec = decrement_integer(to);
    ASSERT_TRUE(dec.has_value()) << "line " << line.line_number;
    EXPECT_EQ(*dec, from) << "decrement of " << to;
  }
}

TEST(OrderKeyVectors, BetweenCasesWithOneAnswer) {
  const auto lines = read_vector_file(vector_path("between.txt"));
  ASSERT_GE(lines.size(), 10u);
  for (const auto& line : lines) {
    const std::string& expected = line.fields.at(2);
    // One possible answer: every jitter stream must give it.
    for (std::uint32_t seed = 1; seed <= 8; ++seed) {
      auto jitter = Mulberry32::from_seed(seed);
      auto got = between(bound(line.fields.at(0)), bound(line.fields.at(1)), jitter);
      if (expected[0] == '!') {
        ASSERT_FALSE(got.has_value()) << "line " << line.line_number << " gave " << *got;
        EXPECT_EQ(std::string("!") + std::string(error_name(got.error().code)), expected)
            << "line " << line.line_number;
      } else {
        ASSERT_TRUE(got.has_value()) << "line " << line.line_number << ": " << got.error().message;
        EXPECT_EQ(*got, expected) << "line " << line.line_number << " seed " << seed;
      }
    }
  }
}

TEST(OrderKeyErrors, NamesAreStable) {
  EXPECT_EQ(error_name(KeyErrorCode::kInvalidKey), "InvalidKey");
  EXPECT_EQ(error_name(KeyErrorCode::kOutOfOrder), "OutOfOrder");
  EXPECT_EQ(error_name(KeyErrorCode::kExhausted), "Exhausted");
}

TEST(OrderKeyErrors, IncrementRefusesWhatIsNotAnIntegerPart) {
  for (std::string bad : {"", "a", "a01", "b0", "0a", "a-"}) {
    auto inc = increment_integer(bad);
    ASSERT_FALSE(inc.has_value()) << bad;
    EXPECT_EQ(inc.error().code, KeyErrorCode::kInvalidKey);
    EXPECT_FALSE(decrement_integer(bad).has_value()) << bad;
  }
  auto dec = decrement_integer(kReservedInteger);
  ASSERT_FALSE(dec.has_value());
  EXPECT_EQ(dec.error().code, KeyErrorCode::kExhausted);
}

TEST(RandomSource, MatchesTheReferenceCheckValues) {
  EXPECT_EQ(fmix32(1), 1364076727u);
  auto one = Mulberry32::from_seed(1);
  for (std::uint32_t want : {1228566310u, 1041339923u, 2248853198u, 1551223671u, 657430983u}) {
    EXPECT_EQ(one.next(), want);
  }
  auto jitter = Mulberry32::from_seed(1 ^ 0xA5A5A5A5u);
  for (std::uint32_t want : {3806408673u, 1202572405u, 3838291353u}) {
    EXPECT_EQ(jitter.next(), want);
  }
  EXPECT_EQ(below(0xFFFFFFFFu, 31), 30u);
  EXPECT_EQ(below(0, 31), 0u);
}

}  // namespace
}  // namespace bulleted::ordering
