// A text's graphemes, and a text past the published record's limits in the
// two parts a written record carries it in (text, textRest) and read back
// whole (schema/node_record.hpp: written_text, read_whole_text).
#include <unicode/ubrk.h>
#include <unicode/utext.h>

#include <algorithm>
#include <memory>

#include "schema/node_record.hpp"

namespace bulleted::schema {

std::size_t count_graphemes(std::string_view text) {
  UErrorCode status = U_ZERO_ERROR;
  UText* ut = utext_openUTF8(nullptr, text.data(), static_cast<int64_t>(text.size()), &status);
  std::unique_ptr<UText, decltype(&utext_close)> ut_guard(ut, &utext_close);
  UBreakIterator* it = ubrk_open(UBRK_CHARACTER, "", nullptr, 0, &status);
  std::unique_ptr<UBreakIterator, decltype(&ubrk_close)> it_guard(it, &ubrk_close);
  if (U_FAILURE(status)) return text.size();  // never under-count on failure
  ubrk_setUText(it, ut, &status);
  if (U_FAILURE(status)) return text.size();
  std::size_t count = 0;
  ubrk_first(it);
  while (ubrk_next(it) != UBRK_DONE) ++count;
  return count;
}

namespace {

// The bytes of the longest prefix of `text` within both bounds, at a
// grapheme boundary.
std::size_t grapheme_cut(std::string_view text, std::size_t max_bytes, std::size_t max_graphemes) {
  UErrorCode status = U_ZERO_ERROR;
  UText* ut = utext_openUTF8(nullptr, text.data(), static_cast<int64_t>(text.size()), &status);
  std::unique_ptr<UText, decltype(&utext_close)> ut_guard(ut, &utext_close);
  UBreakIterator* it = ubrk_open(UBRK_CHARACTER, "", nullptr, 0, &status);
  std::unique_ptr<UBreakIterator, decltype(&ubrk_close)> it_guard(it, &ubrk_close);
  if (!U_FAILURE(status)) ubrk_setUText(it, ut, &status);
  std::size_t cut = 0;
  if (U_FAILURE(status)) {
    // Code points, never past the bounds.
    std::size_t count = 0;
    for (std::size_t i = 1; i <= text.size() && i <= max_bytes; ++i) {
      if (i == text.size() || (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
        if (++count > max_graphemes) break;
        cut = i;
      }
    }
    return cut;
  }
  std::size_t count = 0;
  ubrk_first(it);
  for (int32_t at = ubrk_next(it); at != UBRK_DONE; at = ubrk_next(it)) {
    if (static_cast<std::size_t>(at) > max_bytes || ++count > max_graphemes) break;
    cut = static_cast<std::size_t>(at);
  }
  return cut;
}

}  // namespace

WrittenText written_text(std::string_view text, const nlohmann::json& facets, std::size_t max_bytes,
                         std::size_t max_graphemes) {
  // A grapheme is at least one byte: a text of at most max_graphemes bytes fits.
  if (text.size() <= std::min(max_bytes, max_graphemes) ||
      (text.size() <= max_bytes && count_graphemes(text) <= max_graphemes)) {
    return WrittenText{text, {}, facets, nullptr};
  }
  const std::size_t cut = grapheme_cut(text, max_bytes, max_graphemes);
  WrittenText out{text.substr(0, cut), text.substr(cut), nullptr, nullptr};
  if (facets.is_array()) {
    for (const auto& facet : facets) {
      const auto* index = facet.is_object() && facet.contains("index") ? &facet["index"] : nullptr;
      const bool first = index != nullptr && index->is_object() &&
                         index->value("byteEnd", std::uint64_t{0}) <= cut;
      nlohmann::json& into = first ? out.facets : out.rest_facets;
      if (into.is_null()) into = nlohmann::json::array();
      into.push_back(facet);
    }
  }
  return out;
}

std::optional<std::string> read_whole_text(const RecordFields& fields, std::string_view text,
                                           std::string& whole, nlohmann::json& facets) {
  using Kind = RecordField::Kind;
  const RecordField rest = fields.get(kTextRestField);
  if (rest.kind == Kind::kString && !rest.text.empty()) {
    if (text.size() + rest.text.size() > kMaxTextBytes) {
      return "text is longer than " + std::to_string(kMaxTextBytes) + " bytes";
    }
    whole.reserve(text.size() + rest.text.size());
    whole.assign(text);
    whole.append(rest.text);
  } else {
    whole.assign(text);
  }
  if (auto reason = text_field_error("text", whole)) return reason;
  facets = nullptr;
  if (fields.get("facets").kind == Kind::kArray) facets = fields.facets_json();
  if (fields.get(kTextRestFacetsField).kind == Kind::kArray) {
    nlohmann::json more = fields.rest_facets_json();
    if (!facets.is_array()) facets = nlohmann::json::array();
    for (auto& facet : more) facets.push_back(std::move(facet));
  }
  return std::nullopt;
}

}  // namespace bulleted::schema
