// The index's reads (schema/reader.hpp) on a real database file: the
// children's query plans, pages of a large group, cursors, windows,
// positions, subtrees within their budget, and hostile data.
#include "schema/reader.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "ordering/order_key.hpp"
#include "schema/sqlite.hpp"
#include "schema/store.hpp"
#include "tests/support/index_fixture.hpp"
#include "tests/support/store_fixtures.hpp"
#include "tests/support/store_internals.hpp"
#include "tests/support/temp_dir.hpp"

namespace bulleted::schema {
namespace {

using testing::NodeSpec;
using testing::upsert;

class ReaderTest : public testing::IndexTest {
 protected:
  std::vector<std::string> rkeys(const std::vector<NodeRow>& rows) {
    std::vector<std::string> out;
    for (const auto& row : rows) out.push_back(row.rkey);
    return out;
  }
};

TEST_F(ReaderTest, ChildrenQueryPlansUseTheCoveringIndexWithoutSorting) {
  for (const char* kind :
       {"children_first", "children_after", "children_first_reverse", "children_before"}) {
    auto plan = store_->read().explain(kind);
    ASSERT_TRUE(plan.has_value()) << plan.error().message;
    EXPECT_NE(plan->find("nodes_children"), std::string::npos) << kind << ":\n" << *plan;
    EXPECT_EQ(plan->find("TEMP B-TREE"), std::string::npos) << kind << ":\n" << *plan;
    EXPECT_EQ(plan->find("SCAN n"), std::string::npos) << kind << ":\n" << *plan;
  }
}

TEST_F(ReaderTest, PagesAThreeThousandChildGroupInOrder) {
  auto jitter = ordering::Mulberry32::from_seed(3);
  auto keys = *ordering::n_between(std::nullopt, std::nullopt, 2900, jitter);
  std::vector<RecordOp> ops{upsert({.rkey = "parent"})};
  std::vector<std::pair<std::string, std::string>> expected;  // (effective key, rkey)
  std::mt19937 shuffle(7);
  std::vector<std::size_t> order(3000);
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), shuffle);
  for (std::size_t i : order) {
    NodeSpec spec{.rkey = "c" + std::to_string(10000 + i), .parent_rkey = "parent"};
    // 100 children with malformed or missing keys, and some duplicate keys.
    if (i >= 2900) {
      spec.sort_key = i % 2 ? std::optional<std::string>("a00") : std::nullopt;
    } else {
      spec.sort_key = keys[i % 10 == 0 && i > 0 ? i - 1 : i];
    }
    ops.push_back(upsert(spec));
    expected.emplace_back(i >= 2900 ? "~" : *spec.sort_key, spec.rkey);
  }
  apply(std::move(ops));
  std::sort(expected.begin(), expected.end());
  for (bool reverse : {false, true}) {
    std::vector<std::string> seen;
    std::optional<std::string> cursor;
    int pages = 0;
    do {
      auto page = store_->read().children({.did = "did:plc:alice",
                                           .parent_rkey = "parent",
                                           .limit = 100,
                                           .cursor = cursor,
                                           .reverse = reverse});
      ASSERT_TRUE(page.has_value()) << page.error().message;
      ASSERT_LE(page->nodes.size(), 100u);
      for (const auto& row : page->nodes) seen.push_back(row.rkey);
      cursor = page->cursor;
      ++pages;
    } while (cursor);
    EXPECT_EQ(pages, 30);
    std::vector<std::string> want;
    for (const auto& [key, rkey] : expected) want.push_back(rkey);
    if (reverse) std::reverse(want.begin(), want.end());
    EXPECT_EQ(seen, want) << (reverse ? "reverse" : "forward");
  }
  auto last = store_->read().node("did:plc:alice", "c12901");
  ASSERT_TRUE(last.has_value());
  EXPECT_FALSE(last->sort_key_valid);
  EXPECT_EQ(last->sort_key_raw, "a00");
  EXPECT_EQ(store_->read().node("did:plc:alice", "parent")->child_count, 3000);
}

TEST_F(ReaderTest, MalformedCursorIsAnInvalidRequest) {
  auto page = store_->read().children({.did = "did:plc:alice", .cursor = "%%%"});
  ASSERT_FALSE(page.has_value());
  EXPECT_EQ(page.error().code, ErrorCode::kInvalidRequest);
  EXPECT_EQ(store_->read().children({.did = "did:plc:alice", .limit = 0}).error().code,
            ErrorCode::kInvalidRequest);
  EXPECT_EQ(store_->read().changes("did:plc:alice", "abc", 10).error().code,
            ErrorCode::kInvalidRequest);
}

TEST_F(ReaderTest, WindowAndPosition) {
  std::vector<RecordOp> ops;
  auto jitter = ordering::Mulberry32::from_seed(1);
  auto keys = *ordering::n_between(std::nullopt, std::nullopt, 10, jitter);
  for (int i = 0; i < 10; ++i) {
    ops.push_back(upsert({.rkey = "n" + std::to_string(i), .sort_key = keys[i]}));
  }
  apply(std::move(ops));
  auto window = store_->read().window("did:plc:alice", "n5", 2, 3);
  ASSERT_TRUE(window.has_value());
  EXPECT_EQ(rkeys(window->nodes), (std::vector<std::string>{"n3", "n4", "n5", "n6", "n7", "n8"}));
  EXPECT_TRUE(window->has_before);
  EXPECT_TRUE(window->has_after);
  auto edge = store_->read().window("did:plc:alice", "n1", 5, 0);
  EXPECT_EQ(rkeys(edge->nodes), (std::vector<std::string>{"n0", "n1"}));
  EXPECT_FALSE(edge->has_before);
  EXPECT_TRUE(edge->has_after);
  auto position = store_->read().position("did:plc:alice", "n7");
  ASSERT_TRUE(position.has_value());
  EXPECT_EQ(position->index, 7);
  EXPECT_EQ(position->sibling_count, 10);
  EXPECT_EQ(store_->read().position("did:plc:alice", "nope").error().code, ErrorCode::kNotFound);
}

TEST_F(ReaderTest, SubtreeIsBreadthFirstWithinTheBudget) {
  // root -> 5 children -> 5 grandchildren each.
  std::vector<RecordOp> ops{upsert({.rkey = "root"})};
  for (int i = 0; i < 5; ++i) {
    const std::string child = "c" + std::to_string(i);
    ops.push_back(
        upsert({.rkey = child, .parent_rkey = "root", .sort_key = "a" + std::to_string(i)}));
    for (int k = 0; k < 5; ++k) {
      ops.push_back(upsert({.rkey = child + "g" + std::to_string(k),
                            .parent_rkey = child,
                            .sort_key = "a" + std::to_string(k),
                            .text = std::string(1000, 'x')}));
    }
  }
  apply(std::move(ops));
  auto full = store_->read().subtree({.did = "did:plc:alice", .root_rkey = "root"});
  ASSERT_TRUE(full.has_value());
  ASSERT_EQ(full->children.size(), 5u);
  EXPECT_FALSE(full->more);
  for (const auto& child : full->children) {
    EXPECT_EQ(child.children.size(), 5u);
    EXPECT_FALSE(child.more);
  }
  auto shallow = store_->read().subtree({.did = "did:plc:alice", .root_rkey = "root", .depth = 1});
  ASSERT_EQ(shallow->children.size(), 5u);
  for (const auto& child : shallow->children) {
    EXPECT_TRUE(child.children.empty());
    EXPECT_TRUE(child.more);
  }
  // A budget for the children and about two grandchildren.
  auto small =
      store_->read().subtree({.did = "did:plc:alice", .root_rkey = "root", .budget_bytes = 4500});
  ASSERT_EQ(small->children.size(), 5u);
  std::size_t grandchildren = 0;
  bool any_more = false;
  for (const auto& child : small->children) {
    grandchildren += child.children.size();
    any_more = any_more || child.more;
  }
  EXPECT_LT(grandchildren, 25u);
  EXPECT_TRUE(any_more);
  // The whole repo from the top level.
  auto top = store_->read().subtree({.did = "did:plc:alice"});
  EXPECT_FALSE(top->node.has_value());
  ASSERT_EQ(top->children.size(), 1u);
  EXPECT_EQ(top->children[0].node->rkey, "root");
}

TEST_F(ReaderTest, HostileDataNeverHangsOrLeaks) {
  // A 3-cycle, a dangling parent, a child that arrived before its parent, a
  // parent in another repo, and an over-long sortKey.
  apply({upsert({.rkey = "x", .parent_rkey = "z"}), upsert({.rkey = "y", .parent_rkey = "x"}),
         upsert({.rkey = "z", .parent_rkey = "y"}),
         upsert({.rkey = "orphan", .parent_rkey = "never-arrives"}),
         upsert({.rkey = "early", .parent_rkey = "late"}),
         upsert({.rkey = "intruder", .parent_uri = testing::node_uri("did:plc:bob", "bobroot")}),
         upsert({.rkey = "longkey", .sort_key = std::string(600, 'a')}),
         upsert({.did = "did:plc:bob", .rkey = "bobroot"}),
         upsert({.did = "did:plc:bob", .rkey = "bobchild", .parent_rkey = "bobroot"})});
  const std::string bob_before = [&] {
    auto tree = store_->read().subtree({.did = "did:plc:bob"});
    std::string s;
    for (const auto& c : tree->children) {
      s += c.node->rkey + ":";
      for (const auto& g : c.children) s += g.node->rkey + ",";
    }
    return s;
  }();
  EXPECT_EQ(bob_before, "bobroot:bobchild,");
  // Ancestors on a cycle end.
  auto chain = store_->read().ancestors("did:plc:alice", "x");
  ASSERT_TRUE(chain.has_value());
  EXPECT_EQ(rkeys(*chain), (std::vector<std::string>{"y", "z"}));
  // The subtree of a cycle member lists each node once.
  auto tree = store_->read().subtree({.did = "did:plc:alice", .root_rkey = "x", .depth = 64});
  ASSERT_TRUE(tree.has_value());
  ASSERT_EQ(tree->children.size(), 1u);
  EXPECT_EQ(tree->children[0].node->rkey, "y");
  ASSERT_EQ(tree->children[0].children.size(), 1u);
  EXPECT_EQ(tree->children[0].children[0].node->rkey, "z");
  EXPECT_TRUE(tree->children[0].children[0].children.empty());
  // The intruder is unattached in its own repo, not under bob's node.
  auto intruder = store_->read().node("did:plc:alice", "intruder");
  EXPECT_TRUE(intruder->unattached);
  EXPECT_FALSE(intruder->parent_rkey.has_value());
  auto bob_children = store_->read().children({.did = "did:plc:bob", .parent_rkey = "bobroot"});
  EXPECT_EQ(rkeys(bob_children->nodes), (std::vector<std::string>{"bobchild"}));
  // The early child shows up once its parent arrives.
  apply({upsert({.rkey = "late", .rev = 2})});
  auto late_children = store_->read().children({.did = "did:plc:alice", .parent_rkey = "late"});
  EXPECT_EQ(rkeys(late_children->nodes), (std::vector<std::string>{"early"}));
  // The over-long key sorts last among the top level.
  auto top = store_->read().children({.did = "did:plc:alice"});
  ASSERT_FALSE(top->nodes.empty());
  EXPECT_EQ(top->nodes.back().rkey, "longkey");
  EXPECT_FALSE(top->nodes.back().sort_key_valid);
  EXPECT_EQ(top->nodes.back().sort_key_raw->size(), 600u);
  // Dangling parent: no ancestors, and the orphan is still readable.
  EXPECT_TRUE(store_->read().ancestors("did:plc:alice", "orphan")->empty());
  // The integrity report counts what is odd without calling it corruption.
  auto report = store_->integrity_report();
  ASSERT_TRUE(report.has_value()) << report.error().message;
  EXPECT_TRUE(report->ok()) << report->sqlite_check;
  EXPECT_EQ(report->unattached, 1);      // the intruder
  EXPECT_EQ(report->malformed_keys, 1);  // the 600-byte key
  EXPECT_EQ(report->dangling, 1);        // the orphan
  EXPECT_EQ(report->in_cycles, 3);       // x, y, z (`check` exits 1 for them)
  EXPECT_EQ(report->nodes, 10);
}

}  // namespace
}  // namespace bulleted::schema
