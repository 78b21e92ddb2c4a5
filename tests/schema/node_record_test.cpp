#include "schema/node_record.hpp"

#include <gtest/gtest.h>

namespace bulleted::schema {
namespace {

using nlohmann::json;

json base() {
  return {{"$type", "app.bulleted.node"},
          {"text", "hello"},
          {"sortKey", "a0"},
          {"createdAt", "2026-11-30T12:00:00.000Z"}};
}

std::string repeat(const std::string& unit, std::size_t n) {
  std::string out;
  out.reserve(unit.size() * n);
  for (std::size_t i = 0; i < n; ++i) out += unit;
  return out;
}

TEST(NodeRecord, ParsesAWellFormedRecord) {
  json j = base();
  j["note"] = "a note";
  j["parent"] = "at://did:plc:abc/app.bulleted.node/3jzfcijpj2z2a";
  j["completed"] = true;
  j["somethingNew"] = {{"x", 1}};  // unknown fields are ignored
  auto record = parse_node_record(j);
  ASSERT_TRUE(record.has_value()) << record.error();
  EXPECT_EQ(record->text, "hello");
  EXPECT_EQ(record->note, "a note");
  EXPECT_EQ(record->parent, "at://did:plc:abc/app.bulleted.node/3jzfcijpj2z2a");
  EXPECT_TRUE(record->completed);
  EXPECT_TRUE(record->sort_key_valid);
  EXPECT_EQ(record->effective_sort_key(), "a0");
  EXPECT_FALSE(to_json(*record).contains("somethingNew"));
  EXPECT_EQ(to_json(*record)["$type"], "app.bulleted.node");
}

// The published record (DESIGN.md section 12): completion is completedAt,
// layout and display are open sets kept as written, facets are
// app.bsky.richtext.facet's (a feature of a type nobody here knows is kept
// as it came). Written back the same way, and never as `completed`.
TEST(NodeRecord, ThePublishedFieldsAreReadAndWrittenBack) {
  json j = base();
  j["completedAt"] = "2026-12-02T09:30:00.000Z";
  j["layout"] = "todo";
  j["display"] = "collapsed";
  j["text"] = "@ann see https://x.example #work";
  j["facets"] = json::array({
      {{"index", {{"byteStart", 0}, {"byteEnd", 4}}},
       {"features", json::array({{{"$type", "app.bsky.richtext.facet#mention"},
                                  {"did", "did:plc:ewvi7nxzyoun6zhxrhs64oiz"}}})}},
      {{"index", {{"byteStart", 9}, {"byteEnd", 26}}},
       {"features",
        json::array({{{"$type", "app.bsky.richtext.facet#link"}, {"uri", "https://x.example"}}})}},
      {{"index", {{"byteStart", 27}, {"byteEnd", 32}}},
       {"features", json::array({{{"$type", "app.bsky.richtext.facet#tag"}, {"tag", "work"}},
                                 {{"$type", "com.example.fancy#glow"}, {"level", 3}}})}},
      // Dropped: a mention of no DID, a link to javascript:.
      {{"index", {{"byteStart", 0}, {"byteEnd", 4}}},
       {"features",
        json::array({{{"$type", "app.bsky.richtext.facet#mention"}, {"did", "ann.example"}}})}},
      {{"index", {{"byteStart", 9}, {"byteEnd", 26}}},
       {"features", json::array({{{"$type", "app.bsky.richtext.facet#link"},
                                  {"uri", "javascript:alert(1)"}}})}},
  });
  auto record = parse_node_record(j);
  ASSERT_TRUE(record.has_value()) << record.error();
  EXPECT_TRUE(record->completed);
  EXPECT_EQ(record->completed_at, "2026-12-02T09:30:00.000Z");
  EXPECT_EQ(record->layout, "todo");
  EXPECT_EQ(record->display, "collapsed");
  ASSERT_EQ(record->facets.size(), 3u) << record->facets.dump();
  EXPECT_EQ(record->facets[2]["features"][1],
            json({{"$type", "com.example.fancy#glow"}, {"level", 3}}))
      << "another type, kept as it came";
  const json written = to_json(*record);
  EXPECT_EQ(written["completedAt"], "2026-12-02T09:30:00.000Z");
  EXPECT_FALSE(written.contains("completed"));
  EXPECT_EQ(written["layout"], "todo");
  EXPECT_EQ(written["display"], "collapsed");
  EXPECT_EQ(to_json(*parse_node_record(written)), written) << "read back the same";
  // Values of a later version are kept as written.
  j["layout"] = "kanbanCard";
  j["display"] = "";
  record = parse_node_record(j);
  ASSERT_TRUE(record.has_value()) << record.error();
  EXPECT_EQ(record->layout, "kanbanCard");
  EXPECT_EQ(record->display, "");
  // A feature of another type larger than the cap is dropped, the rest kept.
  j["facets"] = json::array({{{"index", {{"byteStart", 0}, {"byteEnd", 4}}},
                              {"features", json::array({{{"$type", "com.example.big#x"},
                                                         {"pad", std::string(2000, 'p')}}})}}});
  record = parse_node_record(j);
  ASSERT_TRUE(record.has_value());
  EXPECT_TRUE(record->facets.is_null());
}

// A record an earlier build of this app view wrote (`completed: true`) is
// completed since its createdAt; written again, it says completedAt. A
// writer completes at its now, keeps the time of one completed already, and
// un-completing removes it.
TEST(NodeRecord, AnEarlierBuildsCompletedIsReadAsCompletedAt) {
  json j = base();
  j["completed"] = true;
  auto record = parse_node_record(j);
  ASSERT_TRUE(record.has_value());
  EXPECT_TRUE(record->completed);
  EXPECT_EQ(record->completed_at, std::nullopt);
  EXPECT_EQ(record->completed_since(), "2026-11-30T12:00:00.000Z");
  EXPECT_EQ(to_json(*record)["completedAt"], "2026-11-30T12:00:00.000Z");
  EXPECT_FALSE(to_json(*record).contains("completed"));
  // completedAt wins over the old boolean.
  j["completed"] = false;
  j["completedAt"] = "2026-12-03T00:00:00.000Z";
  EXPECT_TRUE(parse_node_record(j)->completed);
  NodeRecord fresh = *parse_node_record(base());
  fresh.set_completed(true, "2026-12-07T10:00:00.000Z");
  EXPECT_EQ(fresh.completed_since(), "2026-12-07T10:00:00.000Z");
  fresh.set_completed(true, "2026-12-08T10:00:00.000Z");
  EXPECT_EQ(fresh.completed_since(), "2026-12-07T10:00:00.000Z") << "completed already";
  fresh.set_completed(false, "2026-12-09T10:00:00.000Z");
  EXPECT_EQ(fresh.completed_since(), std::nullopt);
  EXPECT_FALSE(to_json(fresh).contains("completedAt"));
}

TEST(NodeRecord, BadOrMissingSortKeyIsKeptAndSortsLast) {
  for (json key : {json("a00"), json(std::string(600, 'a')), json(42), json(nullptr)}) {
    json j = base();
    j["sortKey"] = key;
    auto record = parse_node_record(j);
    ASSERT_TRUE(record.has_value()) << record.error();
    EXPECT_FALSE(record->sort_key_valid);
    EXPECT_EQ(record->effective_sort_key(), kInvalidSortKey);
    EXPECT_GT(std::string(record->effective_sort_key()), std::string("zzzzzz"));
  }
  json j = base();
  j.erase("sortKey");
  auto record = parse_node_record(j);
  ASSERT_TRUE(record.has_value());
  EXPECT_FALSE(record->sort_key.has_value());
  EXPECT_FALSE(record->sort_key_valid);
}

TEST(NodeRecord, RejectsWithAReason) {
  struct Case {
    std::function<void(json&)> mutate;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {[](json& j) { j.erase("text"); }, "text is required"},
      {[](json& j) { j["text"] = 5; }, "text is required"},
      {[](json& j) { j["text"] = std::string(1'000'000, 'x'); }, "longer than 100000 bytes"},
      {[](json& j) { j["text"] = repeat("\xF0\x9F\x98\x80", 20'001); },
       "more than 20000 graphemes"},
      {[](json& j) { j["text"] = std::string("bad \xC3\x28 utf8"); }, "not valid UTF-8"},
      {[](json& j) { j["note"] = std::string(100'001, 'n'); }, "note is longer"},
      {[](json& j) { j["parent"] = "not a uri"; }, "parent:"},
      {[](json& j) { j["parent"] = 7; }, "parent is not a string"},
      {[](json& j) { j["completed"] = "yes"; }, "completed is not a boolean"},
      {[](json& j) { j["completedAt"] = "yesterday"; }, "completedAt:"},
      {[](json& j) { j["completedAt"] = true; }, "completedAt is not a string"},
      {[](json& j) { j["layout"] = 5; }, "layout is not a string"},
      {[](json& j) { j["display"] = std::string(257, 'c'); }, "display is longer than 256"},
      {[](json& j) { j.erase("createdAt"); }, "createdAt is required"},
      {[](json& j) { j["createdAt"] = "yesterday"; }, "createdAt:"},
      {[](json& j) { j["$type"] = "app.bsky.feed.post"; }, "$type"},
  };
  for (const auto& c : cases) {
    json j = base();
    c.mutate(j);
    auto record = parse_node_record(j);
    ASSERT_FALSE(record.has_value()) << "accepted, expected: " << c.reason;
    EXPECT_NE(record.error().find(c.reason), std::string::npos)
        << "'" << record.error() << "' lacks '" << c.reason << "'";
  }
  EXPECT_FALSE(parse_node_record(json::array()).has_value());
}

TEST(NodeRecord, GraphemesNotCodePoints) {
  // 20,000 'e' + combining acute: 40,000 code points, 20,000 graphemes.
  json j = base();
  j["text"] = repeat("e\xCC\x81", 20'000);
  EXPECT_TRUE(parse_node_record(j).has_value());
  EXPECT_EQ(count_graphemes(repeat("e\xCC\x81", 3)), 3u);
  // A family emoji (ZWJ sequence) is one grapheme.
  EXPECT_EQ(
      count_graphemes("\xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA7"),
      1u);
  EXPECT_EQ(count_graphemes("abc"), 3u);
}

TEST(NodeRecord, SiblingGroupNeverCrossesRepos) {
  const std::string did = "did:plc:alice";
  EXPECT_EQ(sibling_group(did, std::nullopt), "at://did:plc:alice");
  EXPECT_EQ(sibling_group(did, "at://did:plc:alice/app.bulleted.node/3jzfcijpj2z2a"),
            "at://did:plc:alice/app.bulleted.node/3jzfcijpj2z2a");
  // Another repo, another collection, a handle, no rkey: unattached.
  for (std::string parent : {"at://did:plc:mallory/app.bulleted.node/3jzfcijpj2z2a",
                             "at://did:plc:alice/app.bsky.feed.post/3jzfcijpj2z2a",
                             "at://alice.example.com/app.bulleted.node/3jzfcijpj2z2a",
                             "at://did:plc:alice/app.bulleted.node", "at://did:plc:alice"}) {
    EXPECT_EQ(sibling_group(did, parent), unattached_group(did)) << parent;
  }
}

TEST(NodeRecord, DirectJsonTextMatchesTheJsonLibrary) {
  NodeRecord record;
  record.created_at = "2026-11-30T12:00:00.000Z";
  for (std::string text : {std::string("plain"), std::string("quote \" backslash \\ slash /"),
                           std::string("controls \b\f\n\r\t \x01\x1f \x7f"),
                           std::string("unicode caf\xC3\xA9 \xF0\x9F\x98\x80"), std::string(),
                           // Escapes first, last and side by side, between runs of plain text.
                           std::string("\"first"), std::string("last\\"), std::string("\n\n\x02\""),
                           std::string("a\tb\tc")}) {
    record.text = text;
    EXPECT_EQ(to_json_text(record), to_json(record).dump()) << text;
    record.note = text + " note";
    record.parent = "at://did:plc:a/app.bulleted.node/x";
    record.sort_key = "a0";
    record.completed = true;
    record.facets = nlohmann::json::array({{{"index", {{"byteStart", 0}, {"byteEnd", 1}}}}});
    EXPECT_EQ(to_json_text(record), to_json(record).dump()) << text;
    record.completed_at = "2026-12-01T08:00:00.000Z";
    record.layout = text;
    record.display = "collapsed";
    EXPECT_EQ(to_json_text(record), to_json(record).dump()) << text;
    record = NodeRecord{.created_at = record.created_at};
  }
}

TEST(Utf8, Validation) {
  EXPECT_TRUE(is_valid_utf8("plain ascii"));
  EXPECT_TRUE(is_valid_utf8("caf\xC3\xA9 \xF0\x9F\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("\xC0\x80"));          // overlong NUL
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\xE2\x82"));          // truncated
  EXPECT_FALSE(is_valid_utf8("\xFF"));
}

TEST(Utf8, OneStrayByteIsFoundAtEveryPositionOfEveryShortLength) {
  // ASCII is checked a word at a time, the last word overlapping: a stray
  // continuation byte must be seen wherever it falls.
  for (std::size_t length = 0; length <= 40; ++length) {
    std::string text(length, 'x');
    EXPECT_TRUE(is_valid_utf8(text)) << length;
    for (std::size_t at = 0; at < length; ++at) {
      text[at] = '\x80';
      EXPECT_FALSE(is_valid_utf8(text)) << length << " " << at;
      text[at] = '\xC3';  // a lead byte without its continuation...
      EXPECT_FALSE(is_valid_utf8(text)) << length << " " << at;
      if (at + 1 < length) {
        text[at + 1] = '\xA9';  // ...and with it
        EXPECT_TRUE(is_valid_utf8(text)) << length << " " << at;
        text[at + 1] = 'x';
      }
      text[at] = 'x';
    }
  }
}

}  // namespace
}  // namespace bulleted::schema
