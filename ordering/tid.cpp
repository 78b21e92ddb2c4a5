#include "ordering/tid.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <random>

namespace bulleted::ordering {
namespace {

constexpr char kAlphabet[] = "234567abcdefghijklmnopqrstuvwxyz";

constexpr std::array<std::int8_t, 256> kValue = [] {
  std::array<std::int8_t, 256> table{};
  table.fill(-1);
  for (int i = 0; i < 32; ++i) table[static_cast<unsigned char>(kAlphabet[i])] = i;
  return table;
}();

std::uint64_t now_micros() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(now).count());
}

}  // namespace

std::expected<Tid, std::string> Tid::parse(std::string_view text) {
  if (text.size() != kLength) return std::unexpected("a TID is 13 characters");
  std::uint64_t value = 0;
  for (char c : text) {
    const int v = kValue[static_cast<unsigned char>(c)];
    if (v < 0) return std::unexpected("a TID uses only the characters 234567a-z");
    value = (value << 5) | static_cast<std::uint64_t>(v);
  }
  // 13 * 5 = 65 bits: the first character carries the top bit twice over.
  if (kValue[static_cast<unsigned char>(text[0])] >= 16) {
    return std::unexpected("a TID's top bit must be zero");
  }
  return Tid(value);
}

Tid Tid::from_parts(std::uint64_t micros, std::uint32_t clock_id) {
  return Tid(((micros & ((1ULL << 53) - 1)) << 10) | (clock_id & 0x3FF));
}

std::string Tid::str() const {
  std::string out(kLength, '2');
  std::uint64_t v = value_;
  for (std::size_t i = kLength; i-- > 0;) {
    out[i] = kAlphabet[v & 31];
    v >>= 5;
  }
  return out;
}

TidClock::TidClock() {
  std::random_device device;
  clock_id_ = device() & 0x3FF;
}

Tid TidClock::next() {
  std::lock_guard lock(mutex_);
  last_micros_ = std::max(now_micros(), last_micros_ + 1);
  return Tid::from_parts(last_micros_, clock_id_);
}

Tid TidClock::next_after(const Tid& floor) {
  std::lock_guard lock(mutex_);
  last_micros_ = std::max({now_micros(), last_micros_ + 1, floor.micros() + 1});
  return Tid::from_parts(last_micros_, clock_id_);
}

}  // namespace bulleted::ordering
