// Exports stay linear in the outline and are handed over as they are written.
#include <gtest/gtest.h>

#include "appview/outline/outline.hpp"

namespace bulleted::appview {
namespace {

using outline::ImportLimits;
using outline::Outline;

Outline chain(std::size_t depth) {
  Outline tree;
  for (std::size_t i = 0; i < depth; ++i) {
    outline::OutlineNode node;
    node.parent = static_cast<std::ptrdiff_t>(i) - 1;
    node.text = "n" + std::to_string(i);
    if (i % 100 == 0) node.note = "a note";
    tree.nodes.push_back(std::move(node));
  }
  return tree;
}

TEST(ExportTest, SizeIsLinearOnADeepChain) {
  const Outline tree = chain(20'000);
  const std::string opml = outline::write_opml(tree, "deep");
  const std::string text = outline::write_plain_text(tree);
  // A line of a node is its markup plus bounded indentation.
  EXPECT_LT(opml.size(), tree.nodes.size() * 200) << "OPML (a start and an end tag a node)";
  EXPECT_LT(text.size(), tree.nodes.size() * 220) << "text";
  // OPML keeps every level even where the indentation stops growing.
  ImportLimits limits;
  limits.max_depth = 30'000;
  auto back = outline::parse_opml(opml, limits);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  ASSERT_EQ(back->nodes.size(), tree.nodes.size());
  for (std::size_t i = 0; i < tree.nodes.size(); i += 997) {
    EXPECT_EQ(back->nodes[i].parent, tree.nodes[i].parent) << i;
    EXPECT_EQ(back->nodes[i].text, tree.nodes[i].text) << i;
  }
  // Plain text keeps the first kMaxTextLevels levels; deeper nodes sit at
  // the last of them.
  auto flat = outline::parse_plain_text(text, limits);
  ASSERT_TRUE(flat.has_value()) << flat.error().message;
  ASSERT_EQ(flat->nodes.size(), tree.nodes.size());
  const auto levels = outline::OutlineWriter::kMaxTextLevels;
  EXPECT_EQ(flat->nodes[levels].parent, static_cast<std::ptrdiff_t>(levels - 1));
  EXPECT_EQ(flat->nodes[levels + 5].parent, static_cast<std::ptrdiff_t>(levels - 1));
}

TEST(ExportTest, TheWriterSendsPiecesAsItGoes) {
  std::vector<std::size_t> pieces;
  outline::OutlineWriter writer(outline::Format::kOpml, "t",
                                [&](std::string_view piece) { pieces.push_back(piece.size()); });
  const Outline tree = chain(5'000);
  for (std::size_t i = 0; i < tree.nodes.size(); ++i)
    writer.node(tree.nodes[i], std::min(i, std::size_t{40}));
  EXPECT_GT(pieces.size(), 2u) << "flushed before the end";
  for (std::size_t size : pieces) EXPECT_LT(size, 200u * 1024);
  writer.finish();
}

}  // namespace
}  // namespace bulleted::appview
