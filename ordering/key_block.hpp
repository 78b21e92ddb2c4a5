// Short keys as one 16-byte block (internal to ordering/).
//
// Nearly every order key is at most 16 bytes long. Read into one zero-padded
// block, such a key is checked and compared with a few word operations where
// a loop over its bytes would spend more on branches than on the work. The
// byte-by-byte forms remain for longer keys and for a key checked alone
// (appends, where successive keys share a length and the loop predicts
// well); tests hold the two to the same answers.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace bulleted::ordering::detail {

// Everything here is forced inline: as calls, the blocks would pass through
// memory between two narrower stores and a wider load, which stalls (and
// whether the compiler inlines them on its own depends on the caller's
// size).

inline constexpr std::size_t kBlockBytes = 16;

// A key's bytes 0-7 in `lo` and 8-15 in `hi`, byte i at bits 8*(i%8); bytes
// past the key are zero (a byte no key contains).
struct Block {
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
};

[[gnu::always_inline]] inline std::uint64_t load_le64(const char* p) {
  std::uint64_t word;
  std::memcpy(&word, p, sizeof word);
  if constexpr (std::endian::native == std::endian::big) word = std::byteswap(word);
  return word;
}

[[gnu::always_inline]] inline std::uint32_t load_le32(const char* p) {
  std::uint32_t word;
  std::memcpy(&word, p, sizeof word);
  if constexpr (std::endian::native == std::endian::big) word = std::byteswap(word);
  return word;
}

// REQUIRES: key.size() <= kBlockBytes. Reads only the key's own bytes, with
// overlapping fixed-size loads instead of a copy of variable length.
[[gnu::always_inline]] inline Block load_block(std::string_view key) {
  const char* p = key.data();
  const std::size_t n = key.size();
  Block block;
  if (n >= 8) {
    block.lo = load_le64(p);
    const std::uint64_t tail = load_le64(p + n - 8);  // bytes n-8 .. n-1
    block.hi = n == 8 ? 0 : tail >> (8 * (16 - n));
  } else if (n >= 4) {
    const std::uint64_t tail = load_le32(p + n - 4);  // bytes n-4 .. n-1
    block.lo = load_le32(p) | tail << (8 * (n - 4));
  } else if (n > 0) {
    const auto byte = [p](std::size_t i) {
      return std::uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
    };
    block.lo = byte(0) | byte(n / 2) | byte(n - 1);
  }
  return block;
}

// Writes the block's 16 bytes to `p` as two whole 8-byte words.
[[gnu::always_inline]] inline void store_block(char* p, const Block& block) {
  std::uint64_t words[2] = {block.lo, block.hi};
  if constexpr (std::endian::native == std::endian::big) {
    words[0] = std::byteswap(words[0]);
    words[1] = std::byteswap(words[1]);
  }
  std::memcpy(p, &words[0], 8);
  std::memcpy(p + 8, &words[1], 8);
}

[[gnu::always_inline]] inline unsigned char block_byte(const Block& block, std::size_t i) {
  const std::uint64_t word = i < 8 ? block.lo : block.hi;
  return static_cast<unsigned char>(word >> (8 * (i % 8)));
}

// The block's first n bytes, zeros after them. REQUIRES: n <= kBlockBytes.
[[gnu::always_inline]] inline Block block_prefix(const Block& block, std::size_t n) {
  const auto keep = [](std::size_t bytes) {
    return bytes >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * bytes)) - 1;
  };
  return {block.lo & keep(n), n <= 8 ? 0 : block.hi & keep(n - 8)};
}

// The block with byte i replaced by c. REQUIRES: i < kBlockBytes.
[[gnu::always_inline]] inline Block block_with_byte(Block block, std::size_t i, char c) {
  std::uint64_t& word = i < 8 ? block.lo : block.hi;
  const unsigned shift = 8 * static_cast<unsigned>(i % 8);
  word = (word & ~(std::uint64_t{0xFF} << shift)) | std::uint64_t{static_cast<unsigned char>(c)}
                                                        << shift;
  return block;
}

// The first byte position at which the blocks differ, kBlockBytes when equal.
[[gnu::always_inline]] inline std::size_t block_mismatch(const Block& a, const Block& b) {
  if (const std::uint64_t x = a.lo ^ b.lo) return static_cast<std::size_t>(std::countr_zero(x)) / 8;
  if (const std::uint64_t x = a.hi ^ b.hi) {
    return 8 + static_cast<std::size_t>(std::countr_zero(x)) / 8;
  }
  return kBlockBytes;
}

// Whether the first n bytes of the block are all base-62 digits (0-9, A-Z,
// a-z). One pass over all 16 bytes at once; bytes with the top bit set fail
// every range, being negative as signed chars.
[[gnu::always_inline]] inline bool block_is_base62(const Block& block, std::size_t n) {
  using Bytes = signed char __attribute__((vector_size(16)));
  using Words = std::uint64_t __attribute__((vector_size(16)));
  // Built from the words in registers: a 16-byte load of two 8-byte stores
  // would stall on store forwarding.
  Words words = {block.lo, block.hi};
  if constexpr (std::endian::native == std::endian::big) {
    words = Words{std::byteswap(block.lo), std::byteswap(block.hi)};
  }
  const Bytes v = reinterpret_cast<Bytes>(words);
  const Bytes folded = v | 0x20;  // 'A'-'Z' onto 'a'-'z'; nothing else lands there
  Words ok =
      reinterpret_cast<Words>(((v >= '0') & (v <= '9')) | ((folded >= 'a') & (folded <= 'z')));
  if constexpr (std::endian::native == std::endian::big) {
    ok = Words{std::byteswap(ok[0]), std::byteswap(ok[1])};
  }
  const std::uint64_t want_lo = n >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * n)) - 1;
  const std::uint64_t want_hi = n >= 16  ? ~std::uint64_t{0}
                                : n <= 8 ? 0
                                         : (std::uint64_t{1} << (8 * (n - 8))) - 1;
  return ((want_lo & ~ok[0]) | (want_hi & ~ok[1])) == 0;
}

}  // namespace bulleted::ordering::detail
