#include "firehose/dag_cbor.hpp"

#include <cbor.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "schema/base64.hpp"
#include "schema/node_record.hpp"

namespace bulleted::firehose {
namespace {

Error corrupt(std::string message) { return Error{ErrorCode::kCorrupt, std::move(message)}; }

// Bytes a minimal CBOR header takes for an argument of `value`.
std::size_t minimal_header(std::uint64_t value) {
  if (value < 24) return 1;
  if (value <= 0xFF) return 2;
  if (value <= 0xFFFF) return 3;
  if (value <= 0xFFFFFFFFULL) return 5;
  return 9;
}

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

// Builds values from libcbor's streaming callbacks. Each call to
// cbor_stream_decode reports one header (a whole string for strings); the
// builder keeps the open arrays and maps on a stack.
class Builder {
 public:
  Builder(std::string_view input, const DecodeLimits& limits) : input_(input), limits_(limits) {}

  Result<DagValue> run(std::size_t& consumed) {
    cbor_callbacks callbacks = cbor_empty_callbacks;
    callbacks.uint8 = [](void* self, uint8_t v) { as(self)->unsigned_int(v); };
    callbacks.uint16 = [](void* self, uint16_t v) { as(self)->unsigned_int(v); };
    callbacks.uint32 = [](void* self, uint32_t v) { as(self)->unsigned_int(v); };
    callbacks.uint64 = [](void* self, uint64_t v) { as(self)->unsigned_int(v); };
    callbacks.negint8 = [](void* self, uint8_t v) { as(self)->negative_int(v); };
    callbacks.negint16 = [](void* self, uint16_t v) { as(self)->negative_int(v); };
    callbacks.negint32 = [](void* self, uint32_t v) { as(self)->negative_int(v); };
    callbacks.negint64 = [](void* self, uint64_t v) { as(self)->negative_int(v); };
    callbacks.string = [](void* self, cbor_data data, size_t length) {
      as(self)->text(data, length);
    };
    callbacks.byte_string = [](void* self, cbor_data data, size_t length) {
      as(self)->bytes(data, length);
    };
    callbacks.array_start = [](void* self, size_t size) { as(self)->open(size, false); };
    callbacks.map_start = [](void* self, size_t size) { as(self)->open(size, true); };
    callbacks.tag = [](void* self, uint64_t tag) { as(self)->tag(tag); };
    callbacks.null = [](void* self) { as(self)->simple(DagValue{nullptr}); };
    callbacks.boolean = [](void* self, bool v) { as(self)->simple(DagValue{v}); };
    callbacks.string_start = [](void* self) { as(self)->refuse("indefinite-length text"); };
    callbacks.byte_string_start = [](void* self) { as(self)->refuse("indefinite-length bytes"); };
    callbacks.indef_array_start = [](void* self) { as(self)->refuse("indefinite-length array"); };
    callbacks.indef_map_start = [](void* self) { as(self)->refuse("indefinite-length map"); };
    callbacks.indef_break = [](void* self) { as(self)->refuse("break outside a container"); };
    callbacks.float2 = [](void* self, float) { as(self)->refuse("floats are not allowed"); };
    callbacks.float4 = [](void* self, float) { as(self)->refuse("floats are not allowed"); };
    callbacks.float8 = [](void* self, double) { as(self)->refuse("floats are not allowed"); };
    callbacks.undefined = [](void* self) { as(self)->refuse("undefined is not allowed"); };

    while (!done_) {
      if (pos_ >= input_.size())
        return std::unexpected(corrupt("truncated: input ends inside an item"));
      const auto* data = reinterpret_cast<cbor_data>(input_.data() + pos_);
      header_start_ = pos_;
      const cbor_decoder_result result =
          cbor_stream_decode(data, input_.size() - pos_, &callbacks, this);
      if (result.status == CBOR_DECODER_NEDATA) {
        return std::unexpected(corrupt("truncated: input ends inside an item"));
      }
      if (result.status != CBOR_DECODER_FINISHED || result.read == 0) {
        return std::unexpected(corrupt("malformed CBOR at byte " + std::to_string(pos_)));
      }
      read_ = result.read;
      pos_ += result.read;
      if (error_)
        return std::unexpected(corrupt(*error_ + " at byte " + std::to_string(header_start_)));
      if (pending_check_) {
        // Header minimality, known only once `read` is.
        if (read_ != *pending_check_) {
          return std::unexpected(
              corrupt("non-minimal header at byte " + std::to_string(header_start_)));
        }
        pending_check_.reset();
      }
      if (error_) return std::unexpected(corrupt(*error_));
    }
    if (tag_pending_) return std::unexpected(corrupt("tag 42 without a value"));
    consumed = pos_;
    return std::move(result_);
  }

 private:
  struct Open {
    bool is_map;
    std::size_t remaining;  // values (arrays) or keys + values (maps) still expected
    DagArray array;
    DagMap map;
    std::optional<std::string> key;
  };

  static Builder* as(void* self) { return static_cast<Builder*>(self); }

  void refuse(const char* reason) {
    if (!error_) error_ = reason;
  }

  void expect_header(std::uint64_t argument, std::size_t payload = 0) {
    pending_check_ = minimal_header(argument) + payload;
  }

  void unsigned_int(std::uint64_t v) {
    expect_header(v);
    if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return refuse("integer above the signed 64-bit range");
    }
    finish(DagValue{static_cast<std::int64_t>(v)});
  }

  void negative_int(std::uint64_t v) {
    expect_header(v);
    if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return refuse("integer below the signed 64-bit range");
    }
    finish(DagValue{-1 - static_cast<std::int64_t>(v)});
  }

  void text(cbor_data data, std::size_t length) {
    expect_header(length, length);
    std::string value(reinterpret_cast<const char*>(data), length);
    if (!schema::is_valid_utf8(value)) return refuse("text is not valid UTF-8");
    finish(DagValue{std::move(value)});
  }

  void bytes(cbor_data data, std::size_t length) {
    expect_header(length, length);
    std::string value(reinterpret_cast<const char*>(data), length);
    if (tag_pending_) {
      tag_pending_ = false;
      if (value.empty() || value[0] != '\0') return refuse("a CID link starts with a 0x00 byte");
      auto cid = Cid::from_bytes(std::string_view(value).substr(1));
      if (!cid) return refuse("tag 42 holds no valid CID");
      return finish(DagValue{std::move(*cid)});
    }
    finish(DagValue{DagBytes{std::move(value)}});
  }

  void tag(std::uint64_t tag) {
    expect_header(tag);
    if (tag != 42) return refuse("only tag 42 (CID) is allowed");
    if (tag_pending_) return refuse("a tag inside a tag");
    tag_pending_ = true;
  }

  void simple(DagValue value) {
    pending_check_ = 1;
    finish(std::move(value));
  }

  void open(std::size_t size, bool is_map) {
    expect_header(size);
    if (tag_pending_) return refuse("tag 42 must hold bytes");
    if (stack_.size() >= limits_.max_depth) return refuse("nested too deeply");
    // Every entry takes at least one byte: a larger count is a lie, and must
    // not size anything.
    const std::size_t available = input_.size() - header_start_;
    if (size > available || (is_map && size * 2 > available)) {
      return refuse("collection longer than the input");
    }
    const std::size_t entries = is_map ? size * 2 : size;
    stack_.push_back(Open{is_map, entries, {}, {}, std::nullopt});
    // The declared size is checked against the input above; cap it anyway.
    if (is_map) {
      stack_.back().map.reserve(std::min<std::size_t>(size, 256));
    } else {
      stack_.back().array.reserve(std::min<std::size_t>(size, 256));
    }
    if (entries == 0) close_finished();
  }

  // A complete value: attach it to the open container, or make it the result.
  void finish(DagValue value) {
    if (error_) return;
    if (tag_pending_) return refuse("tag 42 must hold bytes");
    if (stack_.empty()) {
      result_ = std::move(value);
      done_ = true;
      return;
    }
    Open& top = stack_.back();
    if (top.is_map && !top.key) {
      const std::string* key = value.as_text();
      if (key == nullptr) return refuse("map keys must be text");
      if (!top.map.empty()) {
        const std::string& previous = top.map.back().first;
        if (*key == previous) return refuse("duplicate map key");
        if (!canonical_key_less(previous, *key)) return refuse("map keys out of canonical order");
      }
      top.key = *key;
    } else if (top.is_map) {
      top.map.emplace_back(std::move(*top.key), std::move(value));
      top.key.reset();
    } else {
      top.array.push_back(std::move(value));
    }
    --top.remaining;
    close_finished();
  }

  void close_finished() {
    while (!stack_.empty() && stack_.back().remaining == 0) {
      Open done = std::move(stack_.back());
      stack_.pop_back();
      if (done.is_map) {
        if (auto problem = map_problem(done.map, true)) return refuse(problem->c_str());
      }
      DagValue value =
          done.is_map ? DagValue{std::move(done.map)} : DagValue{std::move(done.array)};
      if (stack_.empty()) {
        result_ = std::move(value);
        done_ = true;
        return;
      }
      finish(std::move(value));
      return;  // finish() closes further levels itself
    }
  }

  std::string_view input_;
  DecodeLimits limits_;
  std::size_t pos_ = 0;
  std::size_t header_start_ = 0;
  std::size_t read_ = 0;
  std::optional<std::size_t> pending_check_;
  std::optional<std::string> error_;
  bool tag_pending_ = false;
  bool done_ = false;
  std::vector<Open> stack_;
  DagValue result_{nullptr};
};

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

bool canonical_key_less(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

const DagValue* DagValue::find(std::string_view key) const {
  const DagMap* map = as_map();
  if (map == nullptr) return nullptr;
  for (const auto& [k, v] : *map) {
    if (k == key) return &v;
  }
  return nullptr;
}

Result<DagValue> decode_dag_cbor_prefix(std::string_view bytes, std::size_t& consumed,
                                        const DecodeLimits& limits) {
  if (bytes.empty()) return std::unexpected(corrupt("empty input"));
  Builder builder(bytes, limits);
  return builder.run(consumed);
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
