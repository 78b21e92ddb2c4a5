// Per-client limits on procedures: a token bucket per client (its bearer
// token's digest, else its address) holding `per_minute` requests and
// refilling at that rate. A client over its limit is told how many seconds
// to wait (Retry-After). Idle buckets are forgotten, so memory stays bounded
// by the clients of the last few minutes.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace bulleted::appview {

class RateLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  // 0 turns the limit off.
  explicit RateLimiter(int per_minute) : per_minute_(per_minute) {}

  // nullopt when the request may go ahead; otherwise the seconds to wait.
  std::optional<int> take(const std::string& client, Clock::time_point now = Clock::now());

 private:
  struct Bucket {
    double tokens;
    Clock::time_point updated;
  };
  void forget_idle(Clock::time_point now);

  int per_minute_;
  std::mutex mutex_;
  std::map<std::string, Bucket> buckets_;
  Clock::time_point last_sweep_{};
};

}  // namespace bulleted::appview
