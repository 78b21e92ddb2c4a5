// Content identifiers (CIDv1): binary form as carried in DAG-CBOR tag 42 and
// CAR sections, and the base32 string form ("bafy...") of the JSON data
// model. Varints are parsed, never assumed: a CID is whatever its header says.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "schema/error.hpp"

namespace bulleted::firehose {

inline constexpr std::uint64_t kCodecDagCbor = 0x71;
inline constexpr std::uint64_t kCodecRaw = 0x55;
inline constexpr std::uint64_t kHashSha256 = 0x12;

// Unsigned LEB128. Returns the value and advances `pos`; refuses more than
// 9 bytes, non-minimal encodings and reads past the end.
Result<std::uint64_t> read_uvarint(std::string_view bytes, std::size_t& pos);
void write_uvarint(std::string& out, std::uint64_t value);

class Cid {
 public:
  // Exactly one CID filling `bytes`.
  static Result<Cid> from_bytes(std::string_view bytes);
  // One CID at the start of `bytes`; `consumed` receives its length.
  static Result<Cid> read_prefix(std::string_view bytes, std::size_t& consumed);
  // "b" + base32 lower-case.
  static Result<Cid> parse(std::string_view text);
  // CIDv1, dag-cbor, sha2-256 of `block`.
  static Cid of_dag_cbor(std::string_view block);

  // CIDs are small and decoded by the thousand: kept inline, never on the heap.
  static constexpr std::size_t kMaxBytes = 96;

  std::string_view bytes() const { return std::string_view(data_.data(), size_); }
  std::string str() const;
  std::uint64_t codec() const { return codec_; }
  std::uint64_t hash_code() const { return hash_code_; }
  std::string_view digest() const { return bytes().substr(digest_offset_); }
  // True when the digest is sha2-256 of `block`.
  bool matches(std::string_view block) const;

  friend bool operator==(const Cid& a, const Cid& b) { return a.bytes() == b.bytes(); }

 private:
  std::array<char, kMaxBytes> data_{};
  std::uint8_t size_ = 0;
  std::uint8_t digest_offset_ = 0;
  std::uint64_t codec_ = 0;
  std::uint64_t hash_code_ = 0;
};

std::string sha256(std::string_view data);

}  // namespace bulleted::firehose
