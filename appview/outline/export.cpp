#include "appview/outline/outline.hpp"

namespace bulleted::appview::outline {
namespace {

constexpr std::size_t kFlushBytes = 64 * 1024;

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

std::size_t opml_indent(std::size_t depth) {
  return 4 + 2 * std::min(depth, OutlineWriter::kMaxOpmlIndentLevels);
}

std::string write_whole(Format format, const Outline& outline, std::string_view title) {
  std::string out;
  OutlineWriter writer(format, title, [&out](std::string_view piece) { out += piece; });
  const auto depth = depths(outline);
  for (std::size_t i = 0; i < outline.nodes.size(); ++i) writer.node(outline.nodes[i], depth[i]);
  writer.finish();
  return out;
}

}  // namespace

OutlineWriter::OutlineWriter(Format format, std::string_view title,
                             std::function<void(std::string_view)> sink)
    : format_(format), sink_(std::move(sink)) {
  if (format_ == Format::kOpml) {
    out_ =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<opml version=\"2.0\">\n  <head>\n    "
        "<title>" +
        escape_attribute(title) + "</title>\n  </head>\n  <body>\n";
  }
}

void OutlineWriter::flush(bool force) {
  if (out_.empty() || (!force && out_.size() < kFlushBytes)) return;
  sink_(out_);
  out_.clear();
}

void OutlineWriter::end_pending(bool has_children) {
  if (!pending_) return;
  pending_ = false;
  if (has_children) {
    out_ += ">\n";
    open_ = pending_depth_ + 1;
  } else {
    out_ += " />\n";
  }
}

void OutlineWriter::close_to(std::size_t level) {
  while (open_ > level) {
    --open_;
    out_.append(opml_indent(open_), ' ');
    out_ += "</outline>\n";
  }
}

void OutlineWriter::node(const OutlineNode& node, std::size_t depth) {
  if (format_ == Format::kOpml) {
    end_pending(pending_ && depth > pending_depth_);
    close_to(depth);
    out_.append(opml_indent(depth), ' ');
    out_ += "<outline text=\"";
    out_ += escape_attribute(encode_rich_text(node.text, node.facets));
    out_ += '"';
    if (node.note) {
      out_ += " _note=\"";
      out_ += escape_attribute(encode_rich_text(*node.note, nullptr));
      out_ += '"';
    }
    if (node.completed) out_ += " _complete=\"true\"";
    pending_ = true;
    pending_depth_ = depth;
    flush(false);
    return;
  }
  const std::size_t level = std::min(depth, kMaxTextLevels);
  out_.append(2 * level, ' ');
  std::string text = node.text;
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  if (text.empty() && !node.completed) {
    out_ += "-\n";
  } else {
    out_ += "- ";
    if (node.completed) out_ += "[COMPLETE] ";
    out_ += text;
    out_ += '\n';
  }
  if (node.note) {
    const std::string& note = *node.note;
    std::size_t pos = 0;
    while (pos <= note.size()) {
      std::size_t end = note.find('\n', pos);
      if (end == std::string::npos) end = note.size();
      const std::string_view line = std::string_view(note).substr(pos, end - pos);
      out_.append(2 * (level + 1), ' ');
      // Read back, a line starting with '-' would be a bullet (and one with
      // spaces first too, once the parser has taken the note's indentation).
      const std::size_t first = line.find_first_not_of(' ');
      if (first != std::string_view::npos && (line[first] == '-' || line[first] == '\\')) {
        out_ += '\\';
      }
      out_ += line;
      out_ += '\n';
      pos = end + 1;
    }
  }
  flush(false);
}

void OutlineWriter::finish() {
  if (format_ == Format::kOpml) {
    end_pending(false);
    close_to(0);
    out_ += "  </body>\n</opml>\n";
  }
  flush(true);
}

std::string write_opml(const Outline& outline, std::string_view title) {
  return write_whole(Format::kOpml, outline, title);
}

std::string write_plain_text(const Outline& outline) {
  return write_whole(Format::kText, outline, "");
}

std::string write_outline(Format format, const Outline& outline, std::string_view title) {
  return write_whole(format, outline, title);
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
