#include "firehose/cbor_reader.hpp"

#include <cbor.h>

#include <limits>

#include "schema/node_record.hpp"

namespace bulleted::firehose {

// One CBOR header as libcbor reports it (a whole string for strings).
struct CborReader::Header {
  enum Type : std::uint8_t {
    kNone,
    kUnsigned,
    kNegative,
    kText,
    kBytes,
    kArray,
    kMap,
    kTag,
    kSimple
  };
  Type type = kNone;           // no callback ran
  std::uint64_t argument = 0;  // value, length, count or tag number
  const unsigned char* data = nullptr;
  const char* refusal = nullptr;
};

namespace {

using Header = CborReader::Header;

Header* as(void* self) { return static_cast<Header*>(self); }

void set(void* self, Header::Type type, std::uint64_t argument) {
  as(self)->type = type;
  as(self)->argument = argument;
}

void refuse(void* self, const char* reason) { as(self)->refusal = reason; }

// Built once: every header goes through the same table.
const cbor_callbacks kCallbacks = [] {
  cbor_callbacks c = cbor_empty_callbacks;
  c.uint8 = [](void* self, uint8_t v) { set(self, Header::kUnsigned, v); };
  c.uint16 = [](void* self, uint16_t v) { set(self, Header::kUnsigned, v); };
  c.uint32 = [](void* self, uint32_t v) { set(self, Header::kUnsigned, v); };
  c.uint64 = [](void* self, uint64_t v) { set(self, Header::kUnsigned, v); };
  c.negint8 = [](void* self, uint8_t v) { set(self, Header::kNegative, v); };
  c.negint16 = [](void* self, uint16_t v) { set(self, Header::kNegative, v); };
  c.negint32 = [](void* self, uint32_t v) { set(self, Header::kNegative, v); };
  c.negint64 = [](void* self, uint64_t v) { set(self, Header::kNegative, v); };
  c.string = [](void* self, cbor_data data, size_t length) {
    set(self, Header::kText, length);
    as(self)->data = data;
  };
  c.byte_string = [](void* self, cbor_data data, size_t length) {
    set(self, Header::kBytes, length);
    as(self)->data = data;
  };
  c.array_start = [](void* self, size_t size) { set(self, Header::kArray, size); };
  c.map_start = [](void* self, size_t size) { set(self, Header::kMap, size); };
  c.tag = [](void* self, uint64_t tag) { set(self, Header::kTag, tag); };
  // Simple values: argument 0 null, 1 false, 2 true (the header is one byte).
  c.null = [](void* self) { set(self, Header::kSimple, 0); };
  c.boolean = [](void* self, bool v) { set(self, Header::kSimple, v ? 2 : 1); };
  c.string_start = [](void* self) { refuse(self, "indefinite-length text"); };
  c.byte_string_start = [](void* self) { refuse(self, "indefinite-length bytes"); };
  c.indef_array_start = [](void* self) { refuse(self, "indefinite-length array"); };
  c.indef_map_start = [](void* self) { refuse(self, "indefinite-length map"); };
  c.indef_break = [](void* self) { refuse(self, "break outside a container"); };
  c.float2 = [](void* self, float) { refuse(self, "floats are not allowed"); };
  c.float4 = [](void* self, float) { refuse(self, "floats are not allowed"); };
  c.float8 = [](void* self, double) { refuse(self, "floats are not allowed"); };
  c.undefined = [](void* self) { refuse(self, "undefined is not allowed"); };
  return c;
}();

// Bytes a minimal CBOR header takes for an argument of `value`.
std::size_t minimal_header(std::uint64_t value) {
  if (value < 24) return 1;
  if (value <= 0xFF) return 2;
  if (value <= 0xFFFF) return 3;
  if (value <= 0xFFFFFFFFULL) return 5;
  return 9;
}

constexpr auto kInt64Max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());

}  // namespace

bool CborReader::fail(std::string_view reason) {
  error_.message = std::string(reason) + " at byte " + std::to_string(start_);
  return false;
}

bool CborReader::fail_truncated() {
  error_.message = "truncated: input ends inside an item";
  return false;
}

bool CborReader::fail_malformed() {
  error_.message = "malformed CBOR at byte " + std::to_string(pos_);
  return false;
}

bool CborReader::read_header(Header& header) {
  if (pos_ >= input_.size()) return fail_truncated();
  start_ = pos_;
  const cbor_decoder_result result =
      cbor_stream_decode(reinterpret_cast<cbor_data>(input_.data() + pos_), input_.size() - pos_,
                         &kCallbacks, &header);
  if (result.status == CBOR_DECODER_NEDATA) {
    return fail_truncated();
  }
  if (result.status != CBOR_DECODER_FINISHED || result.read == 0) {
    return fail_malformed();
  }
  pos_ += result.read;
  if (header.refusal != nullptr) return fail(header.refusal);
  if (header.type == Header::kNone) return fail("malformed CBOR");
  const bool payload = header.type == Header::kText || header.type == Header::kBytes;
  const std::size_t expected = header.type == Header::kSimple ? 1
                                                              : minimal_header(header.argument) +
                                                                    (payload ? header.argument : 0);
  if (result.read != expected) return fail("non-minimal header");
  return true;
}

bool CborReader::next(CborItem& item) {
  Header header;
  if (!read_header(header)) return false;
  switch (header.type) {
    case Header::kUnsigned:
      if (header.argument > kInt64Max) return fail("integer above the signed 64-bit range");
      item.kind = CborKind::kInteger;
      item.integer = static_cast<std::int64_t>(header.argument);
      return true;
    case Header::kNegative:
      if (header.argument > kInt64Max) return fail("integer below the signed 64-bit range");
      item.kind = CborKind::kInteger;
      item.integer = -1 - static_cast<std::int64_t>(header.argument);
      return true;
    case Header::kText:
      item.kind = CborKind::kText;
      item.data = std::string_view(reinterpret_cast<const char*>(header.data), header.argument);
      if (!schema::is_valid_utf8(item.data)) return fail("text is not valid UTF-8");
      return true;
    case Header::kBytes:
      item.kind = CborKind::kBytes;
      item.data = std::string_view(reinterpret_cast<const char*>(header.data), header.argument);
      return true;
    case Header::kArray:
    case Header::kMap: {
      // Every entry takes at least one byte: a larger count is a lie, and
      // must not size anything.
      const bool is_map = header.type == Header::kMap;
      const std::size_t available = input_.size() - start_;
      if (header.argument > available || (is_map && header.argument * 2 > available)) {
        return fail("collection longer than the input");
      }
      item.kind = is_map ? CborKind::kMap : CborKind::kArray;
      item.size = header.argument;
      return true;
    }
    case Header::kTag: {
      if (header.argument != 42) return fail("only tag 42 (CID) is allowed");
      Header value;
      if (!read_header(value)) return false;
      if (value.type == Header::kTag) {
        return fail(value.argument != 42 ? "only tag 42 (CID) is allowed" : "a tag inside a tag");
      }
      if (value.type != Header::kBytes) return fail("tag 42 must hold bytes");
      const std::string_view bytes(reinterpret_cast<const char*>(value.data), value.argument);
      if (bytes.empty() || bytes[0] != '\0') return fail("a CID link starts with a 0x00 byte");
      auto cid = Cid::from_bytes(bytes.substr(1));
      if (!cid) return fail("tag 42 holds no valid CID");
      link_ = *cid;
      item.kind = CborKind::kLink;
      item.data = bytes.substr(1);
      return true;
    }
    case Header::kSimple:
      item.kind = header.argument == 0 ? CborKind::kNull : CborKind::kBool;
      item.integer = header.argument == 2 ? 1 : 0;
      return true;
    case Header::kNone:
      break;
  }
  return fail("unknown header");
}

bool read_map_key(CborReader& reader, const std::string_view* previous, std::string_view& key) {
  CborItem item;
  if (!reader.next(item)) return false;
  if (item.kind != CborKind::kText) return reader.fail("map keys must be text");
  if (previous != nullptr) {
    if (item.data == *previous) return reader.fail("duplicate map key");
    if (!canonical_key_less(*previous, item.data)) {
      return reader.fail("map keys out of canonical order");
    }
  }
  key = item.data;
  return true;
}

bool read_map_entry(CborReader& reader, std::size_t index, std::string_view& previous,
                    std::string_view& key, CborItem& value) {
  if (!read_map_key(reader, index == 0 ? nullptr : &previous, key)) return false;
  previous = key;
  return reader.next(value);
}

}  // namespace bulleted::firehose
