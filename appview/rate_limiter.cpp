#include "appview/rate_limiter.hpp"

#include <cmath>

namespace bulleted::appview {

std::optional<int> RateLimiter::take(const std::string& client, Clock::time_point now) {
  if (per_minute_ <= 0) return std::nullopt;
  const double capacity = per_minute_;
  const double per_second = per_minute_ / 60.0;
  std::lock_guard lock(mutex_);
  forget_idle(now);
  auto [it, fresh] = buckets_.try_emplace(client, Bucket{capacity, now});
  Bucket& bucket = it->second;
  if (!fresh) {
    const double elapsed = std::chrono::duration<double>(now - bucket.updated).count();
    bucket.tokens = std::min(capacity, bucket.tokens + elapsed * per_second);
    bucket.updated = now;
  }
  if (bucket.tokens >= 1.0) {
    bucket.tokens -= 1.0;
    return std::nullopt;
  }
  return std::max(1, static_cast<int>(std::ceil((1.0 - bucket.tokens) / per_second)));
}

void RateLimiter::forget_idle(Clock::time_point now) {
  if (now - last_sweep_ < std::chrono::seconds(30)) return;
  last_sweep_ = now;
  // A bucket idle for a minute is full again: the same as no bucket.
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    it = now - it->second.updated > std::chrono::minutes(1) ? buckets_.erase(it) : std::next(it);
  }
}

}  // namespace bulleted::appview
