#include "firehose/client/host_budget.hpp"

#include <algorithm>
#include <thread>

namespace bulleted::firehose {

HostBudget::HostBudget(double per_second, std::size_t max_hosts)
    : per_second_(per_second), burst_(std::max(1.0, per_second)), max_hosts_(max_hosts) {}

double HostBudget::refilled(const Bucket& bucket, Clock::time_point now) const {
  const double elapsed = std::chrono::duration<double>(now - bucket.at).count();
  return std::min(burst_, bucket.tokens + std::max(0.0, elapsed) * per_second_);
}

HostBudget::Clock::duration HostBudget::reserve(const std::string& host, Clock::time_point now) {
  if (per_second_ <= 0) return Clock::duration::zero();
  std::lock_guard lock(mutex_);
  auto it = buckets_.find(host);
  if (it == buckets_.end()) {
    if (buckets_.size() >= max_hosts_) {
      std::erase_if(buckets_,
                    [&](const auto& entry) { return refilled(entry.second, now) >= burst_; });
    }
    it = buckets_.emplace(host, Bucket{burst_, now}).first;
  }
  Bucket& bucket = it->second;
  // Below zero: requests already waiting for tokens still to come.
  bucket.tokens = refilled(bucket, now) - 1.0;
  bucket.at = std::max(bucket.at, now);
  if (bucket.tokens >= 0) return Clock::duration::zero();
  return std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(-bucket.tokens / per_second_));
}

bool HostBudget::acquire(const std::string& host, const std::function<bool()>& stopping) {
  const auto until = Clock::now() + reserve(host, Clock::now());
  while (Clock::now() < until) {
    if (stopping && stopping()) return false;
    std::this_thread::sleep_for(
        std::min<Clock::duration>(until - Clock::now(), std::chrono::milliseconds(100)));
  }
  return !(stopping && stopping());
}

std::size_t HostBudget::hosts() const {
  std::lock_guard lock(mutex_);
  return buckets_.size();
}

}  // namespace bulleted::firehose
