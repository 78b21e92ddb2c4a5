// Order keys in one file past the usual size: validation, comparison,
// between, n_between and increment/decrement all work on one key
// representation and share its helpers; split apart they would each need
// the others' internals. The register fast paths live in key_block.hpp.
#include "ordering/order_key.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <utility>

#include "ordering/key_block.hpp"
#include "ordering/key_buffer.hpp"

namespace bulleted::ordering {
namespace {

using detail::KeyBuffer;
using detail::kHeadKey;

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

// The integer part's width (head included) for each head byte: 'a'..'z' are
// 2..27 bytes, 'Z'..'A' likewise; 0 for bytes that are not heads.
constexpr std::array<std::uint8_t, 256> kIntegerWidth = [] {
  std::array<std::uint8_t, 256> table{};
  for (int i = 0; i < 26; ++i) {
    table['a' + i] = static_cast<std::uint8_t>(i + 2);
    table['Z' - i] = static_cast<std::uint8_t>(i + 2);
  }
  return table;
}();

// integer_width() for this file's hot paths, always inline.
[[gnu::always_inline]] inline std::size_t head_width(char head) {
  return kIntegerWidth[static_cast<unsigned char>(head)];
}

// Generation builds a key in a KeyBuffer (below). It fails only when no key
// of at most kMaxKeyBytes fits, so its outcome is one flag, true on failure
// (a std::optional<KeyErrorCode> came back through memory in two pieces,
// which the caller's single read then waited for).
enum Status : bool { kOk = false, kExhausted = true };

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

// Where the fraction starts; REQUIRES: `key` is valid.
[[gnu::always_inline]] inline std::size_t fraction_start(std::string_view key) {
  return head_width(key[0]);
}

// The common case of invalid_reason without building a reason, once the
// bytes are known to be base-62 digits.
[[gnu::always_inline]] inline bool valid_shape(std::string_view key) {
  if (key.empty() || key.size() > kMaxKeyBytes) return false;
  const std::size_t width = head_width(key[0]);
  if (width == 0 || key.size() < width) return false;
  if (key.size() == width) return key != kReservedInteger;
  return key.back() != '0';
}

// A key of at most kBlockBytes, read into `block`.
[[gnu::always_inline]] inline bool short_valid(std::string_view key, const detail::Block& block) {
  return detail::block_is_base62(block, key.size()) && valid_shape(key);
}

// One key alone (an append, a prepend, a parse): a loop, which predicts well
// when successive keys have the same length, as appends do.
inline bool fast_valid(std::string_view key) {
  int bad = 0;
  for (char c : key) bad |= digit_value(c);
  return bad >= 0 && valid_shape(key);
}

// The first position at which `a` and `b` differ, reading both as padded with
// zero bytes (which no key contains): the common prefix's length.
inline std::size_t first_difference(std::string_view a, std::string_view b) {
  const std::size_t n = std::min(a.size(), b.size());
  std::size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

// Whether a < b, given d = first_difference(a, b).
[[gnu::always_inline]] inline bool below_at(std::string_view a, std::string_view b, std::size_t d) {
  if (d >= b.size()) return false;  // b is a prefix of a, or equal
  return d >= a.size() || static_cast<unsigned char>(a[d]) < static_cast<unsigned char>(b[d]);
}

// An integer part alone: the right width for its head, base-62 digits. The
// reserved smallest integer counts (it is a valid prefix).
bool is_integer_part(std::string_view integer) {
  if (integer.empty() || integer.size() != head_width(integer[0])) return false;
  return std::all_of(integer.begin(), integer.end(), [](char c) { return digit_value(c) >= 0; });
}

// Replaces the integer part `integer` by its successor. REQUIRES: an integer
// part. Fails (leaving `integer` unspecified) past the largest integer.
Status step_up(KeyBuffer& integer) {
  for (std::size_t i = integer.size() - 1; i >= 1; --i) {
    if (const char next = kNextDigit[static_cast<unsigned char>(integer[i])]) {
      integer.set(i, next);
      return kOk;
    }
    integer.set(i, '0');
  }
  // Every digit carried: the head moves up one width step.
  const char head = integer[0];
  if (head == 'Z') {
    integer.assign(kOriginKey);
    return kOk;
  }
  if (head == 'z') return kExhausted;
  integer.set(0, static_cast<char>(head + 1));
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
      integer.set(i, previous);
      return kOk;
    }
    integer.set(i, 'z');
  }
  const char head = integer[0];
  if (head == 'a') {
    integer.assign("Zz");
    return kOk;
  }
  if (head == 'A') return kExhausted;
  integer.set(0, static_cast<char>(head - 1));
  if (integer[0] < 'Z') {
    integer.push_back('z');
  } else {
    integer.pop_back();
  }
  return kOk;
}

// The branching digit: uniform over the middle half of the open interval.
[[gnu::always_inline]] inline char branching_digit(int lo, int hi, RandomSource& jitter) {
  const int gap = hi - lo;
  const int margin = (gap + 3) / 4;
  const auto spread = static_cast<std::uint32_t>(gap - 2 * margin + 1);
  return kDigitChars[lo + margin + static_cast<int>(below(jitter.next(), spread))];
}

// Appends to `out` a fraction strictly between fractions `a` and `b` whose
// first digits differ (`a` read as padded with '0' digits); with `bounded`
// false there is no upper bound and `b` is ignored. REQUIRES: a < b, neither
// ends in '0'.
void append_split(KeyBuffer& out, std::string_view a, bool bounded, std::string_view b,
                  RandomSource& jitter) {
  while (true) {
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

// Appends to `out` a fraction strictly between fractions `a` and `b`, as
// append_split but with a shared prefix allowed.
void append_midpoint(KeyBuffer& out, std::string_view a, bool bounded, std::string_view b,
                     RandomSource& jitter) {
  if (bounded) {
    // Shared prefix, reading `a` as padded with '0' digits.
    std::size_t n = 0;
    while (n < b.size() && (n < a.size() ? a[n] : '0') == b[n]) ++n;
    out.append(b.substr(0, n));
    a = n < a.size() ? a.substr(n) : std::string_view{};
    b.remove_prefix(n);
  }
  append_split(out, a, bounded, b, jitter);
}

Status within_cap(const KeyBuffer& key) { return key.size() > kMaxKeyBytes ? kExhausted : kOk; }

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

// A key computed whole in registers, by the two common cases below; size 0
// when the case does not apply (the general path then answers, errors
// included).
struct BlockKey {
  detail::Block block;
  std::size_t size = 0;
};

// The common append: after a short valid key whose integer part's last
// digit does not carry, the next key is that integer part with its last
// digit stepped up (key_after's first answer, drawing nothing).
[[gnu::always_inline]] inline BlockKey append_in_block(std::string_view a) {
  if (a.empty() || a.size() > kHeadKey) return {};
  const detail::Block block = detail::load_block(a);
  if (!short_valid(a, block)) return {};
  const std::size_t width = fraction_start(a);
  const char next = kNextDigit[static_cast<unsigned char>(a[width - 1])];
  if (next == 0) return {};
  return {detail::block_with_byte(detail::block_prefix(block, width), width - 1, next), width};
}

// The common prepend, mirror of the append: before a short valid key, its
// integer part when it has a fraction, else that integer part with its last
// digit stepped down when it does not borrow (key_before's first answers,
// drawing nothing; the reserved integer is too long to arise here).
static_assert(kReservedInteger.size() > kHeadKey);
[[gnu::always_inline]] inline BlockKey prepend_in_block(std::string_view b) {
  if (b.empty() || b.size() > kHeadKey) return {};
  const detail::Block block = detail::load_block(b);
  if (!short_valid(b, block)) return {};
  const std::size_t width = fraction_start(b);
  const detail::Block integer = detail::block_prefix(block, width);
  if (b.size() > width) return {integer, width};
  const char previous = kPreviousDigit[static_cast<unsigned char>(b[width - 1])];
  if (previous == 0) return {};
  return {detail::block_with_byte(integer, width - 1, previous), width};
}

// The common inserts: two short valid keys in order with one integer part.
// Where their first differing fraction digits (a's read as padded with '0')
// leave room for a digit between them, b's prefix up to there and the
// branching digit; where they are consecutive, b's prefix through its digit
// when b goes on, else a's prefix through its digit and any 'z's after it,
// then a digit above a's next one. key_between's answers, with its draws.
[[gnu::always_inline]] inline BlockKey between_in_block(std::string_view a, std::string_view b,
                                                        RandomSource& jitter) {
  if (a.size() > kHeadKey || b.size() > kHeadKey) return {};
  const detail::Block lower = detail::load_block(a);
  const detail::Block upper = detail::load_block(b);
  if (!short_valid(a, lower) || !short_valid(b, upper)) return {};
  const std::size_t d = detail::block_mismatch(lower, upper);
  if (!below_at(a, b, d) || d < fraction_start(a)) return {};
  std::size_t shared = d;
  if (shared == a.size()) {
    while (b[shared] == '0') ++shared;  // b's fraction does not end in '0'
  }
  const int lo = shared < a.size() ? digit_value(a[shared]) : 0;
  const int hi = digit_value(b[shared]);
  if (hi - lo > 1) {
    if (shared + 1 > kHeadKey) return {};
    const char digit = branching_digit(lo, hi, jitter);
    return {detail::block_with_byte(detail::block_prefix(upper, shared), shared, digit),
            shared + 1};
  }
  if (shared + 1 < b.size()) return {detail::block_prefix(upper, shared + 1), shared + 1};
  if (shared >= a.size()) return {};
  std::size_t next = shared + 1;
  while (next < a.size() && a[next] == 'z') ++next;
  if (next + 1 > kHeadKey) return {};
  const int from = next < a.size() ? digit_value(a[next]) : 0;
  const char digit = branching_digit(from, kBase, jitter);
  return {detail::block_with_byte(detail::block_prefix(lower, next), next, digit), next + 1};
}

// Both ends given (valid, a < b, d = first_difference(a, b)) into `out`.
Status key_between(std::string_view a, std::string_view b, std::size_t d, RandomSource& jitter,
                   KeyBuffer& out) {
  const std::string_view ia = a.substr(0, fraction_start(a));
  if (d >= ia.size()) {
    // One integer part (the head fixes its width): the common prefix, read
    // with `a` padded by '0' digits, then a fraction between the rest. Past
    // a's end, b goes on and does not end in '0', so the scan stops in b.
    std::size_t shared = d;
    if (shared == a.size()) {
      while (b[shared] == '0') ++shared;
    }
    out.assign(b.substr(0, shared));
    append_split(out, a.substr(std::min(shared, a.size())), true, b.substr(shared), jitter);
    return within_cap(out);
  }
  out.assign(ia);
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
  if (auto failed = key_between(a, b, first_difference(a, b), jitter, built)) return failed;
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

KeyError exhausted_error() {
  return make_error(KeyErrorCode::kExhausted,
                    "no key of at most 512 bytes fits between the neighbours");
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

// Checks both bounds; `difference` receives first_difference(a, b) when both
// are given.
std::optional<KeyError> check_bounds(const std::string_view* a, const std::string_view* b,
                                     std::size_t& difference) {
  if (a && b && a->size() <= detail::kBlockBytes && b->size() <= detail::kBlockBytes) {
    // The common case: two short keys, each read once.
    const detail::Block lower = detail::load_block(*a);
    const detail::Block upper = detail::load_block(*b);
    if (!short_valid(*a, lower)) [[unlikely]]
      return invalid_key_error(*a, "lower");
    if (!short_valid(*b, upper)) [[unlikely]]
      return invalid_key_error(*b, "upper");
    difference = detail::block_mismatch(lower, upper);
  } else {
    if (a) {
      if (auto error = check_key(*a, "lower")) return error;
    }
    if (b) {
      if (auto error = check_key(*b, "upper")) return error;
    }
    if (a && b) difference = first_difference(*a, *b);
  }
  if (a && b && !below_at(*a, *b, difference)) {
    return make_error(KeyErrorCode::kOutOfOrder, "lower key is not below upper key");
  }
  return std::nullopt;
}

// One key for checked bounds (`difference` as check_bounds gives it) into `out`.
Status generate(const std::string_view* a, const std::string_view* b, std::size_t difference,
                RandomSource& jitter, KeyBuffer& out) {
  if (!a && !b) {
    out.assign(kOriginKey);
    return kOk;
  }
  if (!a) return key_before(*b, jitter, out);
  if (!b) return key_after(*a, jitter, out);
  return key_between(*a, *b, difference, jitter, out);
}

}  // namespace

namespace {

// One row a code, in the enum's order (ordering/ is standard library only:
// the table is its own, in schema/enum_names.hpp's shape).
constexpr std::array<std::pair<KeyErrorCode, std::string_view>, 3> kKeyErrorNames = {{
    {KeyErrorCode::kInvalidKey, "InvalidKey"},
    {KeyErrorCode::kOutOfOrder, "OutOfOrder"},
    {KeyErrorCode::kExhausted, "Exhausted"},
}};
constexpr bool key_error_names_cover() {
  for (std::size_t i = 0; i < kKeyErrorNames.size(); ++i) {
    if (static_cast<std::size_t>(kKeyErrorNames[i].first) != i) return false;
  }
  return static_cast<std::size_t>(KeyErrorCode::kExhausted) + 1 == kKeyErrorNames.size();
}
static_assert(key_error_names_cover(), "one row per KeyErrorCode, in the enum's order");

}  // namespace

std::string_view error_name(KeyErrorCode code) {
  return kKeyErrorNames[static_cast<std::size_t>(code)].second;
}

std::size_t integer_width(char head) { return head_width(head); }

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
  const std::size_t width = head_width(key[0]);
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

KeyResult<std::string> detail::between(const std::string_view* a, const std::string_view* b,
                                       RandomSource& jitter) {
  // One result object, returned by name on every path, so the key is built
  // in place and never moved.
  KeyResult<std::string> result(std::in_place);
  const BlockKey quick = !a  ? (b ? prepend_in_block(*b) : BlockKey{})
                         : b ? between_in_block(*a, *b, jitter)
                             : append_in_block(*a);
  if (quick.size != 0) {
    result->resize_and_overwrite(kHeadKey, [&quick](char* p, std::size_t) {
      detail::store_block(p, quick.block);
      return quick.size;
    });
    return result;
  }
  std::size_t difference = 0;
  if (auto error = check_bounds(a, b, difference)) {
    result = std::unexpected(std::move(*error));
    return result;
  }
  Status failed = kOk;
  const std::size_t longest =
      std::max(a ? a->size() : kOriginKey.size(), b ? b->size() : kOriginKey.size());
  if (longest < kHeadKey) {
    // The key (at most longest + 1 bytes) fits the head words: build it in
    // the string, which lends kHeadKey + 1 bytes.
    result->resize_and_overwrite(kHeadKey, [&](char* p, std::size_t n) {
      KeyBuffer built(p, n + 1);
      failed = generate(a, b, difference, jitter, built);
      return failed ? 0 : built.size();
    });
  } else {
    KeyBuffer built;
    failed = generate(a, b, difference, jitter, built);
    if (!failed) built.copy_to(*result);
  }
  if (failed) result = std::unexpected(exhausted_error());
  return result;
}

KeyResult<std::vector<std::string>> n_between(std::optional<std::string_view> a,
                                              std::optional<std::string_view> b, std::size_t n,
                                              RandomSource& jitter) {
  std::size_t difference = 0;
  const std::string_view* lower = a ? &*a : nullptr;
  const std::string_view* upper = b ? &*b : nullptr;
  if (auto error = check_bounds(lower, upper, difference)) {
    return std::unexpected(std::move(*error));
  }
  std::vector<std::string> out;
  out.reserve(n);
  Status failed = kOk;
  if (a && b) {
    failed = spread_between(*a, *b, n, jitter, out);
  } else if (n > 0) {
    // One open end: successive appends (or prepends, reversed at the end).
    KeyBuffer built;
    failed = generate(lower, upper, difference, jitter, built);
    while (!failed) {
      built.copy_to(out.emplace_back());
      if (out.size() == n) break;
      failed = b ? key_before(out.back(), jitter, built) : key_after(out.back(), jitter, built);
    }
    if (b) std::reverse(out.begin(), out.end());
  }
  if (failed) return std::unexpected(exhausted_error());
  return out;
}

KeyResult<OrderKey> OrderKey::parse(std::string_view raw) {
  if (auto error = check_key(raw, "order")) return std::unexpected(std::move(*error));
  return OrderKey(std::string(raw));
}

}  // namespace bulleted::ordering
