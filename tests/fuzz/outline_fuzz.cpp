// libFuzzer target: the import parsers (WorkFlowy OPML through libexpat, the
// plain-text export, inline HTML to facets) and the writers on what they
// parse. Bad input must be an error, never a crash, a hang or a leak; what
// parses must write out and parse back to the same outline.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "appview/outline/outline.hpp"
#include "schema/node_record.hpp"

using namespace bulleted::appview::outline;

namespace {

void check_round_trip(Format format, const Outline& tree, const ImportLimits& limits) {
  const std::string written = write_outline(format, tree, "fuzz");
  auto again = parse_outline(format, written, limits);
  if (!again || again->nodes.size() != tree.nodes.size()) std::abort();
  for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
    if (again->nodes[i].parent != tree.nodes[i].parent) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  ImportLimits limits;
  limits.max_bytes = 1 << 20;
  limits.max_nodes = 5'000;
  limits.max_depth = 200;
  switch (data[0] % 3) {
    case 0:
      if (auto tree = parse_opml(input, limits)) check_round_trip(Format::kOpml, *tree, limits);
      break;
    case 1:
      if (auto tree = parse_plain_text(input, limits)) {
        // The structure comes back whole while the text dialect keeps every
        // level (it writes deeper bullets at its last one).
        std::vector<std::size_t> depth(tree->nodes.size(), 0);
        std::size_t deepest = 0;
        for (std::size_t i = 0; i < tree->nodes.size(); ++i) {
          const auto parent = tree->nodes[i].parent;
          depth[i] = parent < 0 ? 0 : depth[static_cast<std::size_t>(parent)] + 1;
          deepest = std::max(deepest, depth[i]);
        }
        if (deepest < OutlineWriter::kMaxTextLevels) {
          check_round_trip(Format::kText, *tree, limits);
        } else {
          (void)write_plain_text(*tree);
        }
      }
      break;
    default: {
      // Text reaches the decoder from XML (always UTF-8) and is refused as a
      // record otherwise; facets are byte ranges on character boundaries.
      if (!bulleted::schema::is_valid_utf8(input)) break;
      auto rich = decode_rich_text(input);
      auto again = decode_rich_text(encode_rich_text(rich.text, rich.facets));
      if (again.text != rich.text || again.facets != rich.facets) std::abort();
    }
  }
  return 0;
}
