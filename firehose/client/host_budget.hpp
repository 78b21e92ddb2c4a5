// A request budget per host for fetches the network sends the app view to
// (getRepo at a relay and at every PDS it redirects to): each host gets
// `per_second` requests a second, in bursts of as many, so a backfill of
// thousands of repos never hammers one PDS. A token bucket per host; a
// caller that finds the bucket empty reserves the next token and waits.
// Thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>

namespace bulleted::firehose {

class HostBudget {
 public:
  using Clock = std::chrono::steady_clock;

  // per_second <= 0: no limit. At most `max_hosts` buckets are kept (idle
  // ones, full again, are dropped first).
  explicit HostBudget(double per_second, std::size_t max_hosts = 10'000);

  // Takes a request for `host` at `now` and says how long the caller must
  // wait before sending it (zero while the host's burst lasts).
  Clock::duration reserve(const std::string& host, Clock::time_point now);

  // reserve() at the current time, then waits; false (without waiting out
  // the rest) once `stopping` says so.
  bool acquire(const std::string& host, const std::function<bool()>& stopping = {});

  std::size_t hosts() const;

 private:
  struct Bucket {
    double tokens;
    Clock::time_point at;
  };
  double refilled(const Bucket& bucket, Clock::time_point now) const;

  double per_second_;
  double burst_;
  std::size_t max_hosts_;
  mutable std::mutex mutex_;
  std::map<std::string, Bucket> buckets_;
};

}  // namespace bulleted::firehose
