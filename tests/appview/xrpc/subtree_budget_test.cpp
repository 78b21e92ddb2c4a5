// A subtree answer stays within its budget, as written.
#include <gtest/gtest.h>

#include "appview/xrpc/views.hpp"
#include "tests/support/hostile_index.hpp"

namespace bulleted::appview {
namespace {

using IndexAbuseTest = testing::HostileIndexTest;

TEST_F(IndexAbuseTest, ASubtreeAnswerStaysWithinItsBudget) {
  std::vector<schema::RecordOp> ops;
  for (int i = 0; i < 200; ++i) {
    testing::NodeSpec spec{.did = kDid, .rkey = "n" + std::to_string(1000 + i)};
    spec.text = std::string(3000, 'x');
    ops.push_back(testing::upsert(spec));
  }
  apply(std::move(ops));
  for (std::size_t budget : {std::size_t{4096}, std::size_t{65536}, std::size_t{300'000}}) {
    auto tree = store_->read().subtree({.did = kDid, .depth = 4, .budget_bytes = budget});
    ASSERT_TRUE(tree.has_value());
    const std::string sent = subtree_view(*tree).dump();
    EXPECT_LE(sent.size(), budget) << "budget " << budget;
    EXPECT_GT(sent.size(), budget / 2) << "budget " << budget << " mostly used";
  }
}

}  // namespace
}  // namespace bulleted::appview
