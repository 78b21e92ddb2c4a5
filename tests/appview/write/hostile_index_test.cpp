// The write path on a hostile index: an index past the end means last, and a
// move is refused unless the walk up proves there is no cycle.
#include "tests/support/hostile_index.hpp"

#include <gtest/gtest.h>

namespace bulleted::appview {
namespace {

using IndexAbuseTest = testing::HostileIndexTest;

TEST_F(IndexAbuseTest, AnIndexPastTheEndMeansLast) {
  create({}, "one");
  create({}, "two");
  NeighbourIntent past;
  past.position = *PositionIntent::parse("5");
  create(past, "past the end");
  NeighbourIntent huge;
  huge.position = *PositionIntent::parse("9223372036854775807");
  create(huge, "largest index");
  NeighbourIntent larger;
  larger.position = *PositionIntent::parse("99999999999999999999999");
  create(larger, "beyond any integer");
  NeighbourIntent exact;
  exact.position = *PositionIntent::parse("1");
  create(exact, "second");
  EXPECT_EQ(top_texts(), (std::vector<std::string>{"one", "second", "two", "past the end",
                                                   "largest index", "beyond any integer"}));
}

TEST_F(IndexAbuseTest, AMoveIsRefusedUnlessTheWalkProvesThereIsNoCycle) {
  const std::size_t depth = schema::Reader::kMaxAncestors + 10;
  build_chain(depth);
  LocalSink sink(clock_);
  Writer writer(locks_, clock_, sink);
  NeighbourIntent under_bottom;
  under_bottom.parent_rkey = "c" + std::to_string(depth - 1);
  auto moved = writer.move(*store_, kDid, "c0", under_bottom);
  ASSERT_FALSE(moved.has_value()) << "the top of the chain moved under its bottom";
  EXPECT_EQ(moved.error().code, ErrorCode::kWouldCycle);
  EXPECT_EQ(store_->read().node(kDid, "c0")->group, schema::root_group(kDid)) << "nothing changed";
  // Moving a node under a shallow part of the chain is still fine.
  create({}, "free");
  auto free = store_->read().children({.did = kDid, .limit = 10})->nodes;
  std::string free_rkey;
  for (const auto& row : free) {
    if (row.text == "free") free_rkey = row.rkey;
  }
  NeighbourIntent under_c5;
  under_c5.parent_rkey = "c5";
  EXPECT_TRUE(writer.move(*store_, kDid, free_rkey, under_c5).has_value());
}

}  // namespace
}  // namespace bulleted::appview
