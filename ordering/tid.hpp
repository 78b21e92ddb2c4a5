// TIDs: the timestamp identifiers used as record keys and repo revisions.
//
// 13 characters of base32-sortable (234567a-z): a 64-bit value whose top bit
// is zero, then 53 bits of microseconds since the Unix epoch, then a 10-bit
// clock id. Byte order of the text equals numeric order. Tid values are
// immutable; TidClock is thread-safe.
#pragma once

#include <cstdint>
#include <expected>
#include <mutex>
#include <string>
#include <string_view>

namespace bulleted::ordering {

class Tid {
 public:
  static constexpr std::size_t kLength = 13;

  // Parses the 13-character form; the error is a human-readable reason.
  static std::expected<Tid, std::string> parse(std::string_view text);
  // REQUIRES: micros < 2^53, clock_id < 2^10.
  static Tid from_parts(std::uint64_t micros, std::uint32_t clock_id);

  std::uint64_t value() const { return value_; }
  std::uint64_t micros() const { return value_ >> 10; }
  std::uint32_t clock_id() const { return static_cast<std::uint32_t>(value_ & 0x3FF); }
  std::string str() const;

  friend auto operator<=>(const Tid&, const Tid&) = default;

 private:
  explicit Tid(std::uint64_t value) : value_(value) {}
  std::uint64_t value_;
};

inline bool is_valid_tid(std::string_view text) { return Tid::parse(text).has_value(); }

// Mints TIDs from the wall clock, strictly increasing within the process even
// when the clock stands still or steps back.
class TidClock {
 public:
  TidClock();  // random clock id
  explicit TidClock(std::uint32_t clock_id) : clock_id_(clock_id & 0x3FF) {}

  Tid next();
  // Never returns a TID at or below `floor` (used to stay above a stored rev).
  Tid next_after(const Tid& floor);

 private:
  std::mutex mutex_;
  std::uint32_t clock_id_;
  std::uint64_t last_micros_ = 0;
};

}  // namespace bulleted::ordering
