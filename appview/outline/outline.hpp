// Outlines as files: WorkFlowy's OPML and plain-text exports in, the same
// dialects out.
//
// An Outline is its nodes in document order (pre-order: every parent before
// its children, siblings in order), each naming its parent by index, so no
// depth of nesting ever recurses. Text keeps its formatting as facets (byte
// ranges of the plain text with a feature each, app.bsky.richtext.facet's
// shape; WorkFlowy's styles as app.bulleted.format's features); the plain
// text stays readable on its own.
//
// Parsing never trusts its input: a size cap, a node cap and a depth cap, each
// refused with an error naming the limit; XML through libexpat with DTDs,
// external entities and entity declarations refused; malformed XML is an
// error with its line and column.
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schema/error.hpp"

namespace bulleted::appview::outline {

struct OutlineNode {
  std::ptrdiff_t parent = -1;  // index of the parent node; -1 at the top level
  std::string text;            // plain text
  nlohmann::json facets;       // array of facets, or null when unformatted
  std::optional<std::string> note;
  bool completed = false;
};

struct Outline {
  std::vector<OutlineNode> nodes;  // pre-order
};

struct ImportLimits {
  std::size_t max_bytes = 50 * 1024 * 1024;
  std::size_t max_nodes = 200'000;
  std::size_t max_depth = 1'000;
};

enum class Format { kOpml, kText };
std::optional<Format> parse_format(std::string_view name);

// kInvalidRequest (malformed input, with line and column for XML) or
// kPayloadTooLarge (a limit, named in the message).
Result<Outline> parse_opml(std::string_view document, const ImportLimits& limits);
Result<Outline> parse_plain_text(std::string_view document, const ImportLimits& limits);
Result<Outline> parse_outline(Format format, std::string_view document, const ImportLimits& limits);

// Inline HTML (what WorkFlowy keeps in a text attribute) to plain text and
// facets. Tolerant: stray or unbalanced tags, unknown tags and entities, a
// bare '&' or '<' are kept as text or ignored, never an error.
struct RichText {
  std::string text;
  nlohmann::json facets;  // null when there is no formatting
};
RichText decode_rich_text(std::string_view html);
// Plain text and facets back to inline HTML (facets out of range are
// ignored).
std::string encode_rich_text(std::string_view text, const nlohmann::json& facets);

// Markup escaping for the exports: &, < and > always; double quotes when
// `quotes`; with `xml_attribute`, also line breaks and tabs as character
// references (attribute normalization would turn them into spaces) and other
// control characters dropped (XML 1.0 has no way to write them).
struct MarkupEscape {
  bool quotes = false;
  bool xml_attribute = false;
};
std::string escape_markup(std::string_view text, MarkupEscape how);

// Writes an outline node by node, in pre-order with each node's depth, as
// one of the export dialects; the text goes to `sink` in pieces as it is
// produced, so an export is never held whole. Output is linear in the
// outline: OPML indents at most kMaxOpmlIndentLevels levels (deeper nodes
// are nested all the same), plain text, whose indentation is its structure,
// writes nodes deeper than kMaxTextLevels at that level. A note line that
// would read back as a bullet ("-" first) or that starts with '\' gets a
// '\' in front; the text parser takes it off.
class OutlineWriter {
 public:
  static constexpr std::size_t kMaxOpmlIndentLevels = 32;
  static constexpr std::size_t kMaxTextLevels = 100;

  OutlineWriter(Format format, std::string_view title, std::function<void(std::string_view)> sink);
  // REQUIRES: depth <= the previous node's depth + 1 (0 for the first).
  void node(const OutlineNode& node, std::size_t depth);
  // Closes what is open; call once, after the last node.
  void finish();

 private:
  void flush(bool force);
  void end_pending(bool has_children);
  void close_to(std::size_t level);

  Format format_;
  std::function<void(std::string_view)> sink_;
  std::string out_;
  std::size_t open_ = 0;  // OPML: <outline> elements open
  bool pending_ = false;  // OPML: the last start tag is not ended yet
  std::size_t pending_depth_ = 0;
};

std::string write_opml(const Outline& outline, std::string_view title);
std::string write_plain_text(const Outline& outline);
std::string write_outline(Format format, const Outline& outline, std::string_view title);

}  // namespace bulleted::appview::outline
