// DAG-CBOR, strictly: definite lengths, minimal integer and length headers,
// text-string map keys in canonical order (shorter first, then bytewise) with
// no duplicates, no floats, no undefined, tag 42 only (a CID behind a 0x00
// byte). Anything else is a kCorrupt error with a reason, never a crash.
//
// Values map to the AT Protocol's JSON form: CIDs as {"$link": "bafy..."},
// bytes as {"$bytes": "<base64, no padding>"}.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "firehose/cid.hpp"
#include "schema/error.hpp"

namespace bulleted::firehose {

struct DagBytes {
  std::string data;
  friend bool operator==(const DagBytes&, const DagBytes&) = default;
};

struct DagValue;
using DagArray = std::vector<DagValue>;
using DagMap = std::vector<std::pair<std::string, DagValue>>;  // canonical key order

struct DagValue {
  std::variant<std::nullptr_t, bool, std::int64_t, std::string, DagBytes, Cid, DagArray, DagMap>
      value;

  // Special members are defaulted below, once DagMap's element type is
  // complete (clang instantiates them at this class's closing brace).
  DagValue();
  template <class T>
  requires(!std::is_same_v<std::decay_t<T>, DagValue>) DagValue(T&& v)
      : value(std::forward<T>(v)) {}  // NOLINT: implicit, like the variant
  DagValue(const DagValue& other);
  DagValue(DagValue&& other) noexcept;
  DagValue& operator=(const DagValue& other);
  DagValue& operator=(DagValue&& other) noexcept;
  ~DagValue();

  bool is_null() const;
  const std::string* as_text() const;
  const std::int64_t* as_integer() const;
  const bool* as_bool() const;
  const Cid* as_cid() const;
  const DagBytes* as_bytes() const;
  const DagArray* as_array() const;
  const DagMap* as_map() const;
  // The value under `key` of a map, or nullptr (also when not a map).
  const DagValue* find(std::string_view key) const;
};

// Defined here, where DagValue (and so DagMap's element type) is complete.
inline DagValue::DagValue() : value(nullptr) {}
inline DagValue::DagValue(const DagValue& other) = default;
inline DagValue::DagValue(DagValue&& other) noexcept = default;
inline DagValue& DagValue::operator=(const DagValue& other) = default;
inline DagValue& DagValue::operator=(DagValue&& other) noexcept = default;
inline DagValue::~DagValue() = default;
inline bool DagValue::is_null() const { return std::holds_alternative<std::nullptr_t>(value); }
inline const std::string* DagValue::as_text() const { return std::get_if<std::string>(&value); }
inline const std::int64_t* DagValue::as_integer() const {
  return std::get_if<std::int64_t>(&value);
}
inline const bool* DagValue::as_bool() const { return std::get_if<bool>(&value); }
inline const Cid* DagValue::as_cid() const { return std::get_if<Cid>(&value); }
inline const DagBytes* DagValue::as_bytes() const { return std::get_if<DagBytes>(&value); }
inline const DagArray* DagValue::as_array() const { return std::get_if<DagArray>(&value); }
inline const DagMap* DagValue::as_map() const { return std::get_if<DagMap>(&value); }

struct DecodeLimits {
  std::size_t max_depth = 64;
};

// Decodes exactly one item filling `bytes`.
Result<DagValue> decode_dag_cbor(std::string_view bytes, const DecodeLimits& limits = {});
// Decodes the first item of `bytes`; `consumed` receives its length.
Result<DagValue> decode_dag_cbor_prefix(std::string_view bytes, std::size_t& consumed,
                                        const DecodeLimits& limits = {});

class CborReader;
struct CborItem;
// The value that begins with `first`, just read from `reader` (its items
// follow), inside `depth` open collections: for typed readers that meet a
// value they keep whole or only check, under the same rules.
Result<DagValue> read_dag_value(CborReader& reader, const CborItem& first, std::size_t depth,
                                const DecodeLimits& limits = {});

// Canonical DAG-CBOR bytes of `value` (map keys sorted, minimal headers).
std::string encode_dag_cbor(const DagValue& value);
// The same, appended to `out`; and one item's head (major type, argument)
// in its shortest form: for writers that know their keys' order already.
void append_dag_cbor(std::string& out, const DagValue& value);
void append_cbor_head(std::string& out, unsigned major, std::uint64_t argument);

// The JSON form of the data model.
nlohmann::json to_json(const DagValue& value);
// The data model from its JSON form: rejects floats that are not integers,
// malformed $link/$bytes objects, blobs with missing or mistyped fields, and
// $type values that are not non-empty strings.
Result<DagValue> from_json(const nlohmann::json& json);

}  // namespace bulleted::firehose
