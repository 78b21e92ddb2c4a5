// Facets are checked like the rest of a record: only valid ones are kept,
// bounded, and a record from the network keeps its text without its bad ones.
#include <gtest/gtest.h>

#include "schema/node_record.hpp"

namespace bulleted::schema {
namespace {

using nlohmann::json;

TEST(FacetTest, OnlyValidFacetsAreKept) {
  const std::string text = "h\xc3\xa9llo world";  // é is two bytes (1..3)
  auto facet = [](std::int64_t start, std::int64_t end, json feature) {
    return json{{"index", {{"byteStart", start}, {"byteEnd", end}}},
                {"features", json::array({std::move(feature)})}};
  };
  const json bold = {{"$type", "app.bulleted.node#bold"}};
  const json cases = json::array({
      facet(0, 5, bold),   // kept
      facet(0, 2, bold),   // mid-character
      facet(5, 5, bold),   // empty
      facet(3, 99, bold),  // past the text
      facet(-1, 3, bold),  // negative
      facet(6, 11, {{"$type", "app.bulleted.node#link"}, {"uri", "javascript:alert(1)"}}),
      facet(6, 11, {{"$type", "app.bulleted.node#link"}, {"uri", "HTTPS://example.com/"}}),  // kept
      facet(6, 11, {{"$type", "app.bulleted.node#link"}, {"uri", "mailto:a@example.com"}}),  // kept
      facet(6, 11, {{"$type", "app.bulleted.node#link"}, {"uri", "data:text/html,x"}}),
      facet(0, 1, {{"$type", "app.bulleted.node#highlight"}, {"color", std::string(65, 'r')}}),
      facet(0, 1,
            {{"$type", "app.bulleted.node#highlight"},
             {"color", "red"},
             {"extra", std::string(1000, 'x')}}),  // kept, trimmed
      facet(0, 1, {{"$type", "app.bulleted.node#blink"}}),
      json("not an object"),
  });
  std::vector<std::string> problems;
  const json kept = schema::sanitize_facets(text, cases, &problems);
  ASSERT_TRUE(kept.is_array());
  ASSERT_EQ(kept.size(), 4u) << kept.dump();
  // An earlier build's names are read under the names written now.
  EXPECT_EQ(kept[0], facet(0, 5, {{"$type", "app.bulleted.format#bold"}}));
  EXPECT_EQ(kept[1]["features"][0]["$type"], "app.bsky.richtext.facet#link");
  EXPECT_EQ(kept[1]["features"][0]["uri"], "HTTPS://example.com/");
  EXPECT_EQ(kept[2]["features"][0]["uri"], "mailto:a@example.com");
  EXPECT_EQ(kept[3]["features"][0],
            json({{"$type", "app.bulleted.format#highlight"}, {"color", "red"}}));
  EXPECT_EQ(problems.size(), 9u);
  // Bounded in count and in bytes, whatever arrives.
  json many = json::array();
  for (int i = 0; i < 5'000; ++i) many.push_back(facet(0, 1, bold));
  const json bounded = schema::sanitize_facets(text, many);
  EXPECT_LE(bounded.size(), schema::kMaxFacets);
  EXPECT_LE(bounded.dump().size(), schema::kMaxFacetBytes);
  EXPECT_TRUE(schema::sanitize_facets(text, json::array({json(5)})).is_null());
}

TEST(FacetTest, StylesAreTheProjectsOwnFeaturesUnderEitherName) {
  const std::string text = "hello";
  auto one = [&](json feature) {
    return schema::sanitize_facets(
        text, json::array({{{"index", {{"byteStart", 0}, {"byteEnd", 5}}},
                            {"features", json::array({std::move(feature)})}}}));
  };
  for (const char* style : {"bold", "italic", "underline", "strikethrough", "code"}) {
    const json expected = json::array(
        {{{"index", {{"byteStart", 0}, {"byteEnd", 5}}},
          {"features", json::array({{{"$type", std::string("app.bulleted.format#") + style}}})}}});
    EXPECT_EQ(one({{"$type", std::string("app.bulleted.format#") + style}}), expected) << style;
    EXPECT_EQ(one({{"$type", std::string("app.bulleted.node#") + style}}), expected) << style;
  }
  // The project's own names that mean nothing are dropped; a link is the
  // published facet's, never app.bulleted.format#link.
  EXPECT_TRUE(one({{"$type", "app.bulleted.format#blink"}}).is_null());
  EXPECT_TRUE(
      one({{"$type", "app.bulleted.format#link"}, {"uri", "https://a.example/"}}).is_null());
  EXPECT_EQ(schema::style_of("app.bsky.richtext.facet#link"), "link");
  EXPECT_EQ(schema::style_of("app.bulleted.node#link"), "link");
  EXPECT_EQ(schema::style_of("app.bsky.richtext.facet#tag"), "");
}

TEST(FacetTest, ARecordFromTheNetworkKeepsItsTextWithoutItsBadFacets) {
  json record = {
      {"$type", "app.bulleted.node"},
      {"text", "click"},
      {"sortKey", "a0"},
      {"createdAt", "2026-12-01T00:00:00.000Z"},
      {"facets", json::array({{{"index", {{"byteStart", 0}, {"byteEnd", 5}}},
                               {"features", json::array({{{"$type", "app.bulleted.node#link"},
                                                          {"uri", "javascript:x"}}})}}})}};
  auto parsed = schema::parse_node_record(record);
  ASSERT_TRUE(parsed.has_value()) << parsed.error();
  EXPECT_EQ(parsed->text, "click");
  EXPECT_TRUE(parsed->facets.is_null());
  EXPECT_EQ(schema::to_json_text(*parsed).find("javascript"), std::string::npos);
}

}  // namespace
}  // namespace bulleted::schema
