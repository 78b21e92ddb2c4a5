// A node record's block written straight from its fields
// (encode_record_block) is the block the data model gives (its JSON form ->
// DAG value -> canonical DAG-CBOR), and reads back as the same record: for
// every record in the captured fixtures and for generated ones with notes,
// parents, keys, facets, completion times, layouts, displays and text that
// is not ASCII.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "firehose/dag_cbor.hpp"
#include "firehose/records.hpp"
#include "schema/node_record.hpp"
#include "tests/support/files.hpp"

namespace bulleted::firehose {
namespace {

// The block by way of the data model: what the writer computed CIDs from.
std::string through_the_data_model(const schema::NodeRecord& record) {
  auto value = from_json(schema::to_json(record));
  EXPECT_TRUE(value.has_value());
  return value ? encode_dag_cbor(*value) : std::string();
}

void expect_same_block(const schema::NodeRecord& record, const std::string& where) {
  auto direct = encode_record_block(record);
  ASSERT_TRUE(direct.has_value()) << where << ": " << direct.error().message;
  EXPECT_EQ(*direct, through_the_data_model(record)) << where;
  auto back = parse_record_block(*direct);
  ASSERT_TRUE(back.has_value()) << where << ": " << back.error();
  EXPECT_EQ(schema::to_json(*back), schema::to_json(record)) << where;
}

// Every node record of the fixtures: the captured record blocks and the
// records of every captured commit.
std::vector<std::pair<std::string, schema::NodeRecord>> fixture_records() {
  std::vector<std::pair<std::string, schema::NodeRecord>> out;
  const auto blocks = testing::fixture_path("firehose/record-blocks");
  for (const auto& entry : std::filesystem::directory_iterator(blocks)) {
    if (entry.path().extension() != ".cbor") continue;
    if (auto record = parse_record_block(testing::read_file(entry.path().string()))) {
      out.emplace_back(entry.path().filename().string(), std::move(*record));
    }
  }
  for (const auto& capture :
       std::filesystem::directory_iterator(testing::fixture_path("firehose"))) {
    if (!std::filesystem::exists(capture.path() / "frames")) continue;
    const std::string name = "firehose/" + capture.path().filename().string();
    for (const auto& file : testing::frame_files(name)) {
      auto event = decode_frame(testing::read_file(file));
      auto* commit = event ? std::get_if<CommitEvent>(&*event) : nullptr;
      if (commit == nullptr) continue;
      auto records = commit_records(*commit);
      if (!records) continue;
      for (auto& op : records->ops) {
        if (op.record) out.emplace_back(file + " " + op.rkey, std::move(*op.record));
      }
    }
  }
  return out;
}

TEST(RecordBlock, EveryFixtureRecordIsWrittenAsTheDataModelWritesIt) {
  const auto records = fixture_records();
  ASSERT_GE(records.size(), 20u) << "the fixtures hold records";
  for (const auto& [where, record] : records) expect_same_block(record, where);
}

TEST(RecordBlock, GeneratedRecordsWithFacetsAndTextBeyondAsciiToo) {
  std::mt19937 random(20261204);
  const std::vector<std::string> pieces = {"a", "Zürich", "日本語", "🙂", "e\u0301",
                                           " ", "\"",     "\\",     "\n",   std::string(30, 'x')};
  const std::vector<std::string> features = {"bold", "italic", "code", "strikethrough"};
  int with_facets = 0;
  for (int i = 0; i < 500; ++i) {
    schema::NodeRecord record;
    for (int n = static_cast<int>(random() % 12); n >= 0; --n) {
      record.text += pieces[random() % pieces.size()];
    }
    if (random() % 3 == 0) record.note = pieces[random() % pieces.size()] + "note";
    if (random() % 2 == 0) {
      record.parent = "at://did:plc:alice/app.bulleted.node/3k" + std::to_string(random() % 1000);
    }
    if (random() % 4 != 0) {
      record.sort_key = random() % 5 == 0 ? "not a key!" : "a" + std::to_string(random() % 90);
    }
    record.completed = random() % 3 == 0;
    if (record.completed && random() % 2 == 0) {
      record.completed_at = "2026-12-05T11:00:0" + std::to_string(random() % 10) + ".000Z";
    }
    const std::vector<std::string> layouts = {"todo", "h1", "codeBlock", "later-ünknown"};
    if (random() % 3 == 0) record.layout = layouts[random() % layouts.size()];
    if (random() % 3 == 0) record.display = random() % 2 == 0 ? "collapsed" : "expanded";
    record.created_at = "2026-12-04T10:00:0" + std::to_string(random() % 10) + ".000Z";
    if (random() % 2 == 0 && !record.text.empty()) {
      const auto end = static_cast<int>(1 + random() % record.text.size());
      nlohmann::json facets = nlohmann::json::array();
      facets.push_back({{"index", {{"byteStart", 0}, {"byteEnd", end}}},
                        {"features",
                         {{{"$type", "app.bulleted.node#" + features[random() % features.size()]}},
                          {{"$type", "app.bulleted.node#link"},
                           {"uri", "https://example.com/" + std::to_string(i)}},
                          {{"$type", "app.bsky.richtext.facet#tag"}, {"tag", "work"}}}}});
      record.facets = schema::sanitize_facets(record.text, facets);
    }
    with_facets += record.facets.is_array() ? 1 : 0;
    expect_same_block(record, "generated record " + std::to_string(i));
  }
  EXPECT_GE(with_facets, 50) << "facets kept by the check are among them";
}

TEST(RecordBlock, ATextPastThePublishedLimitsIsWrittenInTwoPartsAndReadBackWhole) {
  // Past the graphemes (3,000 of "é" as e + combining acute: 9,000 bytes)
  // and past the bytes (12,000 of "x"), each with a facet on either side
  // of the cut and one across it.
  for (const std::string& unit : {std::string("e\xCC\x81"), std::string("x")}) {
    schema::NodeRecord record;
    for (int i = 0; i < (unit == "x" ? 12'000 : 3'000); ++i) record.text += unit;
    record.created_at = "2026-12-04T10:00:00.000Z";
    auto facet = [&](std::size_t from, std::size_t to) {
      return nlohmann::json{{"index", {{"byteStart", from}, {"byteEnd", to}}},
                            {"features", {{{"$type", "app.bulleted.format#bold"}}}}};
    };
    const std::size_t size = record.text.size();
    record.facets = schema::sanitize_facets(
        record.text,
        nlohmann::json::array({facet(0, 3), facet(5'997, 6'003), facet(size - 3, size)}));
    ASSERT_EQ(record.facets.size(), 3u);
    const auto json = schema::to_json(record);
    const std::string head = json["text"];
    EXPECT_LE(head.size(), schema::kWrittenTextBytes);
    EXPECT_LE(schema::count_graphemes(head), schema::kWrittenTextGraphemes);
    EXPECT_FALSE(schema::written_field_error("text", head).has_value());
    EXPECT_EQ(head + json["textRest"].get<std::string>(), record.text) << "cut, nothing lost";
    EXPECT_EQ(head.size() % unit.size(), 0u) << "at a grapheme boundary";
    EXPECT_EQ(json["facets"].size() + json["textRestFacets"].size(), 3u);
    expect_same_block(record, "a text of " + std::to_string(size) + " bytes");
    auto back = parse_record_block(*encode_record_block(record));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->text, record.text);
    EXPECT_EQ(back->facets.size(), 3u);
    auto from_index =
        schema::parse_node_record(nlohmann::json::parse(schema::to_json_text(record)));
    ASSERT_TRUE(from_index.has_value());
    EXPECT_EQ(from_index->text, record.text);
    EXPECT_EQ(schema::served_facets(record),
              schema::served_facets(record.text, schema::to_json_text(record)));
  }
}

TEST(RecordBlock, AnEmptyRecordKeepsItsThreeRequiredFields) {
  schema::NodeRecord record;
  record.created_at = "2026-12-04T10:00:00.000Z";
  auto block = encode_record_block(record);
  ASSERT_TRUE(block.has_value());
  auto value = decode_dag_cbor(*block);
  ASSERT_TRUE(value.has_value());
  ASSERT_NE(value->as_map(), nullptr);
  EXPECT_EQ(value->as_map()->size(), 3u) << "text, $type and createdAt";
  EXPECT_EQ(*value->find("text")->as_text(), "");
}

}  // namespace
}  // namespace bulleted::firehose
