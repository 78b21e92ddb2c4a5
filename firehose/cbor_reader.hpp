// DAG-CBOR one item at a time, strictly, read with libcbor's streaming
// decoder: the item-level rules of dag_cbor.hpp (definite lengths, minimal
// headers, no floats or undefined, integers in the signed 64-bit range,
// UTF-8 text, tag 42 holding a CID behind a 0x00 byte, collections no longer
// than the input). What a map's keys must be, and how deep collections nest,
// is the caller's part: the generic decoder (dag_cbor.cpp) and the typed
// readers of frames and records share this reader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "firehose/cid.hpp"
#include "schema/error.hpp"

namespace bulleted::firehose {

// Canonical DAG-CBOR map-key order: shorter first, then bytewise.
inline bool canonical_key_less(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

enum class CborKind : std::uint8_t { kInteger, kText, kBytes, kLink, kArray, kMap, kNull, kBool };

struct CborItem {
  CborKind kind = CborKind::kNull;
  std::int64_t integer = 0;  // kInteger; kBool: 0 or 1
  std::size_t size = 0;      // kArray: items; kMap: entries (key + value pairs)
  std::string_view data;     // kText, kBytes: the payload, a view into the input
};

class CborReader {
 public:
  explicit CborReader(std::string_view input) : input_(input) {}

  // Reads the next item: a whole scalar, or a collection's header (its items
  // follow). False, with error(), when the bytes break a rule.
  bool next(CborItem& item);

  // The CID of the last kLink item.
  const Cid& link() const { return link_; }
  // Offset of the next item; at_end() when the input is used up.
  std::size_t pos() const { return pos_; }
  bool at_end() const { return pos_ == input_.size(); }
  std::string_view input() const { return input_; }

  // Records `reason` as the error, placed at the last item read; returns false.
  [[gnu::cold, gnu::noinline]] bool fail(std::string_view reason);
  // The error of the last failed call: kCorrupt with a reason.
  const Error& error() const { return error_; }

  struct Header;  // one header as libcbor reports it (cbor_reader.cpp)

 private:
  bool read_header(Header& header);
  [[gnu::cold, gnu::noinline]] bool fail_truncated();
  [[gnu::cold, gnu::noinline]] bool fail_malformed();

  std::string_view input_;
  std::size_t pos_ = 0;
  std::size_t start_ = 0;  // where the last item began
  Cid link_;
  Error error_{ErrorCode::kCorrupt, {}};
};

// `text == literal`, written so that the compiler compares a few words
// inline (the typed readers dispatch on every key they read).
template <std::size_t N>
inline bool text_is(std::string_view text, const char (&literal)[N]) {
  return text.size() == N - 1 && std::memcmp(text.data(), literal, N - 1) == 0;
}

// Reads a map's next key: text, after `previous` (nullptr for the first key)
// in canonical order (shorter first, then bytewise) and not equal to it.
bool read_map_key(CborReader& reader, const std::string_view* previous, std::string_view& key);

// Reads entry `index` of a map: its key (checked against `previous`, which
// it then replaces) and the first item of its value.
bool read_map_entry(CborReader& reader, std::size_t index, std::string_view& previous,
                    std::string_view& key, CborItem& value);

}  // namespace bulleted::firehose
