// The import parsers on hostile text: a byte order mark, notes that look like
// bullets, many note lines, markup that decodes to its text.
#include <gtest/gtest.h>

#include "appview/outline/outline.hpp"

namespace bulleted::appview {
namespace {

using outline::ImportLimits;
using outline::Outline;

TEST(PlainTextTest, AByteOrderMarkIsSkipped) {
  auto parsed = outline::parse_plain_text("\xEF\xBB\xBF- first\n  - second\n", ImportLimits{});
  ASSERT_TRUE(parsed.has_value()) << parsed.error().message;
  ASSERT_EQ(parsed->nodes.size(), 2u);
  EXPECT_EQ(parsed->nodes[0].text, "first");
  EXPECT_EQ(parsed->nodes[1].parent, 0);
}

TEST(PlainTextTest, NoteLinesThatLookLikeBulletsComeBackAsNotes) {
  Outline tree;
  outline::OutlineNode a;
  a.text = "a bullet";
  a.note = "- not a bullet\n  - nor this\n\\ a backslash\n-\nplain";
  tree.nodes.push_back(a);
  outline::OutlineNode b;
  b.parent = 0;
  b.text = "child";
  b.note = "-x";
  tree.nodes.push_back(b);
  const std::string text = outline::write_plain_text(tree);
  auto again = outline::parse_plain_text(text, ImportLimits{});
  ASSERT_TRUE(again.has_value()) << again.error().message << "\n" << text;
  ASSERT_EQ(again->nodes.size(), 2u) << text;
  EXPECT_EQ(again->nodes[0].note, a.note) << text;
  EXPECT_EQ(again->nodes[1].note, b.note) << text;
  EXPECT_EQ(again->nodes[1].parent, 0);
}

TEST(PlainTextTest, ManyNoteLinesAreKeptInOrder) {
  std::string document = "- bullet\n";
  for (int i = 0; i < 100'000; ++i) document += "  line " + std::to_string(i) + "\n";
  auto parsed = outline::parse_plain_text(document, ImportLimits{});
  ASSERT_TRUE(parsed.has_value());
  ASSERT_EQ(parsed->nodes.size(), 1u);
  const std::string& note = *parsed->nodes[0].note;
  EXPECT_TRUE(note.starts_with("line 0\nline 1\n"));
  EXPECT_TRUE(note.ends_with("\nline 99999"));
  EXPECT_EQ(std::count(note.begin(), note.end(), '\n'), 99'999);
}

TEST(RichTextTest, HostileMarkupDecodesToItsText) {
  // Stray closing tags while many spans are open.
  std::string html;
  for (int i = 0; i < 20'000; ++i) html += "<b>";
  html += "x";
  for (int i = 0; i < 20'000; ++i) html += "</i>";
  auto rich = outline::decode_rich_text(html);
  EXPECT_EQ(rich.text, "x");
  ASSERT_TRUE(rich.facets.is_array());
  ASSERT_EQ(rich.facets.size(), 1u) << "the unclosed bolds merge into one facet";
  // Many '<' without '>' and many '&' without ';' stay text.
  const std::string lts(200'000, '<');
  EXPECT_EQ(outline::decode_rich_text(lts).text, lts);
  const std::string amps(200'000, '&');
  EXPECT_EQ(outline::decode_rich_text(amps).text, amps);
  EXPECT_EQ(outline::decode_rich_text("&amp;&lt;b&gt; &#x41;&#66;&bogus; &").text,
            "&<b> AB&bogus; &");
  // The innermost of equal tags closes first.
  auto nested = outline::decode_rich_text("<b>a<i>b<b>c</b>d</i>e</b>");
  EXPECT_EQ(nested.text, "abcde");
}

}  // namespace
}  // namespace bulleted::appview
