#include "schema/outline_record.hpp"

#include "schema/node_record.hpp"
#include "schema/syntax.hpp"

namespace bulleted::schema {
namespace {

// An optional string field within `max` bytes of valid UTF-8; the error
// names it.
std::expected<std::optional<std::string>, std::string> text_field(const nlohmann::json& json,
                                                                  const char* name,
                                                                  std::size_t max) {
  auto it = json.find(name);
  if (it == json.end() || it->is_null()) return std::optional<std::string>();
  if (!it->is_string()) return std::unexpected(std::string(name) + " is not a string");
  const auto& value = it->get_ref<const std::string&>();
  if (value.size() > max || !is_valid_utf8(value)) {
    return std::unexpected(std::string(name) + " is over " + std::to_string(max) +
                           " bytes or not UTF-8");
  }
  return std::optional<std::string>(value);
}

}  // namespace

std::expected<OutlineRecord, std::string> parse_outline_record(const nlohmann::json& json,
                                                               std::string_view did,
                                                               std::string_view rkey) {
  if (!json.is_object()) return std::unexpected("a record is an object");
  if (auto type = json.find("$type");
      type != json.end() && (!type->is_string() || *type != "app.bulleted.outline")) {
    return std::unexpected("$type is not app.bulleted.outline");
  }
  OutlineRecord out;
  auto created = json.find("createdAt");
  if (created == json.end() || !created->is_string())
    return std::unexpected("createdAt is required");
  if (auto when = Datetime::parse(created->get_ref<const std::string&>()); !when) {
    return std::unexpected("createdAt: " + when.error());
  }
  out.created_at = created->get<std::string>();
  // `root` exactly when the key is not self, naming a node of this repo.
  auto root = json.find("root");
  const bool has_root = root != json.end() && !root->is_null();
  if (rkey == kOutlineSelf) {
    if (has_root) return std::unexpected("the outline of the whole forest (self) has no root");
  } else {
    if (!has_root || !root->is_string()) return std::unexpected("root is required");
    auto uri = AtUri::parse(root->get_ref<const std::string&>());
    if (!uri || !uri->authority_is_did || uri->authority != did ||
        uri->collection != kNodeCollection || !uri->rkey) {
      return std::unexpected("root does not name a node of this repo");
    }
    out.root_rkey = *uri->rkey;
  }
  for (auto [name, into, max] : {std::tuple{"title", &out.title, kMaxOutlineTitleBytes},
                                 std::tuple{"description", &out.description, kMaxOutlineTextBytes},
                                 std::tuple{"imageAlt", &out.image_alt, kMaxOutlineTextBytes}}) {
    auto value = text_field(json, name, max);
    if (!value) return std::unexpected(value.error());
    *into = std::move(*value);
  }
  // The image: a blob ({$type: blob, ref: {$link}, mimeType, size}); one
  // that is not is left out, the rest kept.
  if (auto image = json.find("image"); image != json.end() && image->is_object()) {
    auto ref = image->find("ref");
    auto mime = image->find("mimeType");
    if (ref != image->end() && ref->is_object() && ref->contains("$link") &&
        (*ref)["$link"].is_string() &&
        (*ref)["$link"].get_ref<const std::string&>().size() <= 256 && mime != image->end() &&
        mime->is_string() && mime->get_ref<const std::string&>().size() <= 128) {
      out.image_cid = (*ref)["$link"].get<std::string>();
      out.image_mime = mime->get<std::string>();
    }
  }
  if (json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).size() >
      kMaxOutlineRecordBytes) {
    return std::unexpected("the record is over " + std::to_string(kMaxOutlineRecordBytes) +
                           " bytes");
  }
  out.record = json;
  return out;
}

namespace {

// A field that must be a string of at most `max` bytes of UTF-8.
std::optional<std::string> required_string(const nlohmann::json& json, const char* name,
                                           std::size_t max) {
  auto it = json.find(name);
  if (it == json.end() || !it->is_string()) return std::string(name) + " is required";
  const auto& value = it->get_ref<const std::string&>();
  if (value.size() > max || !is_valid_utf8(value)) {
    return std::string(name) + " is over " + std::to_string(max) + " bytes or not UTF-8";
  }
  return std::nullopt;
}

std::optional<std::string> at_uri_field(const nlohmann::json& json, const char* name,
                                        bool required) {
  auto it = json.find(name);
  if (it == json.end() || it->is_null()) {
    return required ? std::optional(std::string(name) + " is required") : std::nullopt;
  }
  if (!it->is_string()) return std::string(name) + " is not a string";
  if (auto uri = AtUri::parse(it->get_ref<const std::string&>()); !uri) {
    return std::string(name) + ": " + uri.error();
  }
  return std::nullopt;
}

}  // namespace

std::expected<nlohmann::json, std::string> parse_kept_record(std::string_view collection,
                                                             const nlohmann::json& json,
                                                             std::string_view did,
                                                             std::string_view rkey) {
  (void)did;
  if (!json.is_object()) return std::unexpected("a record is an object");
  if (auto type = json.find("$type");
      type != json.end() && (!type->is_string() || *type != collection)) {
    return std::unexpected("$type is not " + std::string(collection));
  }
  auto created = json.find("createdAt");
  if (created == json.end() || !created->is_string() ||
      !Datetime::parse(created->get_ref<const std::string&>())) {
    return std::unexpected("createdAt is required");
  }
  std::optional<std::string> problem;
  if (collection == kMirrorCollection) {
    problem = at_uri_field(json, "original", true);
    if (!problem) {
      auto original = AtUri::parse(json["original"].get_ref<const std::string&>());
      if (!original->authority_is_did || original->collection != kNodeCollection ||
          !original->rkey) {
        problem = "original does not name a node";
      }
    }
    if (!problem) problem = required_string(json, "sortKey", 4096);
    if (!problem) problem = at_uri_field(json, "parent", false);
  } else if (collection == kCommentCollection) {
    problem = at_uri_field(json, "subject", true);
    if (!problem) problem = required_string(json, "text", kMaxTextBytes);
  } else if (collection == kCommentPolicyCollection) {
    auto allow = json.find("allow");
    if (allow == json.end() || !allow->is_array()) problem = "allow is required";
    const bool has_root = json.contains("root") && !json["root"].is_null();
    if (!problem && (rkey == kOutlineSelf) == has_root) {
      problem = "root is present exactly when the key is not self";
    }
    if (!problem) problem = at_uri_field(json, "root", false);
  } else {
    problem = "not a collection the index keeps";
  }
  if (problem) return std::unexpected(*problem);
  if (json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).size() >
      kMaxOutlineRecordBytes) {
    return std::unexpected("the record is over " + std::to_string(kMaxOutlineRecordBytes) +
                           " bytes");
  }
  return json;
}

}  // namespace bulleted::schema
