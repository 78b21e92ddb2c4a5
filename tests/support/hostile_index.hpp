// A real index to attack: writes through the write path (create) and
// records written straight to the index around it (a chain of parents),
// for the tests of every room that must hold on hostile data.
#pragma once

#include <string>
#include <vector>

#include "appview/write/writer.hpp"
#include "ordering/tid.hpp"
#include "tests/support/index_fixture.hpp"
#include "tests/support/store_fixtures.hpp"

namespace bulleted::testing {

class HostileIndexTest : public IndexTest {
 protected:
  std::string create(const appview::NeighbourIntent& intent, const std::string& text) {
    appview::LocalSink sink(clock_);
    appview::Writer writer(locks_, clock_, sink);
    auto made =
        writer.create(*store_, kDid, intent, appview::NodeFields{text, std::nullopt, std::nullopt});
    EXPECT_TRUE(made.has_value()) << made.error().message;
    return made ? made->rkey : std::string();
  }
  std::vector<std::string> top_texts() {
    auto page = store_->read().children({.did = kDid, .limit = 1000});
    std::vector<std::string> out;
    for (const auto& row : page->nodes) out.push_back(row.text);
    return out;
  }
  // A chain of `depth` nodes, each the only child of the one before (rkeys
  // c0, c1, ...), written straight to the index.
  void build_chain(std::size_t depth) {
    std::vector<schema::RecordOp> ops;
    for (std::size_t i = 0; i < depth; ++i) {
      NodeSpec spec{.did = kDid, .rkey = "c" + std::to_string(i)};
      if (i > 0) spec.parent_rkey = "c" + std::to_string(i - 1);
      ops.push_back(upsert(spec));
    }
    apply(std::move(ops));
  }

  const std::string kDid = "did:plc:alice";
  appview::GroupLocks locks_;
  ordering::TidClock clock_;
};

}  // namespace bulleted::testing
