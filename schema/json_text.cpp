#include "schema/json_text.hpp"

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>

namespace bulleted::schema {
namespace {

// Whether a byte can be copied as it is: printable ASCII but the quote and
// the backslash (a table: one load a byte in the scan).
constexpr std::array<bool, 256> kPlain = [] {
  std::array<bool, 256> plain{};
  for (int c = 0x20; c < 0x80; ++c) plain[static_cast<std::size_t>(c)] = c != '"' && c != '\\';
  return plain;
}();
constexpr bool plain(unsigned char c) { return kPlain[c]; }

// Where the run of plain bytes from text[i] ends: eight bytes a step while
// they are all plain. In a word, a byte below 0x20 (x - 0x20 borrows into
// its top bit where x's top bit is clear), one equal to the quote or the
// backslash (x ^ c is zero: the same test against 1), and one of 0x80 or
// more (its own top bit) each set that byte's top bit; a borrow can mark a
// byte above a marked one, never below, so the lowest mark is the first
// byte that is not plain.
std::size_t plain_run_end(std::string_view text, std::size_t i) {
  if constexpr (std::endian::native == std::endian::little) {
    constexpr std::uint64_t kEach = 0x0101010101010101ULL;
    constexpr std::uint64_t kTops = 0x8080808080808080ULL;
    auto below = [](std::uint64_t x, std::uint64_t n) { return (x - kEach * n) & ~x; };
    while (text.size() - i >= 8) {
      std::uint64_t word;
      std::memcpy(&word, text.data() + i, sizeof word);
      const std::uint64_t marks = (below(word, 0x20) | below(word ^ (kEach * '"'), 1) |
                                   below(word ^ (kEach * '\\'), 1) | word) &
                                  kTops;
      if (marks != 0) return i + static_cast<std::size_t>(std::countr_zero(marks) / 8);
      i += 8;
    }
  }
  while (i < text.size() && plain(static_cast<unsigned char>(text[i]))) ++i;
  return i;
}

// The length of the valid UTF-8 sequence starting at text[i] (a byte >= 0x80),
// or 0 when it is not one (overlong forms, surrogates and values past
// U+10FFFF included).
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  const std::size_t left = text.size() - i;
  auto continuation = [&](std::size_t k) { return (byte(k) & 0xC0) == 0x80; };
  if (c >= 0xC2 && c <= 0xDF) return left >= 2 && continuation(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (left < 3 || !continuation(i + 1) || !continuation(i + 2)) return 0;
    if (c == 0xE0 && byte(i + 1) < 0xA0) return 0;  // overlong
    if (c == 0xED && byte(i + 1) > 0x9F) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (left < 4 || !continuation(i + 1) || !continuation(i + 2) || !continuation(i + 3)) return 0;
    if (c == 0xF0 && byte(i + 1) < 0x90) return 0;  // overlong
    if (c == 0xF4 && byte(i + 1) > 0x8F) return 0;  // past U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

void append_escaped(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t run = plain_run_end(text, i);
    out.append(text.data() + i, run - i);
    i = run;
    if (i == text.size()) break;
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      if (const std::size_t length = utf8_length(text, i); length > 0) {
        out.append(text.data() + i, length);
        i += length;
      } else {
        out += "\xEF\xBF\xBD";  // U+FFFD for a byte that starts no character
        ++i;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default: {
        const char escaped[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
        out.append(escaped, sizeof escaped);
      }
    }
    ++i;
  }
}

void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  append_escaped(out, text);
  out += '"';
}

}  // namespace bulleted::schema
