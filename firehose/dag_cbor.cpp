#include "firehose/dag_cbor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "firehose/cbor_reader.hpp"
#include "schema/base64.hpp"

namespace bulleted::firehose {
namespace {

Error corrupt(std::string message) { return Error{ErrorCode::kCorrupt, std::move(message)}; }

// The data model's rules for a map, whichever representation it came from:
// $type, when present, is a non-empty string; a blob ($type "blob") has a CID
// ref, a text mimeType and an integer size. `from_cbor`: the keys the JSON
// form reserves ($link, $bytes) cannot be plain keys, or the map would not
// survive the trip through JSON.
std::optional<std::string> map_problem(const DagMap& map, bool from_cbor) {
  const DagValue* type = nullptr;
  const DagValue* ref = nullptr;
  const DagValue* mime = nullptr;
  const DagValue* size = nullptr;
  for (const auto& [key, value] : map) {
    if (key.empty() || key[0] != '$') {
      if (key == "ref") ref = &value;
      if (key == "mimeType") mime = &value;
      if (key == "size") size = &value;
      continue;
    }
    if (key == "$type") type = &value;
    if (from_cbor && (key == "$link" || key == "$bytes")) {
      return "map key " + key + " is reserved by the data model";
    }
  }
  if (type == nullptr) return std::nullopt;
  if (type->as_text() == nullptr || type->as_text()->empty()) {
    return "$type must be a non-empty string";
  }
  if (*type->as_text() != "blob") return std::nullopt;
  if (ref == nullptr || ref->as_cid() == nullptr || mime == nullptr || mime->as_text() == nullptr ||
      size == nullptr || size->as_integer() == nullptr) {
    return "a blob needs ref ($link), mimeType and an integer size";
  }
  return std::nullopt;
}

// The generic decoder's step: the value whose first item is `item`, read
// into `out`. False, with the reader's error, on anything not allowed.
bool read_value(CborReader& reader, const CborItem& item, std::size_t depth,
                const DecodeLimits& limits, DagValue& out) {
  switch (item.kind) {
    case CborKind::kInteger:
      out.value = item.integer;
      return true;
    case CborKind::kText:
      out.value = std::string(item.data);
      return true;
    case CborKind::kBytes:
      out.value = DagBytes{std::string(item.data)};
      return true;
    case CborKind::kLink:
      out.value = reader.link();
      return true;
    case CborKind::kNull:
      out.value = nullptr;
      return true;
    case CborKind::kBool:
      out.value = item.integer != 0;
      return true;
    case CborKind::kArray: {
      if (depth >= limits.max_depth) return reader.fail("nested too deeply");
      DagArray array;
      // The count is checked against the input; cap the reservation anyway.
      array.reserve(std::min<std::size_t>(item.size, 256));
      CborItem child;
      for (std::size_t i = 0; i < item.size; ++i) {
        if (!reader.next(child)) return false;
        if (!read_value(reader, child, depth + 1, limits, array.emplace_back())) return false;
      }
      out.value = std::move(array);
      return true;
    }
    case CborKind::kMap: {
      if (depth >= limits.max_depth) return reader.fail("nested too deeply");
      DagMap map;
      map.reserve(std::min<std::size_t>(item.size, 256));
      CborItem child;
      for (std::size_t i = 0; i < item.size; ++i) {
        std::string_view key;
        const std::string_view previous = map.empty() ? std::string_view() : map.back().first;
        if (!read_map_key(reader, map.empty() ? nullptr : &previous, key)) return false;
        auto& entry = map.emplace_back(std::string(key), DagValue{});
        if (!reader.next(child)) return false;
        if (!read_value(reader, child, depth + 1, limits, entry.second)) return false;
      }
      if (auto problem = map_problem(map, true)) return reader.fail(*problem);
      out.value = std::move(map);
      return true;
    }
  }
  return reader.fail("unknown item");
}

void write_header(std::string& out, unsigned major, std::uint64_t argument) {
  const auto type = static_cast<char>(major << 5);
  if (argument < 24) {
    out.push_back(static_cast<char>(type | static_cast<char>(argument)));
  } else if (argument <= 0xFF) {
    out.push_back(static_cast<char>(type | 24));
    out.push_back(static_cast<char>(argument));
  } else if (argument <= 0xFFFF) {
    out.push_back(static_cast<char>(type | 25));
    for (int shift = 8; shift >= 0; shift -= 8) out.push_back(static_cast<char>(argument >> shift));
  } else if (argument <= 0xFFFFFFFFULL) {
    out.push_back(static_cast<char>(type | 26));
    for (int shift = 24; shift >= 0; shift -= 8)
      out.push_back(static_cast<char>(argument >> shift));
  } else {
    out.push_back(static_cast<char>(type | 27));
    for (int shift = 56; shift >= 0; shift -= 8)
      out.push_back(static_cast<char>(argument >> shift));
  }
}

void encode_into(std::string& out, const DagValue& value) {
  std::visit(
      [&out](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::nullptr_t>) {
          out.push_back(static_cast<char>(0xF6));
        } else if constexpr (std::is_same_v<T, bool>) {
          out.push_back(static_cast<char>(v ? 0xF5 : 0xF4));
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          if (v >= 0) {
            write_header(out, 0, static_cast<std::uint64_t>(v));
          } else {
            write_header(out, 1, static_cast<std::uint64_t>(-(v + 1)));
          }
        } else if constexpr (std::is_same_v<T, std::string>) {
          write_header(out, 3, v.size());
          out += v;
        } else if constexpr (std::is_same_v<T, DagBytes>) {
          write_header(out, 2, v.data.size());
          out += v.data;
        } else if constexpr (std::is_same_v<T, Cid>) {
          write_header(out, 6, 42);
          write_header(out, 2, v.bytes().size() + 1);
          out.push_back('\0');
          out += v.bytes();
        } else if constexpr (std::is_same_v<T, DagArray>) {
          write_header(out, 4, v.size());
          for (const auto& item : v) encode_into(out, item);
        } else {
          std::vector<const std::pair<std::string, DagValue>*> sorted;
          for (const auto& entry : v) sorted.push_back(&entry);
          std::sort(sorted.begin(), sorted.end(),
                    [](auto* a, auto* b) { return canonical_key_less(a->first, b->first); });
          write_header(out, 5, v.size());
          for (const auto* entry : sorted) {
            write_header(out, 3, entry->first.size());
            out += entry->first;
            encode_into(out, entry->second);
          }
        }
      },
      value.value);
}

Error invalid(std::string message) { return Error{ErrorCode::kInvalidRequest, std::move(message)}; }

}  // namespace

const DagValue* DagValue::find(std::string_view key) const {
  const DagMap* map = as_map();
  if (map == nullptr) return nullptr;
  for (const auto& [k, v] : *map) {
    if (k == key) return &v;
  }
  return nullptr;
}

Result<DagValue> read_dag_value(CborReader& reader, const CborItem& first, std::size_t depth,
                                const DecodeLimits& limits) {
  DagValue value;
  if (!read_value(reader, first, depth, limits, value)) return std::unexpected(reader.error());
  return value;
}

Result<DagValue> decode_dag_cbor_prefix(std::string_view bytes, std::size_t& consumed,
                                        const DecodeLimits& limits) {
  if (bytes.empty()) return std::unexpected(corrupt("empty input"));
  CborReader reader(bytes);
  CborItem first;
  if (!reader.next(first)) return std::unexpected(reader.error());
  auto value = read_dag_value(reader, first, 0, limits);
  if (value) consumed = reader.pos();
  return value;
}

Result<DagValue> decode_dag_cbor(std::string_view bytes, const DecodeLimits& limits) {
  std::size_t consumed = 0;
  auto value = decode_dag_cbor_prefix(bytes, consumed, limits);
  if (!value) return value;
  if (consumed != bytes.size()) {
    return std::unexpected(
        corrupt(std::to_string(bytes.size() - consumed) + " bytes after the item"));
  }
  return value;
}

std::string encode_dag_cbor(const DagValue& value) {
  std::string out;
  encode_into(out, value);
  return out;
}

void append_dag_cbor(std::string& out, const DagValue& value) { encode_into(out, value); }

void append_cbor_head(std::string& out, unsigned major, std::uint64_t argument) {
  write_header(out, major, argument);
}

nlohmann::json to_json(const DagValue& value) {
  return std::visit(
      [](const auto& v) -> nlohmann::json {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::nullptr_t>) {
          return nullptr;
        } else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::int64_t> ||
                             std::is_same_v<T, std::string>) {
          return v;
        } else if constexpr (std::is_same_v<T, DagBytes>) {
          return {
              {"$bytes", schema::base64_encode(v.data, schema::Base64Alphabet::kStandard, false)}};
        } else if constexpr (std::is_same_v<T, Cid>) {
          return {{"$link", v.str()}};
        } else if constexpr (std::is_same_v<T, DagArray>) {
          nlohmann::json out = nlohmann::json::array();
          for (const auto& item : v) out.push_back(to_json(item));
          return out;
        } else {
          nlohmann::json out = nlohmann::json::object();
          for (const auto& [key, item] : v) out[key] = to_json(item);
          return out;
        }
      },
      value.value);
}

namespace {

Result<DagValue> from_json_value(const nlohmann::json& json, int depth) {
  if (depth > 64) return std::unexpected(invalid("nested too deeply"));
  switch (json.type()) {
    case nlohmann::json::value_t::null:
      return DagValue{nullptr};
    case nlohmann::json::value_t::boolean:
      return DagValue{json.get<bool>()};
    case nlohmann::json::value_t::number_integer:
      return DagValue{json.get<std::int64_t>()};
    case nlohmann::json::value_t::number_unsigned: {
      const auto v = json.get<std::uint64_t>();
      if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return std::unexpected(invalid("integer above the signed 64-bit range"));
      }
      return DagValue{static_cast<std::int64_t>(v)};
    }
    case nlohmann::json::value_t::number_float: {
      const double d = json.get<double>();
      if (std::trunc(d) != d || std::abs(d) > 9007199254740991.0) {
        return std::unexpected(invalid("floats are not allowed"));
      }
      return DagValue{static_cast<std::int64_t>(d)};
    }
    case nlohmann::json::value_t::string:
      return DagValue{json.get<std::string>()};
    case nlohmann::json::value_t::array: {
      DagArray array;
      for (const auto& item : json) {
        auto value = from_json_value(item, depth + 1);
        if (!value) return value;
        array.push_back(std::move(*value));
      }
      return DagValue{std::move(array)};
    }
    case nlohmann::json::value_t::object: {
      if (json.contains("$link")) {
        if (json.size() != 1 || !json["$link"].is_string()) {
          return std::unexpected(invalid("$link is an object with one string"));
        }
        auto cid = Cid::parse(json["$link"].get<std::string>());
        if (!cid) return std::unexpected(invalid("$link: " + cid.error().message));
        return DagValue{std::move(*cid)};
      }
      if (json.contains("$bytes")) {
        if (json.size() != 1 || !json["$bytes"].is_string()) {
          return std::unexpected(invalid("$bytes is an object with one string"));
        }
        auto bytes = schema::base64_decode(json["$bytes"].get<std::string>(),
                                           schema::Base64Alphabet::kStandard);
        if (!bytes) return std::unexpected(invalid("$bytes is not base64"));
        return DagValue{DagBytes{std::move(*bytes)}};
      }
      DagMap map;
      for (const auto& [key, item] : json.items()) {
        auto value = from_json_value(item, depth + 1);
        if (!value) return value;
        map.emplace_back(key, std::move(*value));
      }
      std::sort(map.begin(), map.end(),
                [](const auto& a, const auto& b) { return canonical_key_less(a.first, b.first); });
      if (auto problem = map_problem(map, false)) return std::unexpected(invalid(*problem));
      return DagValue{std::move(map)};
    }
    default:
      return std::unexpected(invalid("unsupported JSON value"));
  }
}

}  // namespace

Result<DagValue> from_json(const nlohmann::json& json) {
  if (!json.is_object()) return std::unexpected(invalid("the top level must be an object"));
  return from_json_value(json, 0);
}

}  // namespace bulleted::firehose
