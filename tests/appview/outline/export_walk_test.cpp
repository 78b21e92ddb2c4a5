// The export walk reads pages, never the whole outline, and stops when asked.
#include <gtest/gtest.h>

#include <algorithm>

#include "appview/outline/from_index.hpp"
#include "tests/support/hostile_index.hpp"

namespace bulleted::appview {
namespace {

using outline::walk_outline;
using IndexAbuseTest = testing::HostileIndexTest;

TEST_F(IndexAbuseTest, TheExportWalkReadsPagesNotTheOutline) {
  build_chain(3'000);
  std::size_t visited = 0;
  std::size_t deepest = 0;
  auto walked = walk_outline(*store_, kDid, std::nullopt,
                             [&](const outline::OutlineNode&, std::size_t depth) {
                               ++visited;
                               deepest = std::max(deepest, depth);
                               return visited < 2'000;  // the client went away
                             });
  ASSERT_TRUE(walked.has_value());
  EXPECT_EQ(visited, 2'000u) << "stopped when asked";
  EXPECT_EQ(deepest, 1'999u);
}

}  // namespace
}  // namespace bulleted::appview
