// Order keys: the fractional indexes that order siblings.
//
// A key is an integer part (a head byte that encodes the width, then that many
// base-62 digits) and an optional fraction of base-62 digits. Keys compare by
// plain byte order; nothing here ever decodes a key to sort it. This module is
// the only place in the project that mints keys.
//
// All functions are pure (apart from draws on the RandomSource passed in) and
// thread-safe. Errors are values: InvalidKey for an input that is not a
// canonical key, OutOfOrder when a lower bound is not below the upper bound,
// Exhausted when the result would exceed kMaxKeyBytes.
#pragma once

#include <cstddef>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ordering/random_source.hpp"

namespace bulleted::ordering {

inline constexpr std::size_t kMaxKeyBytes = 512;
inline constexpr std::string_view kOriginKey = "a0";
// "A" followed by 26 zeros: the smallest integer. A valid prefix, never a key.
inline constexpr std::string_view kReservedInteger = "A00000000000000000000000000";
inline constexpr std::string_view kLargestInteger = "zzzzzzzzzzzzzzzzzzzzzzzzzzz";

enum class KeyErrorCode { kInvalidKey, kOutOfOrder, kExhausted };

// The stable name of a code: "InvalidKey", "OutOfOrder", "Exhausted".
std::string_view error_name(KeyErrorCode code);

struct KeyError {
  KeyErrorCode code;
  std::string message;
};

template <class T>
using KeyResult = std::expected<T, KeyError>;

// Why `key` is not a canonical order key, or nullopt when it is one.
std::optional<std::string> invalid_reason(std::string_view key);
inline bool is_valid_key(std::string_view key) { return !invalid_reason(key).has_value(); }

// Byte order: negative, zero or positive like memcmp.
inline int compare_keys(std::string_view a, std::string_view b) { return a.compare(b); }

// Width in bytes (head included) of the integer part a head byte announces,
// or 0 when `head` is not a head byte.
std::size_t integer_width(char head);

// The next / previous integer part. REQUIRES nothing: an invalid integer part
// is InvalidKey; incrementing the largest integer or decrementing the smallest
// is Exhausted.
KeyResult<std::string> increment_integer(std::string_view integer);
KeyResult<std::string> decrement_integer(std::string_view integer);

namespace detail {
// between() with an open end as a null pointer: the bounds reach the key
// generator in registers, where a std::optional passed by value goes through
// memory in pieces that a wider read then has to wait for.
KeyResult<std::string> between(const std::string_view* a, const std::string_view* b,
                               RandomSource& jitter);
}  // namespace detail

// A key strictly between `a` and `b`; nullopt is an open end. Draws from
// `jitter` once per branching digit of a fraction (never for appends and
// prepends, which move the integer part).
inline KeyResult<std::string> between(std::optional<std::string_view> a,
                                      std::optional<std::string_view> b, RandomSource& jitter) {
  return detail::between(a ? &*a : nullptr, b ? &*b : nullptr, jitter);
}

// `n` ascending keys strictly between `a` and `b`, spread for bulk inserts:
// successive appends for an open upper end, successive prepends for an open
// lower end, otherwise the middle key first, then the left half, then the
// right half (recursively).
KeyResult<std::vector<std::string>> n_between(std::optional<std::string_view> a,
                                              std::optional<std::string_view> b, std::size_t n,
                                              RandomSource& jitter);

// A validated key: parse at the boundary, then trust the type.
class OrderKey {
 public:
  static KeyResult<OrderKey> parse(std::string_view raw);
  const std::string& str() const { return value_; }
  friend auto operator<=>(const OrderKey&, const OrderKey&) = default;

 private:
  explicit OrderKey(std::string value) : value_(std::move(value)) {}
  std::string value_;
};

}  // namespace bulleted::ordering
