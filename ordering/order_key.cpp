#include "ordering/order_key.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>

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

// Generation builds a key in a fixed buffer on the stack and copies it into
// the returned string once: keys are short, and growing strings cost more
// than computing the keys. Failure is reported as a code.
using Status = std::optional<KeyErrorCode>;
constexpr Status kOk = std::nullopt;

// The next / previous digit of each digit byte; 0 where the digit carries.
constexpr std::array<char, 256> kNextDigit = [] {
  std::array<char, 256> table{};
  for (int i = 0; i + 1 < kBase; ++i)
    table[static_cast<unsigned char>(kDigitChars[i])] = kDigitChars[i + 1];
  return table;
}();
constexpr std::array<char, 256> kPreviousDigit = [] {
  std::array<char, 256> table{};
  for (int i = 1; i < kBase; ++i)
    table[static_cast<unsigned char>(kDigitChars[i])] = kDigitChars[i - 1];
  return table;
}();

// Copies n < 16 bytes with at most two fixed-size moves each way (they may
// overlap), where a call into memcpy would cost more than the copy.
inline void copy_short(char* to, const char* from, std::size_t n) {
  if (n >= 8) {
    std::memcpy(to, from, 8);
    std::memcpy(to + n - 8, from + n - 8, 8);
  } else if (n >= 4) {
    std::memcpy(to, from, 4);
    std::memcpy(to + n - 4, from + n - 4, 4);
  } else {
    for (std::size_t i = 0; i < n; ++i) to[i] = from[i];
  }
}

// A key under construction. Generation never writes more than one byte past
// the longer neighbour (at most kMaxKeyBytes + 1 bytes); within_cap rejects
// that last byte.
class KeyBuffer {
 public:
  std::size_t size() const { return size_; }
  char& operator[](std::size_t i) { return data_[i]; }
  std::string_view view() const { return {data_.data(), size_}; }
  void assign(std::string_view s) {
    std::memcpy(data_.data(), s.data(), s.size());
    size_ = s.size();
  }
  void append(std::string_view s) {
    std::memcpy(data_.data() + size_, s.data(), s.size());
    size_ += s.size();
  }
  void push_back(char c) { data_[size_++] = c; }
  void pop_back() { --size_; }

  // Copies the key into `out`. Short keys fit the string's inline buffer:
  // resize_and_overwrite lends kInline + 1 writable bytes, so one fixed-size
  // copy of that many bytes replaces a call into memcpy.
  void copy_to(std::string& out) const {
    if (size_ < 16) {
      out.resize_and_overwrite(size_, [this](char* p, std::size_t n) {
        copy_short(p, data_.data(), n);
        return n;
      });
    } else {
      out.assign(data_.data(), size_);
    }
  }

 private:
  std::array<char, kMaxKeyBytes + 16> data_;
  std::size_t size_ = 0;
};

// Where the fraction starts; REQUIRES: `key` is valid.
inline std::size_t fraction_start(std::string_view key) { return integer_width(key[0]); }

// The common case of invalid_reason without building a reason.
inline bool fast_valid(std::string_view key) {
  if (key.empty() || key.size() > kMaxKeyBytes) return false;
  int bad = 0;
  for (char c : key) bad |= digit_value(c);
  const std::size_t width = integer_width(key[0]);
  if (bad < 0 || width == 0 || key.size() < width) return false;
  if (key.size() == width) return key != kReservedInteger;
  return key.back() != '0';
}

// An integer part alone: the right width for its head, base-62 digits. The
// reserved smallest integer counts (it is a valid prefix).
bool is_integer_part(std::string_view integer) {
  if (integer.empty() || integer.size() != integer_width(integer[0])) return false;
  return std::all_of(integer.begin(), integer.end(), [](char c) { return digit_value(c) >= 0; });
}

// Replaces the integer part `integer` by its successor. REQUIRES: an integer
// part. Fails (leaving `integer` unspecified) past the largest integer.
Status step_up(KeyBuffer& integer) {
  for (std::size_t i = integer.size() - 1; i >= 1; --i) {
    if (const char next = kNextDigit[static_cast<unsigned char>(integer[i])]) {
      integer[i] = next;
      return kOk;
    }
    integer[i] = '0';
  }
  // Every digit carried: the head moves up one width step.
  const char head = integer[0];
  if (head == 'Z') {
    integer.assign(kOriginKey);
    return kOk;
  }
  if (head == 'z') return KeyErrorCode::kExhausted;
  integer[0] = static_cast<char>(head + 1);
  if (integer[0] > 'a') {
    integer.push_back('0');
  } else {
    integer.pop_back();
  }
  return kOk;
}

// Replaces the integer part `integer` by its predecessor (mirror of step_up).
Status step_down(KeyBuffer& integer) {
  for (std::size_t i = integer.size() - 1; i >= 1; --i) {
    if (const char previous = kPreviousDigit[static_cast<unsigned char>(integer[i])]) {
      integer[i] = previous;
      return kOk;
    }
    integer[i] = 'z';
  }
  const char head = integer[0];
  if (head == 'a') {
    integer.assign("Zz");
    return kOk;
  }
  if (head == 'A') return KeyErrorCode::kExhausted;
  integer[0] = static_cast<char>(head - 1);
  if (integer[0] < 'Z') {
    integer.push_back('z');
  } else {
    integer.pop_back();
  }
  return kOk;
}

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
void append_midpoint(KeyBuffer& out, std::string_view a, bool bounded, std::string_view b,
                     RandomSource& jitter) {
  while (true) {
    if (bounded) {
      // Shared prefix, reading `a` as padded with zeros.
      std::size_t n = 0;
      while (n < b.size() && (n < a.size() ? a[n] : '0') == b[n]) ++n;
      out.append(b.substr(0, n));
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

Status within_cap(const KeyBuffer& key) {
  return key.size() > kMaxKeyBytes ? Status(KeyErrorCode::kExhausted) : kOk;
}

// Prepend: a key below `b` (valid) into `out`.
Status key_before(std::string_view b, RandomSource& jitter, KeyBuffer& out) {
  const std::string_view ib = b.substr(0, fraction_start(b));
  const std::string_view fb = b.substr(ib.size());
  out.assign(ib);
  if (ib == kReservedInteger) {
    append_midpoint(out, {}, true, fb, jitter);
    return within_cap(out);
  }
  if (!fb.empty()) return kOk;
  if (auto failed = step_down(out)) return failed;
  // Never the reserved key itself: a fraction under it instead.
  if (out.view() == kReservedInteger) append_midpoint(out, {}, false, {}, jitter);
  return kOk;
}

// Append: a key above `a` (valid) into `out`.
Status key_after(std::string_view a, RandomSource& jitter, KeyBuffer& out) {
  const std::string_view ia = a.substr(0, fraction_start(a));
  out.assign(ia);
  if (!step_up(out)) return kOk;
  // Past the largest integer: a fraction.
  out.assign(ia);
  append_midpoint(out, a.substr(ia.size()), false, {}, jitter);
  return within_cap(out);
}

// Both ends given (valid, a < b) into `out`.
Status key_between(std::string_view a, std::string_view b, RandomSource& jitter, KeyBuffer& out) {
  const std::string_view ia = a.substr(0, fraction_start(a));
  const std::string_view ib = b.substr(0, fraction_start(b));
  out.assign(ia);
  if (ia == ib) {
    append_midpoint(out, a.substr(ia.size()), true, b.substr(ib.size()), jitter);
    return within_cap(out);
  }
  if (!step_up(out) && out.view() < b) return kOk;
  out.assign(ia);
  append_midpoint(out, a.substr(ia.size()), false, {}, jitter);
  return within_cap(out);
}

// Both ends given and checked; appends n ascending keys to `out`: the middle
// key is drawn first, then the left half, then the right half.
Status spread_between(std::string_view a, std::string_view b, std::size_t n, RandomSource& jitter,
                      std::vector<std::string>& out) {
  if (n == 0) return kOk;
  KeyBuffer built;
  if (auto failed = key_between(a, b, jitter, built)) return failed;
  std::string middle;
  built.copy_to(middle);
  const std::size_t left = n / 2;
  if (auto failed = spread_between(a, middle, left, jitter, out)) return failed;
  out.push_back(middle);
  return spread_between(middle, b, n - left - 1, jitter, out);
}

KeyError make_error(KeyErrorCode code, std::string message) {
  return KeyError{code, std::move(message)};
}

KeyError generation_error(KeyErrorCode code) {
  if (code == KeyErrorCode::kExhausted) {
    return make_error(code, "no key of at most 512 bytes fits between the neighbours");
  }
  return make_error(code, std::string(error_name(code)));
}

[[gnu::cold, gnu::noinline]] KeyError invalid_key_error(std::string_view key, const char* which) {
  return make_error(KeyErrorCode::kInvalidKey,
                    std::string(which) + " key: " + invalid_reason(key).value_or("invalid"));
}

inline std::optional<KeyError> check_key(std::string_view key, const char* which) {
  if (fast_valid(key)) [[likely]]
    return std::nullopt;
  return invalid_key_error(key, which);
}

std::optional<KeyError> check_bounds(std::optional<std::string_view> a,
                                     std::optional<std::string_view> b) {
  if (a) {
    if (auto error = check_key(*a, "lower")) return error;
  }
  if (b) {
    if (auto error = check_key(*b, "upper")) return error;
  }
  if (a && b && *a >= *b) {
    return make_error(KeyErrorCode::kOutOfOrder, "lower key is not below upper key");
  }
  return std::nullopt;
}

// One key for checked bounds into `out`.
Status generate(std::optional<std::string_view> a, std::optional<std::string_view> b,
                RandomSource& jitter, KeyBuffer& out) {
  if (!a && !b) {
    out.assign(kOriginKey);
    return kOk;
  }
  if (!a) return key_before(*b, jitter, out);
  if (!b) return key_after(*a, jitter, out);
  return key_between(*a, *b, jitter, out);
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
  KeyBuffer built;
  built.assign(integer);
  if (step_up(built)) {
    return std::unexpected(make_error(KeyErrorCode::kExhausted, "largest integer"));
  }
  return std::string(built.view());
}

KeyResult<std::string> decrement_integer(std::string_view integer) {
  if (!is_integer_part(integer)) {
    return std::unexpected(make_error(KeyErrorCode::kInvalidKey, "not an integer part"));
  }
  KeyBuffer built;
  built.assign(integer);
  if (step_down(built)) {
    return std::unexpected(make_error(KeyErrorCode::kExhausted, "smallest integer"));
  }
  return std::string(built.view());
}

KeyResult<std::string> between(std::optional<std::string_view> a, std::optional<std::string_view> b,
                               RandomSource& jitter) {
  // One result object, returned by name on every path, so the key is built
  // in place and never moved.
  KeyResult<std::string> result(std::in_place);
  if (auto error = check_bounds(a, b)) {
    result = std::unexpected(std::move(*error));
  } else {
    KeyBuffer built;
    if (auto failed = generate(a, b, jitter, built)) {
      result = std::unexpected(generation_error(*failed));
    } else {
      built.copy_to(*result);
    }
  }
  return result;
}

KeyResult<std::vector<std::string>> n_between(std::optional<std::string_view> a,
                                              std::optional<std::string_view> b, std::size_t n,
                                              RandomSource& jitter) {
  if (auto error = check_bounds(a, b)) return std::unexpected(std::move(*error));
  std::vector<std::string> out;
  out.reserve(n);
  Status failed = kOk;
  if (a && b) {
    failed = spread_between(*a, *b, n, jitter, out);
  } else if (n > 0) {
    // One open end: successive appends (or prepends, reversed at the end).
    KeyBuffer built;
    failed = generate(a, b, jitter, built);
    while (!failed) {
      built.copy_to(out.emplace_back());
      if (out.size() == n) break;
      failed = b ? key_before(out.back(), jitter, built) : key_after(out.back(), jitter, built);
    }
    if (b) std::reverse(out.begin(), out.end());
  }
  if (failed) return std::unexpected(generation_error(*failed));
  return out;
}

KeyResult<OrderKey> OrderKey::parse(std::string_view raw) {
  if (auto error = check_key(raw, "order")) return std::unexpected(std::move(*error));
  return OrderKey(std::string(raw));
}

}  // namespace bulleted::ordering
