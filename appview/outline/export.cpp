#include "appview/outline/outline.hpp"

namespace bulleted::appview::outline {
namespace {

// An XML attribute value.
std::string escape_attribute(std::string_view text) {
  return escape_markup(text, {.quotes = true, .xml_attribute = true});
}

std::vector<std::size_t> depths(const Outline& outline) {
  std::vector<std::size_t> depth(outline.nodes.size(), 0);
  for (std::size_t i = 0; i < outline.nodes.size(); ++i) {
    const auto parent = outline.nodes[i].parent;
    depth[i] = parent < 0 ? 0 : depth[static_cast<std::size_t>(parent)] + 1;
  }
  return depth;
}

}  // namespace

std::string write_opml(const Outline& outline, std::string_view title) {
  const auto depth = depths(outline);
  std::string out =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<opml version=\"2.0\">\n  <head>\n    <title>" +
      escape_attribute(title) + "</title>\n  </head>\n  <body>\n";
  std::size_t open = 0;  // depth of the innermost open <outline>, plus one
  auto close_to = [&](std::size_t level) {
    while (open > level) {
      --open;
      out.append(4 + 2 * open, ' ');
      out += "</outline>\n";
    }
  };
  for (std::size_t i = 0; i < outline.nodes.size(); ++i) {
    const auto& node = outline.nodes[i];
    close_to(depth[i]);
    out.append(4 + 2 * depth[i], ' ');
    out += "<outline text=\"" + escape_attribute(encode_rich_text(node.text, node.facets)) + "\"";
    if (node.note)
      out += " _note=\"" + escape_attribute(encode_rich_text(*node.note, nullptr)) + "\"";
    if (node.completed) out += " _complete=\"true\"";
    const bool has_children = i + 1 < outline.nodes.size() && depth[i + 1] > depth[i];
    if (has_children) {
      out += ">\n";
      open = depth[i] + 1;
    } else {
      out += " />\n";
    }
  }
  close_to(0);
  out += "  </body>\n</opml>\n";
  return out;
}

std::string write_plain_text(const Outline& outline) {
  const auto depth = depths(outline);
  std::string out;
  for (std::size_t i = 0; i < outline.nodes.size(); ++i) {
    const auto& node = outline.nodes[i];
    out.append(2 * depth[i], ' ');
    std::string text = node.text;
    for (char& c : text) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    if (text.empty() && !node.completed) {
      out += "-\n";
    } else {
      out += "- ";
      if (node.completed) out += "[COMPLETE] ";
      out += text + "\n";
    }
    if (node.note) {
      std::size_t pos = 0;
      while (pos <= node.note->size()) {
        std::size_t end = node.note->find('\n', pos);
        if (end == std::string::npos) end = node.note->size();
        out.append(2 * (depth[i] + 1), ' ');
        out += node.note->substr(pos, end - pos) + "\n";
        pos = end + 1;
      }
    }
  }
  return out;
}

std::string write_outline(Format format, const Outline& outline, std::string_view title) {
  return format == Format::kOpml ? write_opml(outline, title) : write_plain_text(outline);
}

std::string escape_markup(std::string_view text, MarkupEscape how) {
  std::string out;
  out.reserve(text.size() + 16);
  for (char c : text) {
    if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '"' && how.quotes) {
      out += "&quot;";
    } else if (how.xml_attribute && static_cast<unsigned char>(c) < 0x20) {
      // Tab, line feed and carriage return as character references; the
      // other control characters have no form in XML 1.0 and are dropped.
      if (c == '\t' || c == '\n' || c == '\r') out += "&#" + std::to_string(c) + ";";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace bulleted::appview::outline
