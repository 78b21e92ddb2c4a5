// An import drops the invalid facets of its nodes and lists them in the job's
// errors; the text stays.
#include <gtest/gtest.h>

#include "appview/imports/import_jobs.hpp"
#include "appview/outline/from_index.hpp"
#include "tests/support/hostile_index.hpp"

namespace bulleted::appview {
namespace {

using nlohmann::json;
using outline::Outline;
using outline::read_outline;
using IndexAbuseTest = testing::HostileIndexTest;

TEST_F(IndexAbuseTest, AnImportDropsInvalidFacetsAndListsThem) {
  Outline tree;
  outline::OutlineNode node;
  node.text = "click me";
  node.facets =
      json::array({{{"index", {{"byteStart", 0}, {"byteEnd", 5}}},
                    {"features", json::array({{{"$type", "app.bsky.richtext.facet#link"},
                                               {"uri", "javascript:alert(1)"}}})}},
                   {{"index", {{"byteStart", 6}, {"byteEnd", 8}}},
                    {"features", json::array({{{"$type", "app.bulleted.format#bold"}}})}}});
  tree.nodes.push_back(node);
  auto job = plan_import(*store_, locks_, clock_, {kDid, std::nullopt}, tree);
  ASSERT_TRUE(job.has_value()) << job.error().message;
  const json errors = json::parse(job->errors_json);
  ASSERT_EQ(errors.size(), 1u) << errors.dump();
  EXPECT_NE(errors[0].get<std::string>().find("node 1: facet 1 dropped"), std::string::npos)
      << errors.dump();
  LocalSink sink(clock_);
  while (true) {
    auto ran = run_import_batch(*store_, sink, job->id, true);
    ASSERT_TRUE(ran.has_value());
    if (ran->state != schema::ImportState::kRunning) break;
  }
  auto imported = read_outline(*store_, kDid, job->root_rkey, 10);
  ASSERT_TRUE(imported.has_value());
  ASSERT_EQ(imported->nodes.size(), 2u);
  EXPECT_EQ(imported->nodes[1].text, "click me") << "the text is kept";
  ASSERT_TRUE(imported->nodes[1].facets.is_array());
  ASSERT_EQ(imported->nodes[1].facets.size(), 1u);
  EXPECT_EQ(imported->nodes[1].facets[0]["features"][0]["$type"], "app.bulleted.format#bold");
}

}  // namespace
}  // namespace bulleted::appview
