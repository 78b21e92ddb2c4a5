// What the index keeps beside each record so that pages, windows and
// subtrees never read it (schema 8: the facets it serves and its length):
// written with the row, filled by the migration, verified by `check`.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "schema/node_record.hpp"
#include "schema/sqlite.hpp"
#include "schema/store.hpp"
#include "tests/support/store_fixtures.hpp"
#include "tests/support/store_internals.hpp"
#include "tests/support/temp_dir.hpp"

namespace bulleted::schema {
namespace {

using testing::upsert;

// Pages, windows and subtrees serve a row's kept facets and record length in
// place of its record: `check` reports any that are not what the record
// gives.
TEST(KeptRecordFields, CheckReportsThoseThatAreNotTheRecords) {
  testing::TempDir dir;
  auto opened = Store::open(dir.file("index.db"));
  ASSERT_TRUE(opened.has_value()) << opened.error().message;
  auto& store = *opened;
  ApplyBatch batch;
  batch.ops.push_back(upsert({.rkey = "rich", .sort_key = "a0", .text = "hello world"}));
  batch.ops.back().record->facets = nlohmann::json::array(
      {{{"index", {{"byteStart", 0}, {"byteEnd", 5}}},
        {"features", nlohmann::json::array({{{"$type", "app.bulleted.format#bold"}}})}}});
  batch.ops.push_back(upsert({.rkey = "quoted", .sort_key = "a1", .text = "say \"facets\""}));
  batch.ops.push_back(upsert({.rkey = "plain", .sort_key = "a2", .text = "plain"}));
  ASSERT_TRUE(store->apply(batch).has_value());
  auto wrong_after = [&](const char* sql) {
    EXPECT_TRUE(bulleted::testing::database_of(*store).exec(sql).has_value()) << sql;
    auto report = store->integrity_report();
    EXPECT_TRUE(report.has_value());
    return report ? report->wrong_record_fields : -1;
  };
  auto report = store->integrity_report();
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->wrong_record_fields, 0);
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(wrong_after("UPDATE nodes SET facets = NULL WHERE rkey = 'rich'"), 1);
  EXPECT_EQ(wrong_after("UPDATE nodes SET record_bytes = record_bytes + 1 WHERE rkey = 'plain'"),
            2);
  EXPECT_EQ(wrong_after("UPDATE nodes SET facets = '[]' WHERE rkey = 'quoted'"), 3);
  EXPECT_FALSE(store->integrity_report()->ok());
}

// Pages, windows and subtrees serve facets from the column kept beside the
// record; an index written before schema 8 gets that column (and the
// records' lengths) when it is opened, with progress, equal to what the
// writes keep.
TEST(ServedFacetsMigration, FillsTheColumnsOfAnExistingIndexAsTheWritesDo) {
  testing::TempDir dir;
  const std::string path = dir.file("index.db");
  const nlohmann::json bold = nlohmann::json::array(
      {{{"index", {{"byteStart", 0}, {"byteEnd", 5}}},
        {"features", nlohmann::json::array({{{"$type", "app.bulleted.format#bold"}}})}}});
  std::string written;
  {
    auto store = Store::open(path);
    ASSERT_TRUE(store.has_value()) << store.error().message;
    ApplyBatch batch;
    batch.ops.push_back(upsert({.rkey = "rich", .sort_key = "a0", .text = "hello world"}));
    batch.ops.back().record->facets = bold;
    // A text that names facets (escaped in the record) but no facets.
    batch.ops.push_back(upsert({.rkey = "quoted", .sort_key = "a1", .text = "say \"facets\""}));
    batch.ops.push_back(upsert({.rkey = "plain", .sort_key = "a2", .text = "plain"}));
    ASSERT_TRUE((*store)->apply(batch).has_value());
    // A row indexed before facets were checked on the way in: its second
    // facet runs past the text and is not served.
    ASSERT_TRUE(
        bulleted::testing::database_of(**store)
            .exec("UPDATE nodes SET record = '{\"facets\":[{\"index\":{\"byteStart\":0,"
                  "\"byteEnd\":5},\"features\":[{\"$type\":\"app.bulleted.format#italic\"}]},"
                  "{\"index\":{\"byteStart\":0,\"byteEnd\":99},\"features\":[{\"$type\":"
                  "\"app.bulleted.format#bold\"}]}],\"text\":\"plain\"}',"
                  " facets = NULL WHERE rkey = 'plain'")
            .has_value());
    auto page = (*store)->read().children({.did = "did:plc:alice"});
    ASSERT_TRUE(page.has_value());
    ASSERT_EQ(page->nodes.size(), 3u);
    ASSERT_TRUE(page->nodes[0].facets.has_value());
    EXPECT_EQ(nlohmann::json::parse(*page->nodes[0].facets), bold);
    EXPECT_FALSE(page->nodes[1].facets.has_value());
    EXPECT_TRUE(page->nodes[0].record_json.empty()) << "a page never reads the record";
    // The written row's record length is the record's.
    auto node = (*store)->read().node("did:plc:alice", "rich");
    ASSERT_TRUE(node.has_value());
    EXPECT_EQ(node->record_bytes, node->record_json.size());
    // Back to schema 7.
    ASSERT_TRUE(bulleted::testing::rewind_schema(**store, 7).has_value());
  }
  std::vector<MigrationProgress> steps;
  auto store = Store::open(
      path, {.on_migration = [&](const MigrationProgress& step) { steps.push_back(step); }});
  ASSERT_TRUE(store.has_value()) << store.error().message;
  ASSERT_GE(steps.size(), 2u);
  EXPECT_EQ(steps.front().version, 8);
  // The last report of schema 8's step (later steps report after it).
  const MigrationProgress step8 = *std::find_if(
      steps.rbegin(), steps.rend(), [](const MigrationProgress& s) { return s.version == 8; });
  EXPECT_TRUE(step8.finished);
  EXPECT_EQ(step8.total, 2) << "the records that carry facets are read, no others";
  EXPECT_EQ(step8.done, 2);
  auto page = (*store)->read().children({.did = "did:plc:alice"});
  ASSERT_TRUE(page.has_value());
  ASSERT_EQ(page->nodes.size(), 3u);
  ASSERT_TRUE(page->nodes[0].facets.has_value());
  EXPECT_EQ(nlohmann::json::parse(*page->nodes[0].facets), bold);
  EXPECT_FALSE(page->nodes[1].facets.has_value());
  ASSERT_TRUE(page->nodes[2].facets.has_value());
  const auto kept = nlohmann::json::parse(*page->nodes[2].facets);
  ASSERT_EQ(kept.size(), 1u) << *page->nodes[2].facets;
  EXPECT_EQ(kept[0]["index"]["byteEnd"], 5);
  for (const auto& row : page->nodes) {
    auto node = (*store)->read().node("did:plc:alice", row.rkey);
    ASSERT_TRUE(node.has_value());
    EXPECT_EQ(row.record_bytes, node->record_json.size()) << row.rkey;
    EXPECT_EQ(row.facets, node->facets) << row.rkey;
    EXPECT_EQ(row.facets, served_facets(node->text, node->record_json)) << row.rkey;
  }
  auto report = (*store)->integrity_report();
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->wrong_record_fields, 0);
  EXPECT_TRUE(report->ok());
}

}  // namespace
}  // namespace bulleted::schema
