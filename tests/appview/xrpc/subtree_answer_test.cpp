// getSubtree's answer written as the rows are read (SubtreeAnswer), against
// the view of the tree of rows the same read makes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "appview/xrpc/views.hpp"
#include "tests/support/index_fixture.hpp"
#include "tests/support/store_fixtures.hpp"

namespace bulleted::appview {
namespace {

using nlohmann::json;

class SubtreeAnswerTest : public testing::IndexTest {
 protected:
  const std::string kDid = "did:plc:alice";
};

// getSubtree writes each node's view as it is read (SubtreeAnswer); the
// text must be the tree's view, whatever cut it short.
TEST_F(SubtreeAnswerTest, IsTheViewOfTheTreeItRead) {
  std::vector<schema::RecordOp> ops;
  auto node = [&](const std::string& rkey, std::optional<std::string> parent,
                  const std::string& text = "text") {
    testing::NodeSpec spec{.did = kDid, .rkey = rkey, .parent_rkey = std::move(parent)};
    spec.text = text;
    ops.push_back(testing::upsert(spec));
    return &ops.back();
  };
  node("root", std::nullopt, "a \"quoted\" top\n");
  node("second", std::nullopt);
  for (int i = 0; i < 4; ++i) {
    const std::string child = "c" + std::to_string(i);
    node(child, "root", "child " + std::to_string(i));
    for (int k = 0; k < 3; ++k) node(child + "g" + std::to_string(k), child);
  }
  // Facets and a note reach the view; a node under the grandchild.
  schema::RecordOp* rich = node("c0h", "c0", "bold text");
  rich->record->note = "a note";
  rich->record->completed = true;
  rich->record->facets =
      json::array({{{"index", {{"byteStart", 0}, {"byteEnd", 4}}},
                    {"features", json::array({{{"$type", "app.bulleted.format#bold"}}})}}});
  node("deep", "c0h");
  // More than a page of children for one node, and a cycle: x -> y -> x.
  for (int i = 0; i < 1005; ++i) node("w" + std::to_string(10000 + i), "second");
  node("x", "y");
  node("y", "x");
  node("stray", "missing");
  apply(std::move(ops));
  const std::vector<schema::SubtreeQuery> queries{
      {.did = kDid},
      {.did = kDid, .depth = 1},
      {.did = kDid, .depth = 0},
      {.did = kDid, .root_rkey = "root"},
      {.did = kDid, .root_rkey = "root", .depth = 2},
      {.did = kDid, .root_rkey = "root", .budget_bytes = 2000},
      {.did = kDid, .root_rkey = "second"},
      {.did = kDid, .root_rkey = "second", .budget_bytes = 1 << 20},
      {.did = kDid, .root_rkey = "x", .depth = 64},
      {.did = kDid, .root_rkey = "stray"},
      {.did = "did:plc:nobody"},
  };
  for (const auto& query : queries) {
    const std::string what = (query.root_rkey ? *query.root_rkey : "top") + " depth " +
                             std::to_string(query.depth) + " budget " +
                             std::to_string(query.budget_bytes);
    auto tree = store_->read().subtree(query);
    ASSERT_TRUE(tree.has_value()) << what;
    std::string expected;
    JsonWriter writer(expected);
    write_subtree_view(writer, *tree);
    SubtreeAnswer answer;
    ASSERT_TRUE(store_->read().subtree(query, answer).has_value()) << what;
    EXPECT_EQ(answer.text(), expected) << what;
    EXPECT_TRUE(json::accept(answer.text())) << what;
    // Handed over in pieces as it is written: the same text.
    for (const std::size_t piece : {std::size_t{1}, std::size_t{700}}) {
      std::vector<std::string> pieces;
      SubtreeAnswer in_pieces([&](std::string_view bytes) { pieces.emplace_back(bytes); }, piece);
      ASSERT_TRUE(store_->read().subtree(query, in_pieces).has_value()) << what;
      in_pieces.finish();
      std::string streamed;
      for (std::size_t k = 0; k < pieces.size(); ++k) {
        if (k + 1 < pieces.size()) {
          EXPECT_GE(pieces[k].size(), piece) << what;
        }
        streamed += pieces[k];
      }
      EXPECT_EQ(streamed, expected) << what << ", pieces of " << piece;
      EXPECT_TRUE(in_pieces.text().empty()) << what;
    }
  }
  // What the cases above depend on.
  const json second = json::parse([&] {
    SubtreeAnswer answer;
    (void)store_->read().subtree({.did = kDid, .root_rkey = "second", .budget_bytes = 1 << 20},
                                 answer);
    return answer.text();
  }());
  EXPECT_EQ(second["children"].size(), 1000u);
  EXPECT_TRUE(second["more"].get<bool>());
  EXPECT_EQ(second["node"]["childCount"], 1005);
  const json cycle = json::parse([&] {
    SubtreeAnswer answer;
    (void)store_->read().subtree({.did = kDid, .root_rkey = "x", .depth = 64}, answer);
    return answer.text();
  }());
  ASSERT_EQ(cycle["children"].size(), 1u);
  EXPECT_EQ(cycle["children"][0]["node"]["rkey"], "y");
  EXPECT_TRUE(cycle["children"][0]["children"].empty()) << "x is listed once";
  const json whole = json::parse([&] {
    SubtreeAnswer answer;
    (void)store_->read().subtree({.did = kDid, .root_rkey = "root"}, answer);
    return answer.text();
  }());
  const json& c0h = whole["children"][0]["children"][3];
  EXPECT_EQ(c0h["node"]["note"], "a note");
  EXPECT_EQ(c0h["node"]["facets"].size(), 1u);
  EXPECT_EQ(c0h["node"]["parent"], "c0");
  EXPECT_EQ(c0h["children"][0]["node"]["rkey"], "deep");
  EXPECT_EQ(whole["node"]["text"], "a \"quoted\" top\n");
}

// The answer goes out while the last level is still being read: the levels
// above it and every group read so far, not the whole tree at the end.
TEST_F(SubtreeAnswerTest, IsHandedOverWhileTheLastLevelIsRead) {
  std::vector<schema::RecordOp> ops;
  auto node = [&](const std::string& rkey, std::optional<std::string> parent) {
    ops.push_back(testing::upsert({.did = kDid, .rkey = rkey, .parent_rkey = std::move(parent)}));
  };
  node("root", std::nullopt);
  for (int i = 0; i < 10; ++i) {
    const std::string child = "c" + std::to_string(i);
    node(child, "root");
    for (int k = 0; k < 20; ++k) node(child + "g" + std::to_string(k), child);
  }
  apply(std::move(ops));
  // Counts the nodes read as the answer is handed over.
  class Counting final : public schema::SubtreeSink {
   public:
    explicit Counting(SubtreeAnswer& answer) : answer_(answer) {}
    void top(const schema::NodeRowView* root) override { answer_.top(root); }
    void child(std::size_t parent, const schema::NodeRowView& node) override {
      ++read;
      answer_.child(parent, node);
    }
    void more(std::size_t id) override { answer_.more(id); }
    void settled(std::size_t id) override { answer_.settled(id); }
    std::size_t read = 0;

   private:
    SubtreeAnswer& answer_;
  };
  std::vector<std::size_t> read_at_piece;
  std::string streamed;
  Counting* counting = nullptr;
  SubtreeAnswer answer(
      [&](std::string_view bytes) {
        read_at_piece.push_back(counting->read);
        streamed += bytes;
      },
      2000);
  Counting counted(answer);
  counting = &counted;
  ASSERT_TRUE(store_->read().subtree({.did = kDid, .root_rkey = "root"}, counted).has_value());
  answer.finish();
  EXPECT_EQ(counted.read, 210u);
  ASSERT_GE(read_at_piece.size(), 5u);
  // The first piece left after the first children and the first group of
  // grandchildren: 10 + 20 read of 210.
  EXPECT_LE(read_at_piece.front(), 50u);
  const json tree = json::parse(streamed);
  ASSERT_EQ(tree["children"].size(), 10u);
  EXPECT_EQ(tree["children"][9]["children"].size(), 20u);
}

}  // namespace
}  // namespace bulleted::appview
