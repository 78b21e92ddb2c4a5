#include "schema/json_text.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace bulleted::schema {
namespace {

std::string escaped(std::string_view text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

// The escaper reads plain text eight bytes at a time: every byte that needs
// more than a copy is tried at every place in and across those words, alone
// and beside another.
TEST(JsonText, EscapesEveryByteThatNeedsItAtEveryOffset) {
  const std::string plain = "The quick brown fox jumps over 13 lazy dogs.";
  const std::vector<std::string> specials = {
      "\"", "\\", "\b", "\f", "\n", "\r", "\t", std::string(1, '\0'), "\x01", "\x1f",
      // Copied as they are: the last plain bytes, and valid UTF-8.
      " ", "~", "\x7f", "caf\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80"};
  for (const auto& special : specials) {
    for (std::size_t at = 0; at <= 20; ++at) {
      for (const std::string& pair : {special, special + "\"" + special}) {
        const std::string text = plain.substr(0, at) + pair + plain.substr(at);
        EXPECT_EQ(escaped(text), nlohmann::json(text).dump()) << at << ": " << text;
      }
    }
  }
  for (std::size_t length = 0; length <= 17; ++length) {
    const std::string text = plain.substr(0, length);
    EXPECT_EQ(escaped(text), "\"" + text + "\"");
  }
}

// A byte that starts no UTF-8 character is written as U+FFFD, wherever it
// falls in a word.
TEST(JsonText, ReplacesBytesThatAreNotUtf8AtEveryOffset) {
  const std::string plain = "abcdefghijklmnopqrstuvwx";
  for (const std::string bad : {"\x80", "\xFF", "\xC3", "\xED\xA0\x80"}) {
    for (std::size_t at = 0; at <= 17; ++at) {
      const std::string text = plain.substr(0, at) + bad + plain.substr(at);
      std::string replaced;
      for (std::size_t k = 0; k < bad.size(); ++k) replaced += "\xEF\xBF\xBD";
      EXPECT_EQ(escaped(text), "\"" + plain.substr(0, at) + replaced + plain.substr(at) + "\"")
          << at;
    }
  }
}

}  // namespace
}  // namespace bulleted::schema
