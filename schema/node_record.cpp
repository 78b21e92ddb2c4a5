#include "schema/node_record.hpp"

#include <unicode/ubrk.h>
#include <unicode/utext.h>

#include <memory>

#include "ordering/order_key.hpp"
#include "schema/syntax.hpp"

namespace bulleted::schema {
namespace {

std::optional<std::string> check_text(std::string_view field, std::string_view text) {
  if (text.size() > kMaxTextBytes) {
    return std::string(field) + " is longer than 100000 bytes (" + std::to_string(text.size()) +
           ")";
  }
  if (!is_valid_utf8(text)) return std::string(field) + " is not valid UTF-8";
  // A grapheme is at least one byte: short texts cannot exceed the limit.
  if (text.size() > kMaxTextGraphemes && count_graphemes(text) > kMaxTextGraphemes) {
    return std::string(field) + " has more than 10000 graphemes";
  }
  return std::nullopt;
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
  std::size_t i = 0;
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  while (i < n) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t length;
    std::uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      length = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      length = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      length = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + length > n) return false;
    for (std::size_t k = 1; k < length; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    // Overlong forms, surrogates, and code points past U+10FFFF.
    if ((length == 2 && cp < 0x80) || (length == 3 && cp < 0x800) ||
        (length == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += length;
  }
  return true;
}

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

std::string root_group(std::string_view did) { return "at://" + std::string(did); }

std::string unattached_group(std::string_view did) {
  return "at://" + std::string(did) + "#unattached";
}

std::string sibling_group(std::string_view did, const std::optional<std::string>& parent) {
  if (!parent) return root_group(did);
  auto uri = AtUri::parse(*parent);
  if (!uri || !uri->authority_is_did || uri->authority != did || !uri->rkey ||
      uri->collection != kNodeCollection) {
    return unattached_group(did);
  }
  return uri->str();
}

std::expected<NodeRecord, std::string> parse_node_record(const nlohmann::json& json) {
  if (!json.is_object()) return std::unexpected("a record is a JSON object");
  NodeRecord record;
  if (auto type = json.find("$type"); type != json.end()) {
    if (!type->is_string() || type->get_ref<const std::string&>() != kNodeCollection) {
      return std::unexpected("$type is not app.bulleted.node");
    }
  }
  auto text = json.find("text");
  if (text == json.end() || !text->is_string()) return std::unexpected("text is required");
  record.text = text->get<std::string>();
  if (auto reason = check_text("text", record.text)) return std::unexpected(*reason);

  if (auto note = json.find("note"); note != json.end() && !note->is_null()) {
    if (!note->is_string()) return std::unexpected("note is not a string");
    record.note = note->get<std::string>();
    if (auto reason = check_text("note", *record.note)) return std::unexpected(*reason);
  }
  if (auto parent = json.find("parent"); parent != json.end() && !parent->is_null()) {
    if (!parent->is_string()) return std::unexpected("parent is not a string");
    const auto& raw = parent->get_ref<const std::string&>();
    if (auto uri = AtUri::parse(raw); !uri) return std::unexpected("parent: " + uri.error());
    record.parent = raw;
  }
  if (auto key = json.find("sortKey"); key != json.end() && key->is_string()) {
    record.sort_key = key->get<std::string>();
    record.sort_key_valid = ordering::is_valid_key(*record.sort_key);
  }
  if (auto completed = json.find("completed"); completed != json.end() && !completed->is_null()) {
    if (!completed->is_boolean()) return std::unexpected("completed is not a boolean");
    record.completed = completed->get<bool>();
  }
  auto created = json.find("createdAt");
  if (created == json.end() || !created->is_string())
    return std::unexpected("createdAt is required");
  if (auto when = Datetime::parse(created->get_ref<const std::string&>()); !when) {
    return std::unexpected("createdAt: " + when.error());
  }
  record.created_at = created->get<std::string>();
  if (auto facets = json.find("facets"); facets != json.end() && facets->is_array()) {
    record.facets = *facets;
  }
  return record;
}

nlohmann::json to_json(const NodeRecord& record) {
  nlohmann::json json = {{"$type", kNodeCollection}, {"text", record.text}};
  if (record.note) json["note"] = *record.note;
  if (record.parent) json["parent"] = *record.parent;
  if (record.sort_key) json["sortKey"] = *record.sort_key;
  if (record.completed) json["completed"] = true;
  json["createdAt"] = record.created_at;
  if (record.facets.is_array()) json["facets"] = record.facets;
  return json;
}

}  // namespace bulleted::schema
