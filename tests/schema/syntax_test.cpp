// The protocol's own syntax vectors: every *_valid line parses, every
// *_invalid line is refused.
#include "schema/syntax.hpp"

#include <gtest/gtest.h>

#include <functional>

#include "tests/support/vector_file.hpp"

namespace bulleted::schema {
namespace {

using Check = std::function<bool(std::string_view)>;

std::vector<std::string> lines(const std::string& name) {
  return testing::read_syntax_file(std::string(BULLETED_FIXTURES_DIR) + "/interop/syntax/" + name);
}

void expect_table(const std::string& stem, const Check& accepts) {
  const auto valid = lines(stem + "_syntax_valid.txt");
  const auto invalid = lines(stem + "_syntax_invalid.txt");
  ASSERT_FALSE(valid.empty());
  ASSERT_FALSE(invalid.empty());
  for (const auto& line : valid)
    EXPECT_TRUE(accepts(line)) << stem << " rejected: '" << line << "'";
  for (const auto& line : invalid)
    EXPECT_FALSE(accepts(line)) << stem << " accepted: '" << line << "'";
}

TEST(Syntax, Did) {
  expect_table("did", [](std::string_view s) { return Did::parse(s).has_value(); });
}
TEST(Syntax, Handle) {
  expect_table("handle", [](std::string_view s) { return Handle::parse(s).has_value(); });
}
TEST(Syntax, Nsid) {
  expect_table("nsid", [](std::string_view s) { return Nsid::parse(s).has_value(); });
}
TEST(Syntax, RecordKey) {
  expect_table("recordkey", [](std::string_view s) { return RecordKey::parse(s).has_value(); });
}
TEST(Syntax, AtUri) {
  expect_table("aturi", [](std::string_view s) { return AtUri::parse(s).has_value(); });
}
TEST(Syntax, Datetime) {
  expect_table("datetime", [](std::string_view s) { return Datetime::parse(s).has_value(); });
  const auto semantic = lines("datetime_parse_invalid.txt");
  ASSERT_FALSE(semantic.empty());
  for (const auto& line : semantic) EXPECT_FALSE(Datetime::parse(line).has_value()) << line;
}

TEST(Syntax, AtUriParts) {
  auto uri = AtUri::parse("at://did:plc:abc/app.bulleted.node/3jzfcijpj2z2a");
  ASSERT_TRUE(uri.has_value());
  EXPECT_TRUE(uri->authority_is_did);
  EXPECT_EQ(uri->authority, "did:plc:abc");
  EXPECT_EQ(uri->collection, "app.bulleted.node");
  EXPECT_EQ(uri->rkey, "3jzfcijpj2z2a");
  EXPECT_EQ(uri->str(), "at://did:plc:abc/app.bulleted.node/3jzfcijpj2z2a");
  auto by_handle = AtUri::parse("at://alice.example.com/app.bulleted.node/x");
  ASSERT_TRUE(by_handle.has_value());
  EXPECT_FALSE(by_handle->authority_is_did);
}

}  // namespace
}  // namespace bulleted::schema
