#include "ordering/order_key.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>

namespace bulleted::ordering {
namespace {

constexpr char kDigitChars[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
constexpr int kBase = 62;

// Digit value of each byte, -1 for bytes outside base 62.
constexpr std::array<std::int8_t, 256> kDigitValue = [] {
  std::array<std::int8_t, 256> table{};
  table.fill(-1);
  for (int i = 0; i < kBase; ++i) table[static_cast<unsigned char>(kDigitChars[i])] = i;
  return table;
}();

inline int digit_value(char c) { return kDigitValue[static_cast<unsigned char>(c)]; }

KeyError make_error(KeyErrorCode code, std::string message) {
  return KeyError{code, std::move(message)};
}

// Where the fraction starts; REQUIRES: `key` is valid.
inline std::size_t fraction_start(std::string_view key) { return integer_width(key[0]); }

// The branching digit: uniform over the middle half of the open interval.
inline char branching_digit(int lo, int hi, RandomSource& jitter) {
  const int gap = hi - lo;
  const int margin = (gap + 3) / 4;
  const auto spread = static_cast<std::uint32_t>(gap - 2 * margin + 1);
  return kDigitChars[lo + margin + static_cast<int>(below(jitter.next(), spread))];
}

// Appends to `out` a fraction strictly between fractions `a` and `b`; with
// `bounded` false there is no upper bound and `b` is ignored. REQUIRES: a < b,
// neither ends in '0'.
void append_midpoint(std::string& out, std::string_view a, bool bounded, std::string_view b,
                     RandomSource& jitter) {
  while (true) {
    if (bounded) {
      // Shared prefix, reading `a` as padded with zeros.
      std::size_t n = 0;
      while (n < b.size() && (n < a.size() ? a[n] : '0') == b[n]) ++n;
      out.append(b.data(), n);
      a = n < a.size() ? a.substr(n) : std::string_view{};
      b.remove_prefix(n);
    }
    const int lo = a.empty() ? 0 : digit_value(a[0]);
    const int hi = bounded && !b.empty() ? digit_value(b[0]) : kBase;
    if (hi - lo > 1) {
      out.push_back(branching_digit(lo, hi, jitter));
      return;
    }
    // Consecutive digits: b's first digit alone is between when b goes on.
    if (bounded && b.size() > 1) {
      out.push_back(b[0]);
      return;
    }
    out.push_back(kDigitChars[lo]);
    if (!a.empty()) a.remove_prefix(1);
    bounded = false;
  }
}

KeyResult<std::string> checked_length(std::string key) {
  if (key.size() > kMaxKeyBytes) {
    return std::unexpected(make_error(KeyErrorCode::kExhausted,
                                      "no key of at most 512 bytes fits between the neighbours"));
  }
  return key;
}

KeyResult<void> require_valid(std::string_view key, const char* which) {
  if (auto reason = invalid_reason(key)) {
    return std::unexpected(
        make_error(KeyErrorCode::kInvalidKey, std::string(which) + " key: " + *reason));
  }
  return {};
}

// Prepend: a key below `b` (valid).
KeyResult<std::string> key_before(std::string_view b, RandomSource& jitter) {
  const std::string_view ib = b.substr(0, fraction_start(b));
  const std::string_view fb = b.substr(ib.size());
  std::string out;
  if (ib == kReservedInteger) {
    out.assign(ib);
    append_midpoint(out, {}, true, fb, jitter);
    return checked_length(std::move(out));
  }
  if (!fb.empty()) return std::string(ib);
  auto dec = decrement_integer(ib);
  if (!dec) return std::unexpected(dec.error());
  if (*dec == kReservedInteger) {
    out.assign(kReservedInteger);
    append_midpoint(out, {}, false, {}, jitter);
    return out;
  }
  return dec;
}

// Append: a key above `a` (valid).
KeyResult<std::string> key_after(std::string_view a, RandomSource& jitter) {
  const std::string_view ia = a.substr(0, fraction_start(a));
  if (auto inc = increment_integer(ia)) return inc;
  std::string out(ia);
  append_midpoint(out, a.substr(ia.size()), false, {}, jitter);
  return checked_length(std::move(out));
}

// Both ends given (valid, a < b).
KeyResult<std::string> key_between(std::string_view a, std::string_view b, RandomSource& jitter) {
  const std::string_view ia = a.substr(0, fraction_start(a));
  const std::string_view ib = b.substr(0, fraction_start(b));
  std::string out(ia);
  if (ia == ib) {
    append_midpoint(out, a.substr(ia.size()), true, b.substr(ib.size()), jitter);
    return checked_length(std::move(out));
  }
  if (auto inc = increment_integer(ia); inc && *inc < b) return inc;
  append_midpoint(out, a.substr(ia.size()), false, {}, jitter);
  return checked_length(std::move(out));
}

// Both ends given and checked; appends n ascending keys to `out`: the middle
// key is drawn first, then the left half, then the right half.
KeyResult<void> spread_between(std::string_view a, std::string_view b, std::size_t n,
                               RandomSource& jitter, std::vector<std::string>& out) {
  if (n == 0) return {};
  auto mid = key_between(a, b, jitter);
  if (!mid) return std::unexpected(mid.error());
  const std::string middle = std::move(*mid);
  const std::size_t left = n / 2;
  if (auto r = spread_between(a, middle, left, jitter, out); !r) return r;
  out.push_back(middle);
  return spread_between(middle, b, n - left - 1, jitter, out);
}

KeyResult<void> check_bounds(std::optional<std::string_view> a, std::optional<std::string_view> b) {
  if (a) {
    if (auto r = require_valid(*a, "lower"); !r) return r;
  }
  if (b) {
    if (auto r = require_valid(*b, "upper"); !r) return r;
  }
  if (a && b && *a >= *b) {
    return std::unexpected(
        make_error(KeyErrorCode::kOutOfOrder, "lower key is not below upper key"));
  }
  return {};
}

// An integer part alone: the right width for its head, base-62 digits. The
// reserved smallest integer counts (it is a valid prefix).
bool is_integer_part(std::string_view integer) {
  if (integer.empty() || integer.size() != integer_width(integer[0])) return false;
  for (char c : integer) {
    if (digit_value(c) < 0) return false;
  }
  return true;
}

}  // namespace

std::string_view error_name(KeyErrorCode code) {
  switch (code) {
    case KeyErrorCode::kInvalidKey:
      return "InvalidKey";
    case KeyErrorCode::kOutOfOrder:
      return "OutOfOrder";
    case KeyErrorCode::kExhausted:
      return "Exhausted";
  }
  return "Unknown";
}

std::size_t integer_width(char head) {
  if (head >= 'a' && head <= 'z') return static_cast<std::size_t>(head - 'a') + 2;
  if (head >= 'A' && head <= 'Z') return static_cast<std::size_t>('Z' - head) + 2;
  return 0;
}

std::optional<std::string> invalid_reason(std::string_view key) {
  if (key.empty()) return "empty key";
  if (key.size() > kMaxKeyBytes) {
    return "longer than 512 bytes (" + std::to_string(key.size()) + ")";
  }
  for (std::size_t i = 0; i < key.size(); ++i) {
    if (digit_value(key[i]) < 0) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "byte 0x%02x at offset %zu is not a base-62 digit",
                    static_cast<unsigned char>(key[i]), i);
      return std::string(buf);
    }
  }
  const std::size_t width = integer_width(key[0]);
  if (width == 0) return "head '" + std::string(1, key[0]) + "' is not a letter";
  if (key.size() < width) {
    return "integer part shorter than its head says (" + std::to_string(width) + " bytes)";
  }
  if (key == kReservedInteger) return "the smallest integer is reserved";
  if (key.size() > width && key.back() == '0') return "fraction ends in '0'";
  return std::nullopt;
}

KeyResult<std::string> increment_integer(std::string_view integer) {
  if (!is_integer_part(integer)) {
    return std::unexpected(make_error(KeyErrorCode::kInvalidKey, "not an integer part"));
  }
  std::string out(integer);
  for (std::size_t i = out.size() - 1; i >= 1; --i) {
    const int d = digit_value(out[i]) + 1;
    if (d < kBase) {
      out[i] = kDigitChars[d];
      return out;
    }
    out[i] = '0';
  }
  // Every digit carried: the head moves up one width step.
  const char head = out[0];
  if (head == 'Z') return std::string(kOriginKey);
  if (head == 'z') {
    return std::unexpected(make_error(KeyErrorCode::kExhausted, "largest integer"));
  }
  out[0] = static_cast<char>(head + 1);
  if (out[0] > 'a') {
    out.push_back('0');
  } else {
    out.pop_back();
  }
  return out;
}

KeyResult<std::string> decrement_integer(std::string_view integer) {
  if (!is_integer_part(integer)) {
    return std::unexpected(make_error(KeyErrorCode::kInvalidKey, "not an integer part"));
  }
  std::string out(integer);
  for (std::size_t i = out.size() - 1; i >= 1; --i) {
    const int d = digit_value(out[i]) - 1;
    if (d >= 0) {
      out[i] = kDigitChars[d];
      return out;
    }
    out[i] = 'z';
  }
  const char head = out[0];
  if (head == 'a') return std::string("Zz");
  if (head == 'A') {
    return std::unexpected(make_error(KeyErrorCode::kExhausted, "smallest integer"));
  }
  out[0] = static_cast<char>(head - 1);
  if (out[0] < 'Z') {
    out.push_back('z');
  } else {
    out.pop_back();
  }
  return out;
}

KeyResult<std::string> between(std::optional<std::string_view> a, std::optional<std::string_view> b,
                               RandomSource& jitter) {
  if (auto r = check_bounds(a, b); !r) return std::unexpected(r.error());
  if (!a && !b) return std::string(kOriginKey);
  if (!a) return key_before(*b, jitter);
  if (!b) return key_after(*a, jitter);
  return key_between(*a, *b, jitter);
}

KeyResult<std::vector<std::string>> n_between(std::optional<std::string_view> a,
                                              std::optional<std::string_view> b, std::size_t n,
                                              RandomSource& jitter) {
  if (auto r = check_bounds(a, b); !r) return std::unexpected(r.error());
  std::vector<std::string> out;
  out.reserve(n);
  if (a && b) {
    if (auto r = spread_between(*a, *b, n, jitter, out); !r) return std::unexpected(r.error());
    return out;
  }
  if (n == 0) return out;
  if (!b) {
    auto first = a ? key_after(*a, jitter) : KeyResult<std::string>(kOriginKey);
    if (!first) return std::unexpected(first.error());
    out.push_back(std::move(*first));
    while (out.size() < n) {
      auto next = key_after(out.back(), jitter);
      if (!next) return std::unexpected(next.error());
      out.push_back(std::move(*next));
    }
    return out;
  }
  // Open lower end: successive prepends, returned ascending.
  auto first = key_before(*b, jitter);
  if (!first) return std::unexpected(first.error());
  out.push_back(std::move(*first));
  while (out.size() < n) {
    auto next = key_before(out.back(), jitter);
    if (!next) return std::unexpected(next.error());
    out.push_back(std::move(*next));
  }
  std::reverse(out.begin(), out.end());
  return out;
}

KeyResult<OrderKey> OrderKey::parse(std::string_view raw) {
  if (auto r = require_valid(raw, "order"); !r) return std::unexpected(r.error());
  return OrderKey(std::string(raw));
}

}  // namespace bulleted::ordering
