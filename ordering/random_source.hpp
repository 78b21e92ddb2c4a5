// Random sources for order-key jitter.
//
// Key generation draws one 32-bit value per branching digit from a
// RandomSource. Production uses EntropySource (seeded from the operating
// system); tests and benchmarks use Mulberry32 so that a seed gives one exact
// sequence of keys. A RandomSource is not thread-safe: give each thread, or
// each lock holder, its own.
#pragma once

#include <cstdint>

namespace bulleted::ordering {

class RandomSource {
 public:
  virtual ~RandomSource() = default;
  // Returns the next uniformly distributed 32-bit value.
  virtual std::uint32_t next() = 0;
};

// murmur3's 32-bit finaliser; spreads nearby seeds apart.
constexpr std::uint32_t fmix32(std::uint32_t h) {
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h;
}

// Uniform in [0, n) from one 32-bit draw, without division.
constexpr std::uint32_t below(std::uint32_t r, std::uint32_t n) {
  return static_cast<std::uint32_t>((static_cast<std::uint64_t>(r) * n) >> 32);
}

// mulberry32: 32 bits of state, the reference generator of the benchmarks.
class Mulberry32 final : public RandomSource {
 public:
  explicit Mulberry32(std::uint32_t state) : state_(state) {}
  // The reference stream for a seed: mulberry32(fmix32(seed)).
  static Mulberry32 from_seed(std::uint32_t seed) { return Mulberry32(fmix32(seed)); }

  std::uint32_t next() override {
    state_ += 0x6D2B79F5u;
    std::uint32_t t = state_;
    t = (t ^ (t >> 15)) * (t | 1u);
    t ^= t + (t ^ (t >> 7)) * (t | 61u);
    return t ^ (t >> 14);
  }

 private:
  std::uint32_t state_;
};

// Seeded once from std::random_device (the kernel's entropy), then mulberry32.
// Jitter needs unpredictability between processes, not cryptographic strength.
class EntropySource final : public RandomSource {
 public:
  EntropySource();
  std::uint32_t next() override { return stream_.next(); }

 private:
  Mulberry32 stream_;
};

}  // namespace bulleted::ordering
