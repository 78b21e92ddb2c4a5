// A node's view carries the published record's fields (DESIGN.md sections 6
// and 12): completedAt, layout and display as the record says them, over a
// real index file, in a single node's read and in a page's; a row an
// earlier build indexed (schema 13) reads on after the migration.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "appview/xrpc/views.hpp"
#include "schema/migrations.hpp"
#include "tests/support/index_fixture.hpp"
#include "tests/support/store_fixtures.hpp"
#include "tests/support/store_internals.hpp"

namespace bulleted::appview {
namespace {

using nlohmann::json;

class NodeViewTest : public testing::IndexTest {
 protected:
  const std::string kDid = "did:plc:alice";

  json view_of_node(const std::string& rkey) {
    auto row = store_->read().node(kDid, rkey);
    EXPECT_TRUE(row.has_value());
    if (!row) return nullptr;
    std::string out;
    JsonWriter writer(out);
    write_node_view(writer, *row);
    return json::parse(out);
  }
  // The same node as a page of its group shows it (rows without their record).
  json view_in_page(const std::string& rkey) {
    json found;
    schema::ChildrenQuery query;
    query.did = kDid;
    auto page = store_->read().children(query, [&](const schema::NodeRowView& row) {
      if (row.rkey != rkey) return;
      std::string out;
      JsonWriter writer(out);
      write_node_view(writer, row);
      found = json::parse(out);
    });
    EXPECT_TRUE(page.has_value());
    return found;
  }
};

TEST_F(NodeViewTest, ServesCompletedAtLayoutAndDisplayAsTheRecordSaysThem) {
  testing::NodeSpec spec{.did = kDid, .rkey = "todo"};
  schema::RecordOp todo = testing::upsert(spec);
  todo.record->completed = true;
  todo.record->completed_at = "2026-12-02T09:30:00.000Z";
  todo.record->layout = "todo";
  todo.record->display = "collapsed";
  spec.rkey = "later";
  spec.sort_key = "a1";
  schema::RecordOp later = testing::upsert(spec);
  later.record->layout = "kanbanCard";  // a value of a later version
  spec.rkey = "plain";
  spec.sort_key = "a2";
  schema::RecordOp plain = testing::upsert(spec);
  apply({todo, later, plain});
  for (const json& view : {view_of_node("todo"), view_in_page("todo")}) {
    EXPECT_EQ(view["completed"], true);
    EXPECT_EQ(view["completedAt"], "2026-12-02T09:30:00.000Z");
    EXPECT_EQ(view["layout"], "todo");
    EXPECT_EQ(view["display"], "collapsed");
  }
  EXPECT_EQ(view_in_page("later")["layout"], "kanbanCard");
  for (const json& view : {view_of_node("plain"), view_in_page("plain")}) {
    EXPECT_EQ(view["completed"], false);
    EXPECT_FALSE(view.contains("completedAt")) << "never null: absent";
    EXPECT_FALSE(view.contains("layout"));
    EXPECT_FALSE(view.contains("display"));
  }
  // The record the index keeps says them too, as published.
  auto row = store_->read().node(kDid, "todo");
  ASSERT_TRUE(row.has_value());
  const json record = json::parse(row->record_json);
  EXPECT_EQ(record["completedAt"], "2026-12-02T09:30:00.000Z");
  EXPECT_FALSE(record.contains("completed"));
}

// An index written before schema 14: its completed rows (an earlier build's
// `completed: true`) are completed since their createdAt; a write after the
// migration keeps the new fields.
TEST_F(NodeViewTest, AnIndexOfAnEarlierBuildReadsOnAfterTheMigration) {
  testing::NodeSpec spec{.did = kDid, .rkey = "done"};
  schema::RecordOp done = testing::upsert(spec);
  done.record->completed = true;
  apply({done});
  ASSERT_TRUE(testing::rewind_schema(*store_, 13).has_value());
  // As that build kept it: `completed` in the record, no column of the new.
  ASSERT_TRUE(testing::database_of(*store_)
                  .exec("UPDATE nodes SET record = '{\"$type\":\"app.bulleted.node\",\"completed\":"
                        "true,\"createdAt\":\"2026-11-30T12:00:00.000Z\",\"sortKey\":\"a0\","
                        "\"text\":\"text\"}'")
                  .has_value());
  store_.reset();
  std::vector<schema::MigrationProgress> steps;
  schema::StoreOptions options;
  options.on_migration = [&](const schema::MigrationProgress& p) { steps.push_back(p); };
  auto opened = schema::Store::open(dir_.file("index.db"), options);
  ASSERT_TRUE(opened.has_value()) << opened.error().message;
  store_ = std::move(*opened);
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps.back().version, schema::latest_schema_version());
  const json view = view_of_node("done");
  EXPECT_EQ(view["completed"], true);
  EXPECT_EQ(view["completedAt"], "2026-11-30T12:00:00.000Z");
  EXPECT_FALSE(view.contains("layout"));
  spec.rev = 2;
  schema::RecordOp again = testing::upsert(spec);
  again.kind = schema::OpKind::kUpdate;
  again.record->display = "collapsed";
  apply({again});
  EXPECT_EQ(view_of_node("done")["display"], "collapsed");
  EXPECT_EQ(view_of_node("done")["completed"], false);
}

}  // namespace
}  // namespace bulleted::appview
