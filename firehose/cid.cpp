#include "firehose/cid.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <array>

namespace bulleted::firehose {
namespace {

constexpr char kBase32[] = "abcdefghijklmnopqrstuvwxyz234567";

constexpr std::array<std::int8_t, 256> kBase32Values = [] {
  std::array<std::int8_t, 256> table{};
  table.fill(-1);
  for (int i = 0; i < 32; ++i)
    table[static_cast<unsigned char>(kBase32[i])] = static_cast<std::int8_t>(i);
  return table;
}();

Error corrupt(std::string message) { return Error{ErrorCode::kCorrupt, std::move(message)}; }

}  // namespace

Result<std::uint64_t> read_uvarint(std::string_view bytes, std::size_t& pos) {
  std::uint64_t value = 0;
  for (int i = 0; i < 9; ++i) {
    if (pos >= bytes.size()) return std::unexpected(corrupt("varint runs past the end"));
    const auto byte = static_cast<unsigned char>(bytes[pos++]);
    value |= static_cast<std::uint64_t>(byte & 0x7F) << (7 * i);
    if ((byte & 0x80) == 0) {
      if (byte == 0 && i > 0) return std::unexpected(corrupt("varint is not minimal"));
      return value;
    }
  }
  return std::unexpected(corrupt("varint longer than 9 bytes"));
}

void write_uvarint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

std::string sha256(std::string_view data) {
  // One digest context per thread, reused: EVP_Digest allocates one per call.
  struct Context {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    ~Context() { EVP_MD_CTX_free(ctx); }
  };
  thread_local Context context;
  // Fetched once: with EVP_sha256() every init looks the algorithm up again,
  // under the provider store's lock.
  static const struct Algorithm {
    EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    ~Algorithm() { EVP_MD_free(md); }
  } sha256_algorithm;
  std::array<unsigned char, 32> digest{};
  unsigned int length = 0;
  EVP_DigestInit_ex(context.ctx, sha256_algorithm.md, nullptr);
  EVP_DigestUpdate(context.ctx, data.data(), data.size());
  EVP_DigestFinal_ex(context.ctx, digest.data(), &length);
  return std::string(reinterpret_cast<const char*>(digest.data()), 32);
}

Result<Cid> Cid::read_prefix(std::string_view bytes, std::size_t& consumed) {
  // Nearly every CID's four varints are one byte each (version 1, codec,
  // hash, length): read them at once. A one-byte varint is always minimal.
  if (bytes.size() >= 4) {
    const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
    if (((b[0] | b[1] | b[2] | b[3]) & 0x80) == 0 && b[0] == 1 && b[3] <= 64 &&
        (b[2] != kHashSha256 || b[3] == 32) && bytes.size() - 4 >= b[3]) {
      Cid cid;
      cid.size_ = static_cast<std::uint8_t>(4 + b[3]);
      cid.digest_offset_ = 4;
      std::copy_n(bytes.data(), cid.size_, cid.data_.data());
      cid.codec_ = b[1];
      cid.hash_code_ = b[2];
      consumed = cid.size_;
      return cid;
    }
  }
  std::size_t pos = 0;
  auto version = read_uvarint(bytes, pos);
  if (!version) return std::unexpected(version.error());
  if (*version != 1) return std::unexpected(corrupt("only CIDv1 is accepted"));
  auto codec = read_uvarint(bytes, pos);
  if (!codec) return std::unexpected(codec.error());
  auto hash = read_uvarint(bytes, pos);
  if (!hash) return std::unexpected(hash.error());
  auto length = read_uvarint(bytes, pos);
  if (!length) return std::unexpected(length.error());
  if (*length > 64) return std::unexpected(corrupt("CID digest longer than 64 bytes"));
  if (*hash == kHashSha256 && *length != 32) {
    return std::unexpected(corrupt("a sha2-256 digest is 32 bytes"));
  }
  if (bytes.size() - pos < *length) return std::unexpected(corrupt("CID digest runs past the end"));
  Cid cid;
  cid.digest_offset_ = static_cast<std::uint8_t>(pos);
  pos += *length;
  if (pos > kMaxBytes) return std::unexpected(corrupt("CID longer than 96 bytes"));
  std::copy_n(bytes.data(), pos, cid.data_.data());
  cid.size_ = static_cast<std::uint8_t>(pos);
  cid.codec_ = *codec;
  cid.hash_code_ = *hash;
  consumed = pos;
  return cid;
}

Result<Cid> Cid::from_bytes(std::string_view bytes) {
  std::size_t consumed = 0;
  auto cid = read_prefix(bytes, consumed);
  if (!cid) return cid;
  if (consumed != bytes.size()) return std::unexpected(corrupt("bytes after the CID"));
  return cid;
}

Result<Cid> Cid::parse(std::string_view text) {
  if (text.size() < 2 || text[0] != 'b') {
    return std::unexpected(Error{ErrorCode::kInvalidRequest, "a CID string is 'b' + base32"});
  }
  std::string bytes;
  std::uint32_t buffer = 0;
  int bits = 0;
  for (char c : text.substr(1)) {
    const int v = kBase32Values[static_cast<unsigned char>(c)];
    if (v < 0)
      return std::unexpected(Error{ErrorCode::kInvalidRequest, "CID string is not base32"});
    buffer = (buffer << 5) | static_cast<std::uint32_t>(v);
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      bytes.push_back(static_cast<char>((buffer >> bits) & 0xFF));
    }
  }
  auto cid = from_bytes(bytes);
  if (!cid) return std::unexpected(Error{ErrorCode::kInvalidRequest, cid.error().message});
  return cid;
}

Cid Cid::of_dag_cbor(std::string_view block) {
  std::string bytes = {'\x01', '\x71', '\x12', '\x20'};
  bytes += sha256(block);
  return *from_bytes(bytes);
}

std::string Cid::str() const {
  const std::string_view in = bytes();
  // "b" (multibase base32, lower case, no padding), then 8 characters for
  // every 5 bytes and ceil(8 * rest / 5) for the rest.
  std::string out(1 + (in.size() * 8 + 4) / 5, 'b');
  std::size_t at = 1;
  std::size_t i = 0;
  for (; i + 5 <= in.size(); i += 5) {
    std::uint64_t group = 0;
    for (std::size_t k = 0; k < 5; ++k)
      group = (group << 8) | static_cast<unsigned char>(in[i + k]);
    for (int shift = 35; shift >= 0; shift -= 5) out[at++] = kBase32[(group >> shift) & 31];
  }
  std::uint32_t buffer = 0;
  int bits = 0;
  for (; i < in.size(); ++i) {
    buffer = (buffer << 8) | static_cast<unsigned char>(in[i]);
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out[at++] = kBase32[(buffer >> bits) & 31];
    }
  }
  if (bits > 0) out[at++] = kBase32[(buffer << (5 - bits)) & 31];
  return out;
}

bool Cid::matches(std::string_view block) const {
  return hash_code_ == kHashSha256 && digest() == sha256(block);
}

}  // namespace bulleted::firehose
