// The answers' JSON writer against nlohmann's reading and writing of the
// same values: escapes, UTF-8 kept or replaced, commas in nested containers,
// and NodeViews written from rows.
#include "appview/xrpc/json_writer.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "appview/xrpc/views.hpp"
#include "schema/syntax.hpp"

namespace bulleted::appview {
namespace {

std::string written(std::string_view text) {
  std::string out;
  JsonWriter(out).string(text);
  return out;
}

TEST(JsonWriter, StringsMatchNlohmannForEveryValidText) {
  // Every control character, quotes, backslashes, and characters of every
  // UTF-8 length.
  std::string all;
  for (int c = 0; c < 0x80; ++c) all += static_cast<char>(c);
  all += "é € 𝄞 \u2028 \xF4\x8F\xBF\xBF";
  EXPECT_EQ(written(all), nlohmann::json(all).dump());
  std::mt19937 rng(1);
  const std::vector<std::string> pieces = {"a", "\"", "\\", "\n", "\x01", "\x1f", "\x7f",  "é",
                                           "€", "𝄞",  " ",  "/",  "<",    "\t",   "\u00a0"};
  for (int i = 0; i < 2000; ++i) {
    std::string text;
    const int n = static_cast<int>(rng() % 30);
    for (int k = 0; k < n; ++k) text += pieces[rng() % pieces.size()];
    ASSERT_EQ(written(text), nlohmann::json(text).dump()) << text;
  }
}

TEST(JsonWriter, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"a\xFF"
       "b",
       "a\uFFFD"
       "b"},
      {"\xC0\xAF", "\uFFFD\uFFFD"},                      // overlong '/'
      {"\xE0\x80\xAF", "\uFFFD\uFFFD\uFFFD"},            // overlong, three bytes
      {"\xED\xA0\x80", "\uFFFD\uFFFD\uFFFD"},            // a surrogate
      {"\xF4\x90\x80\x80", "\uFFFD\uFFFD\uFFFD\uFFFD"},  // past U+10FFFF
      {"ok\xE2\x82", "ok\uFFFD\uFFFD"},                  // cut short
      {"\x80", "\uFFFD"},
  };
  for (const auto& [in, out] : cases) {
    auto parsed = nlohmann::json::parse(written(in));
    EXPECT_EQ(parsed.get<std::string>(), out);
  }
}

TEST(JsonWriter, NestedContainersGetTheirCommas) {
  std::string out;
  JsonWriter json(out);
  json.begin_object();
  json.key("a").begin_array().number(1).number(-2).boolean(true).begin_object().end_object();
  json.begin_array().end_array().string("x").end_array();
  json.key("b").string_of({"at://", "did:plc:x", "/", "c\"d"});
  json.key("c").raw("[1,2]");
  json.key("d").number(INT64_MIN);
  json.end_object();
  EXPECT_EQ(nlohmann::json::parse(out),
            nlohmann::json::parse(R"({"a":[1,-2,true,{},[],"x"],"b":"at://did:plc:x/c\"d",)"
                                  R"("c":[1,2],"d":-9223372036854775808})"));
}

TEST(JsonWriter, NodeViewsHaveEveryFieldAndNoNulls) {
  schema::NodeRow row;
  row.did = "did:plc:alice";
  row.rkey = "3kabc";
  row.cid = "bafyabc";
  row.group = schema::children_group(row.did, "3kparent");
  row.parent_rkey = "3kparent";
  row.sort_key = "a0";
  row.sort_key_raw = "a0";
  row.sort_key_valid = true;
  row.text = "bold \"quoted\" line\nnext";
  row.note = "a note";
  row.created_at = "2026-12-01T00:00:00.000Z";
  row.facets = schema::served_facets(
      row.text, R"({"text":"bold \"quoted\" line\nnext","facets":[{"index":{"byteStart":0,)"
                R"("byteEnd":4},"features":[{"$type":"app.bulleted.format#bold"}]}]})");
  row.child_count = 7;
  const auto view = node_view(row);
  EXPECT_EQ(view["uri"], "at://did:plc:alice/app.bulleted.node/3kabc");
  EXPECT_EQ(view["parent"], "3kparent");
  EXPECT_EQ(view["text"], row.text);
  EXPECT_EQ(view["childCount"], 7);
  EXPECT_EQ(view["note"], "a note");
  EXPECT_FALSE(view.contains("unattached"));
  ASSERT_TRUE(view.contains("facets"));
  EXPECT_EQ(view["facets"][0]["index"]["byteEnd"], 4);
  // A top-level node without a note or a key: those fields are absent or
  // empty, never null.
  row.parent_rkey.reset();
  row.note.reset();
  row.sort_key_raw.reset();
  row.sort_key_valid = false;
  row.facets.reset();
  const auto top = node_view(row);
  EXPECT_FALSE(top.contains("parent"));
  EXPECT_FALSE(top.contains("note"));
  EXPECT_FALSE(top.contains("facets"));
  EXPECT_EQ(top["sortKey"], "");
  for (const auto& [key, value] : top.items()) EXPECT_FALSE(value.is_null()) << key;
}

}  // namespace
}  // namespace bulleted::appview
