// JSON bodies read without a document tree: top-level scalars kept, nesting
// bounded, anything but one object refused.
#include "appview/xrpc/json_body.hpp"

#include <gtest/gtest.h>

namespace bulleted::appview {
namespace {

using nlohmann::json;

TEST(JsonBodyTest, KeepsTopLevelScalarsAndOnlyTheKindOfNestedValues) {
  auto body = JsonBody::parse(
      R"({"repo":"did:plc:a","n":5,"ok":true,"none":null,"deep":{"x":[1,2,{"y":"z"}]},"list":[1],"repo":"did:plc:b"})");
  ASSERT_TRUE(body.has_value()) << body.error().message;
  EXPECT_EQ(*body->find("repo"), "did:plc:b") << "a repeated name keeps its last value";
  EXPECT_EQ(*body->find("n"), 5);
  EXPECT_EQ(*body->find("ok"), true);
  EXPECT_TRUE(body->find("none")->is_null());
  EXPECT_EQ(*body->find("deep"), json::object()) << "nested values are not kept";
  EXPECT_EQ(*body->find("list"), json::array());
  EXPECT_EQ(body->find("absent"), nullptr);
  EXPECT_EQ(body->take_string("repo"), "did:plc:b");
  EXPECT_FALSE(body->take_string("n").has_value());
}

TEST(JsonBodyTest, NestingPastTheLimitStopsTheParse) {
  // The abuse report's body, scaled down: {"x": followed by brackets.
  const std::string deep =
      "{\"x\":" + std::string(1'000'000, '[') + std::string(1'000'000, ']') + "}";
  auto body = JsonBody::parse(deep);
  ASSERT_FALSE(body.has_value());
  EXPECT_EQ(body.error().code, ErrorCode::kInvalidRequest);
  EXPECT_NE(body.error().message.find("deeper than 32 levels"), std::string::npos)
      << body.error().message;
  // Exactly at the limit is fine.
  const std::string at_limit = "{\"x\":" + std::string(31, '[') + std::string(31, ']') + "}";
  EXPECT_TRUE(JsonBody::parse(at_limit).has_value());
  const std::string past = "{\"x\":" + std::string(32, '[') + std::string(32, ']') + "}";
  EXPECT_FALSE(JsonBody::parse(past).has_value());
}

TEST(JsonBodyTest, RefusesWhatIsNotOneObject) {
  for (const char* text :
       {"[1,2]", "\"x\"", "5", "{not json", "{\"a\":1} {\"b\":2}", "", "{\"a\":"}) {
    auto body = JsonBody::parse(text);
    EXPECT_FALSE(body.has_value()) << text;
    if (!body) {
      EXPECT_EQ(body.error().code, ErrorCode::kInvalidRequest) << text;
    }
  }
}

}  // namespace
}  // namespace bulleted::appview
