#include "appview/outline/outline.hpp"

namespace bulleted::appview::outline {
namespace {

constexpr std::string_view kComplete = "[COMPLETE] ";

}  // namespace

std::optional<Format> parse_format(std::string_view name) {
  if (name == "opml") return Format::kOpml;
  if (name == "text") return Format::kText;
  return std::nullopt;
}

// "- text" bullets, two spaces a level; "[COMPLETE] " marks completion; a
// lone "-" is an empty bullet; any other line continues the note of the
// bullet above it (a '\' first is taken off: the writer's escape of note
// lines that would read as bullets). A UTF-8 byte order mark is skipped.
// One pass; each line is appended where it belongs.
Result<Outline> parse_plain_text(std::string_view document, const ImportLimits& limits) {
  if (document.size() > limits.max_bytes) {
    return fail(ErrorCode::kPayloadTooLarge, "the document is larger than the limit of " +
                                                 std::to_string(limits.max_bytes) + " bytes");
  }
  if (document.starts_with("\xEF\xBB\xBF")) document.remove_prefix(3);
  Outline outline;
  std::vector<std::ptrdiff_t> open;  // the last node at each depth
  std::size_t line_number = 0;
  for (std::size_t pos = 0; pos <= document.size();) {
    std::size_t end = document.find('\n', pos);
    if (end == std::string_view::npos) end = document.size();
    std::string_view line = document.substr(pos, end - pos);
    pos = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::size_t indent = 0;
    while (indent < line.size() && line[indent] == ' ') ++indent;
    const std::string_view rest = line.substr(indent);
    const bool bullet = rest == "-" || rest.starts_with("- ");
    if (!bullet) {
      if (rest.empty() && outline.nodes.empty()) continue;
      if (outline.nodes.empty()) {
        return fail(ErrorCode::kInvalidRequest,
                    "line " + std::to_string(line_number) + " is not a \"- \" bullet");
      }
      auto& node = outline.nodes.back();
      if (rest.empty() && !node.note) continue;  // a blank line between bullets
      // A note line of the last bullet, indented one level under it.
      const std::size_t note_indent = std::min(indent, 2 * open.size());
      std::string_view text = line.substr(note_indent);
      if (text.starts_with('\\')) text.remove_prefix(1);
      if (node.note) {
        node.note->push_back('\n');
        node.note->append(text);
      } else {
        node.note = std::string(text);
      }
      continue;
    }
    std::size_t depth = indent / 2;
    if (depth > open.size()) depth = open.size();  // a jump of several levels: one level
    if (depth >= limits.max_depth) {
      return fail(ErrorCode::kPayloadTooLarge, "the outline is nested deeper than the limit of " +
                                                   std::to_string(limits.max_depth) + " levels");
    }
    if (outline.nodes.size() >= limits.max_nodes) {
      return fail(ErrorCode::kPayloadTooLarge, "the outline has more nodes than the limit of " +
                                                   std::to_string(limits.max_nodes));
    }
    OutlineNode node;
    node.parent = depth == 0 ? -1 : open[depth - 1];
    std::string_view text = rest.size() > 2 ? rest.substr(2) : std::string_view{};
    if (text.starts_with(kComplete)) {
      node.completed = true;
      text.remove_prefix(kComplete.size());
    }
    node.text = std::string(text);
    open.resize(depth);
    open.push_back(static_cast<std::ptrdiff_t>(outline.nodes.size()));
    outline.nodes.push_back(std::move(node));
  }
  if (outline.nodes.empty()) return fail(ErrorCode::kInvalidRequest, "the document has no bullet");
  for (auto& node : outline.nodes) {
    while (node.note && !node.note->empty() && node.note->back() == '\n') node.note->pop_back();
  }
  return outline;
}

Result<Outline> parse_outline(Format format, std::string_view document,
                              const ImportLimits& limits) {
  return format == Format::kOpml ? parse_opml(document, limits)
                                 : parse_plain_text(document, limits);
}

}  // namespace bulleted::appview::outline
