#include "schema/node_record.hpp"

#include <cstring>
#include <memory>

#include "ordering/order_key.hpp"
#include "schema/json_text.hpp"
#include "schema/syntax.hpp"

namespace bulleted::schema {
namespace {

std::optional<std::string> field_error(std::string_view field, std::string_view text,
                                       std::size_t max_bytes, std::size_t max_graphemes,
                                       std::string_view whose) {
  if (text.size() > max_bytes) {
    return std::string(field) + " is longer than " + std::to_string(max_bytes) + " bytes" +
           std::string(whose) + " (" + std::to_string(text.size()) + ")";
  }
  if (!is_valid_utf8(text)) return std::string(field) + " is not valid UTF-8";
  // A grapheme is at least one byte: short texts cannot exceed the limit.
  if (text.size() > max_graphemes && count_graphemes(text) > max_graphemes) {
    return std::string(field) + " has more than " + std::to_string(max_graphemes) + " graphemes" +
           std::string(whose);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> text_field_error(std::string_view field, std::string_view text) {
  return field_error(field, text, kMaxTextBytes, kMaxTextGraphemes, "");
}

std::optional<std::string> written_field_error(std::string_view field, std::string_view text) {
  const bool note = field == "note";
  return field_error(field, text, note ? kWrittenNoteBytes : kWrittenTextBytes,
                     note ? kWrittenNoteGraphemes : kWrittenTextGraphemes,
                     note ? " (the published note's limit)" : " (the published record's limit)");
}

namespace {

// True when every byte is ASCII: whole words, the last one overlapping the
// one before (most keys, identifiers and outline texts are ASCII).
bool all_ascii(const unsigned char* s, std::size_t n) {
  if (n >= 8) {
    std::uint64_t word;
    for (std::size_t i = 0; i + 8 <= n; i += 8) {
      std::memcpy(&word, s + i, 8);
      if ((word & 0x8080808080808080ULL) != 0) return false;
    }
    std::memcpy(&word, s + n - 8, 8);
    return (word & 0x8080808080808080ULL) == 0;
  }
  if (n >= 4) {
    std::uint32_t head;
    std::uint32_t tail;
    std::memcpy(&head, s, 4);
    std::memcpy(&tail, s + n - 4, 4);
    return ((head | tail) & 0x80808080U) == 0;
  }
  unsigned bits = 0;
  for (std::size_t i = 0; i < n; ++i) bits |= s[i];
  return bits < 0x80;
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
  std::size_t i = 0;
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  if (all_ascii(s, n)) return true;
  while (i < n) {
    // Eight ASCII bytes at a time: the common case for outline text.
    if (i + 8 <= n) {
      std::uint64_t chunk;
      std::memcpy(&chunk, s + i, 8);
      if ((chunk & 0x8080808080808080ULL) == 0) {
        i += 8;
        continue;
      }
    }
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

std::string root_group(std::string_view did) { return "at://" + std::string(did); }

std::string children_group(std::string_view did, std::string_view rkey) {
  return record_uri(did, kNodeCollection, rkey);
}

std::string target_group(std::string_view did, const std::optional<std::string>& parent_rkey) {
  return parent_rkey ? children_group(did, *parent_rkey) : root_group(did);
}

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

std::expected<NodeRecord, std::string> parse_node_record(const RecordFields& fields) {
  using Kind = RecordField::Kind;
  if (!fields.is_object()) return std::unexpected("a record is an object");
  NodeRecord record;
  if (const RecordField type = fields.get("$type"); type.kind != Kind::kAbsent) {
    if (type.kind != Kind::kString || type.text != kNodeCollection) {
      return std::unexpected("$type is not app.bulleted.node");
    }
  }
  const RecordField text = fields.get("text");
  if (text.kind != Kind::kString) return std::unexpected(std::string(kTextRequired));
  nlohmann::json facets;
  if (auto reason = read_whole_text(fields, text.text, record.text, facets)) {
    return std::unexpected(*reason);
  }

  if (const RecordField note = fields.get("note");
      note.kind != Kind::kAbsent && note.kind != Kind::kNull) {
    if (note.kind != Kind::kString) return std::unexpected("note is not a string");
    if (auto reason = text_field_error("note", note.text)) return std::unexpected(*reason);
    record.note = std::string(note.text);
  }
  if (const RecordField parent = fields.get("parent");
      parent.kind != Kind::kAbsent && parent.kind != Kind::kNull) {
    if (parent.kind != Kind::kString) return std::unexpected("parent is not a string");
    if (auto uri = AtUri::parse(parent.text); !uri)
      return std::unexpected("parent: " + uri.error());
    record.parent = std::string(parent.text);
  }
  if (const RecordField key = fields.get("sortKey"); key.kind == Kind::kString) {
    record.sort_key = std::string(key.text);
    record.sort_key_valid = ordering::is_valid_key(key.text);
  }
  // Completion is `completedAt` (its presence); an earlier build of this
  // app view wrote `completed: true`, read as completed since createdAt.
  if (const RecordField completed_at = fields.get("completedAt");
      completed_at.kind != Kind::kAbsent && completed_at.kind != Kind::kNull) {
    if (completed_at.kind != Kind::kString) return std::unexpected("completedAt is not a string");
    if (auto when = Datetime::parse(completed_at.text); !when) {
      return std::unexpected("completedAt: " + when.error());
    }
    record.completed = true;
    record.completed_at = std::string(completed_at.text);
  } else if (const RecordField completed = fields.get("completed");
             completed.kind != Kind::kAbsent && completed.kind != Kind::kNull) {
    if (completed.kind != Kind::kBool) return std::unexpected("completed is not a boolean");
    record.completed = completed.boolean;
  }
  const RecordField created = fields.get("createdAt");
  if (created.kind != Kind::kString) return std::unexpected("createdAt is required");
  if (auto when = Datetime::parse(created.text); !when) {
    return std::unexpected("createdAt: " + when.error());
  }
  record.created_at = std::string(created.text);
  // The open sets: any string, kept as written.
  for (auto [name, into] : {std::pair{"layout", &record.layout}, {"display", &record.display}}) {
    const RecordField value = fields.get(name);
    if (value.kind == Kind::kAbsent || value.kind == Kind::kNull) continue;
    if (value.kind != Kind::kString) return std::unexpected(std::string(name) + " is not a string");
    if (value.text.size() > kMaxOpenValueBytes || !is_valid_utf8(value.text)) {
      return std::unexpected(std::string(name) + " is longer than " +
                             std::to_string(kMaxOpenValueBytes) + " bytes or not UTF-8");
    }
    *into = std::string(value.text);
  }
  if (facets.is_array()) record.facets = sanitize_facets(record.text, facets);
  return record;
}

namespace {

bool utf8_boundary(std::string_view text, std::size_t at) {
  return at == 0 || at >= text.size() || (static_cast<unsigned char>(text[at]) & 0xC0) != 0x80;
}

bool allowed_link(std::string_view uri) {
  const std::size_t colon = uri.find(':');
  if (colon == std::string_view::npos) return false;
  std::string scheme(uri.substr(0, colon));
  for (auto& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme == "http" || scheme == "https") return uri.substr(colon).starts_with("://");
  return scheme == "mailto" || scheme == "at";
}

}  // namespace

std::string_view style_of(std::string_view type) {
  if (type == kLinkFeature) return "link";
  for (const std::string_view prefix : {kFormatPrefix, kLegacyFormatPrefix}) {
    if (!type.starts_with(prefix)) continue;
    const std::string_view kind = type.substr(prefix.size());
    for (const std::string_view known :
         {"bold", "italic", "underline", "strikethrough", "code", "link", "highlight", "date"}) {
      if (kind == known && (kind != "link" || prefix == kLegacyFormatPrefix)) return kind;
    }
  }
  return {};
}

namespace {

// A short string field of a feature, or nullopt.
std::optional<std::string> short_string(const nlohmann::json& feature, const char* name,
                                        std::size_t max_bytes) {
  auto it = feature.find(name);
  if (it == feature.end() || !it->is_string()) return std::nullopt;
  const auto& value = it->get_ref<const std::string&>();
  if (value.empty() || value.size() > max_bytes || !is_valid_utf8(value)) return std::nullopt;
  return value;
}

// The feature rebuilt from its known fields, or the reason it is dropped.
std::expected<nlohmann::json, std::string> clean_feature(const nlohmann::json& feature) {
  if (!feature.is_object()) return std::unexpected("a feature is not an object");
  auto type = feature.find("$type");
  if (type == feature.end() || !type->is_string()) return std::unexpected("a feature has no $type");
  const std::string& name = type->get_ref<const std::string&>();
  const std::string_view kind = style_of(name);
  // Under the names written now (an earlier build's are renamed).
  nlohmann::json out = {{"$type", kind.empty() ? name
                                  : kind == "link"
                                      ? std::string(kLinkFeature)
                                      : std::string(kFormatPrefix) + std::string(kind)}};
  if (kind == "bold" || kind == "italic" || kind == "underline" || kind == "strikethrough" ||
      kind == "code") {
    return out;
  }
  // WorkFlowy's link and the published record's (app.bsky.richtext.facet's)
  // are the same feature.
  if (kind == "link") {
    auto uri = short_string(feature, "uri", kMaxLinkBytes);
    if (!uri || !allowed_link(*uri)) {
      return std::unexpected("a link that is not http(s), mailto or at (or too long)");
    }
    out["uri"] = *uri;
    return out;
  }
  if (kind == "highlight") {
    auto color = short_string(feature, "color", 64);
    if (!color) return std::unexpected("a highlight without a colour of at most 64 bytes");
    out["color"] = *color;
    return out;
  }
  if (kind == "date") {
    auto start = short_string(feature, "start", 64);
    if (!start) return std::unexpected("a date without a start of at most 64 bytes");
    out["start"] = *start;
    return out;
  }
  // The published record's other features (app.bsky.richtext.facet's).
  if (name == "app.bsky.richtext.facet#mention") {
    auto did = short_string(feature, "did", 2048);
    if (!did || !Did::parse(*did)) return std::unexpected("a mention without a valid DID");
    out["did"] = *did;
    return out;
  }
  if (name == "app.bsky.richtext.facet#tag") {
    auto tag = short_string(feature, "tag", 640);
    if (!tag) return std::unexpected("a tag without a name of at most 640 bytes");
    out["tag"] = *tag;
    return out;
  }
  if (std::string_view(name).starts_with(kFormatPrefix) ||
      std::string_view(name).starts_with(kLegacyFormatPrefix)) {
    return std::unexpected("an unknown feature");
  }
  // Any other type is kept as it came (readers that do not know it ignore
  // it), when it is small.
  const std::string verbatim =
      feature.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (name.empty() || verbatim.size() > kMaxOtherFeatureBytes) {
    return std::unexpected("a feature of another type over " +
                           std::to_string(kMaxOtherFeatureBytes) + " bytes");
  }
  return nlohmann::json::parse(verbatim);
}

}  // namespace

nlohmann::json record_facets(std::string_view text, std::string_view record_json) {
  if (record_json.find("acets\"") == std::string_view::npos) return nullptr;
  auto record = nlohmann::json::parse(record_json, nullptr, false);
  if (!record.is_object()) return nullptr;
  nlohmann::json facets = record.contains("facets") ? record["facets"] : nlohmann::json();
  if (auto rest = record.find(kTextRestFacetsField); rest != record.end() && rest->is_array()) {
    if (!facets.is_array()) facets = nlohmann::json::array();
    for (const auto& facet : *rest) facets.push_back(facet);
  }
  if (facets.is_null()) return nullptr;
  return sanitize_facets(text, facets);
}

namespace {
std::optional<std::string> served_form(const nlohmann::json& facets) {
  if (facets.is_null()) return std::nullopt;
  return facets.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}
}  // namespace

std::optional<std::string> served_facets(std::string_view text, std::string_view record_json) {
  return served_form(record_facets(text, record_json));
}

std::optional<std::string> served_facets(const NodeRecord& record) {
  // to_json_text writes "facets" only when they are an array.
  if (!record.facets.is_array()) return std::nullopt;
  // In the order a record written from it is read back (record_facets):
  // those within the published limits first.
  const WrittenText written = written_text(record.text, record.facets);
  if (written.rest.empty()) return served_form(sanitize_facets(record.text, record.facets));
  nlohmann::json facets = written.facets.is_array() ? written.facets : nlohmann::json::array();
  if (written.rest_facets.is_array()) {
    for (const auto& facet : written.rest_facets) facets.push_back(facet);
  }
  return served_form(sanitize_facets(record.text, facets));
}

nlohmann::json sanitize_facets(std::string_view text, const nlohmann::json& facets,
                               std::vector<std::string>* problems) {
  auto note = [&](std::size_t index, const std::string& why) {
    if (problems != nullptr && problems->size() < 20) {
      problems->push_back("facet " + std::to_string(index + 1) + " dropped: " + why);
    }
  };
  if (!facets.is_array()) return nullptr;
  nlohmann::json out = nlohmann::json::array();
  std::size_t bytes = 2;
  for (std::size_t i = 0; i < facets.size(); ++i) {
    const auto& facet = facets[i];
    if (out.size() >= kMaxFacets) {
      note(i, "more than " + std::to_string(kMaxFacets) + " facets");
      break;
    }
    if (!facet.is_object()) {
      note(i, "not an object");
      continue;
    }
    auto index = facet.find("index");
    auto features = facet.find("features");
    if (index == facet.end() || !index->is_object() || features == facet.end() ||
        !features->is_array()) {
      note(i, "no index or features");
      continue;
    }
    auto start = index->find("byteStart");
    auto end = index->find("byteEnd");
    auto offset = [](const nlohmann::json& value) -> std::optional<std::uint64_t> {
      if (value.is_number_unsigned()) return value.get<std::uint64_t>();
      if (value.is_number_integer() && value.get<std::int64_t>() >= 0) {
        return static_cast<std::uint64_t>(value.get<std::int64_t>());
      }
      return std::nullopt;
    };
    const auto from_value = start == index->end() ? std::nullopt : offset(*start);
    const auto to_value = end == index->end() ? std::nullopt : offset(*end);
    if (!from_value || !to_value) {
      note(i, "a byte range that is not two non-negative integers");
      continue;
    }
    const std::uint64_t from = *from_value;
    const std::uint64_t to = *to_value;
    if (from >= to || to > text.size() || !utf8_boundary(text, from) || !utf8_boundary(text, to)) {
      note(i, "a byte range outside the text or not on character boundaries");
      continue;
    }
    if (features->empty() || features->size() > kMaxFeatures) {
      note(i, "from 1 to " + std::to_string(kMaxFeatures) + " features are allowed");
      continue;
    }
    nlohmann::json kept = nlohmann::json::array();
    for (const auto& feature : *features) {
      auto clean = clean_feature(feature);
      if (clean) {
        kept.push_back(std::move(*clean));
      } else {
        note(i, clean.error());
      }
    }
    if (kept.empty()) continue;
    nlohmann::json cleaned = {{"index", {{"byteStart", from}, {"byteEnd", to}}},
                              {"features", std::move(kept)}};
    const std::size_t size = cleaned.dump().size() + 1;
    if (bytes + size > kMaxFacetBytes) {
      note(i, "the facets pass " + std::to_string(kMaxFacetBytes) + " bytes");
      break;
    }
    bytes += size;
    out.push_back(std::move(cleaned));
  }
  if (out.empty()) return nullptr;
  return out;
}

std::expected<NodeRecord, std::string> parse_node_record(const nlohmann::json& json) {
  return parse_node_record(JsonRecordFields(json));
}

std::string to_json_text(const NodeRecord& record) {
  const WrittenText written = written_text(record.text, record.facets);
  // Keys in the order nlohmann::json (a std::map) writes them.
  std::string out = "{\"$type\":\"app.bulleted.node\"";
  const auto size = [](const std::optional<std::string>& text) { return text ? text->size() : 0; };
  out.reserve(128 + record.text.size() + record.created_at.size() + size(record.note) +
              size(record.parent) + size(record.sort_key));
  if (const auto since = record.completed_since()) {
    out += ",\"completedAt\":";
    append_json_string(out, *since);
  }
  out += ",\"createdAt\":";
  append_json_string(out, record.created_at);
  if (record.display) {
    out += ",\"display\":";
    append_json_string(out, *record.display);
  }
  if (written.facets.is_array()) {
    out += ",\"facets\":";
    out += written.facets.dump();
  }
  if (record.layout) {
    out += ",\"layout\":";
    append_json_string(out, *record.layout);
  }
  if (record.note) {
    out += ",\"note\":";
    append_json_string(out, *record.note);
  }
  if (record.parent) {
    out += ",\"parent\":";
    append_json_string(out, *record.parent);
  }
  if (record.sort_key) {
    out += ",\"sortKey\":";
    append_json_string(out, *record.sort_key);
  }
  out += ",\"text\":";
  append_json_string(out, written.text);
  if (!written.rest.empty()) {
    out += ",\"textRest\":";
    append_json_string(out, written.rest);
  }
  if (written.rest_facets.is_array()) {
    out += ",\"textRestFacets\":";
    out += written.rest_facets.dump();
  }
  out += '}';
  return out;
}

nlohmann::json to_json(const NodeRecord& record) {
  const WrittenText written = written_text(record.text, record.facets);
  nlohmann::json json = {{"$type", kNodeCollection}, {"text", written.text}};
  if (!written.rest.empty()) json[kTextRestField] = written.rest;
  if (written.rest_facets.is_array()) json[kTextRestFacetsField] = written.rest_facets;
  if (record.note) json["note"] = *record.note;
  if (record.parent) json["parent"] = *record.parent;
  if (record.sort_key) json["sortKey"] = *record.sort_key;
  if (const auto since = record.completed_since()) json["completedAt"] = std::string(*since);
  json["createdAt"] = record.created_at;
  if (record.layout) json["layout"] = *record.layout;
  if (record.display) json["display"] = *record.display;
  if (written.facets.is_array()) json["facets"] = written.facets;
  return json;
}

}  // namespace bulleted::schema
