// Cycles that records written around the app view close are counted by
// `check`; a node under a missing parent is dangling, not a cycle.
#include <gtest/gtest.h>

#include "tests/support/hostile_index.hpp"

namespace bulleted::appview {
namespace {

using IndexAbuseTest = testing::HostileIndexTest;

TEST_F(IndexAbuseTest, CheckCountsNodesInCycles) {
  build_chain(50);
  auto clean = store_->integrity_report();
  ASSERT_TRUE(clean.has_value()) << clean.error().message;
  EXPECT_EQ(clean->in_cycles, 0);
  // Records written around the app view: c0 under c49 closes the circle; a
  // node under a missing parent is dangling, not a cycle.
  apply({testing::upsert({.did = kDid, .rkey = "c0", .parent_rkey = "c49", .rev = 2}),
         testing::upsert({.did = kDid, .rkey = "orphan", .parent_rkey = "missing"})});
  auto report = store_->integrity_report();
  ASSERT_TRUE(report.has_value()) << report.error().message;
  EXPECT_EQ(report->in_cycles, 50);
  EXPECT_EQ(report->dangling, 1);
}

}  // namespace
}  // namespace bulleted::appview
