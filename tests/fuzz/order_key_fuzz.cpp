// libFuzzer target, differential: order keys from arbitrary bytes. Validation
// never crashes; for any two valid keys (in either order) and any jitter
// seed, every key between() and n_between() produce is valid, at most 512
// bytes, and strictly between its bounds; refusals are OutOfOrder or
// Exhausted, never anything else.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>

#include "ordering/order_key.hpp"

using namespace bulleted::ordering;

namespace {

void check_key(const std::string& key, std::optional<std::string_view> lo,
               std::optional<std::string_view> hi) {
  if (!is_valid_key(key) || key.size() > kMaxKeyBytes) std::abort();
  if (lo && !(*lo < key)) std::abort();
  if (hi && !(key < *hi)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 6) return 0;
  std::uint32_t seed;
  std::memcpy(&seed, data, 4);
  const std::size_t count = data[4] % 8;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 5, size - 5);
  const std::size_t split = rest.find('|');
  const std::string_view a = rest.substr(0, split);
  const std::string_view b =
      split == std::string_view::npos ? std::string_view{} : rest.substr(split + 1);
  (void)invalid_reason(a);
  (void)invalid_reason(b);
  Mulberry32 jitter = Mulberry32::from_seed(seed);
  const std::optional<std::string_view> lo = a.empty() ? std::nullopt : std::optional(a);
  const std::optional<std::string_view> hi = b.empty() ? std::nullopt : std::optional(b);
  const bool valid = (!lo || is_valid_key(*lo)) && (!hi || is_valid_key(*hi));
  auto one = between(lo, hi, jitter);
  if (one) {
    if (!valid) std::abort();
    check_key(*one, lo, hi);
  } else if (valid && one.error().code == KeyErrorCode::kInvalidKey) {
    std::abort();
  }
  auto many = n_between(lo, hi, count, jitter);
  if (many) {
    if (many->size() != count) std::abort();
    std::optional<std::string_view> previous = lo;
    for (const auto& key : *many) {
      check_key(key, previous, hi);
      previous = key;
    }
  }
  return 0;
}
