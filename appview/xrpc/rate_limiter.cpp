#include "appview/xrpc/rate_limiter.hpp"

#include <algorithm>
#include <cmath>

namespace bulleted::appview {

std::string ClientKey::str() const {
  static constexpr std::string_view kNames[] = {"address", "did", "token", "account"};
  return std::string(kNames[static_cast<int>(kind)]) + " " + value;
}

RateLimiter::Bucket& RateLimiter::refill(const ClientKey& client, Clock::time_point now) {
  const double capacity = per_minute_;
  const double per_second = per_minute_ / 60.0;
  forget_idle(now);
  auto [it, fresh] = buckets_.try_emplace(client, Bucket{capacity, now});
  Bucket& bucket = it->second;
  if (!fresh) {
    const double elapsed = std::chrono::duration<double>(now - bucket.updated).count();
    bucket.tokens = std::min(capacity, bucket.tokens + elapsed * per_second);
    bucket.updated = now;
  }
  return bucket;
}

std::optional<int> RateLimiter::take(const ClientKey& client, double cost, Clock::time_point now) {
  if (per_minute_ <= 0) return std::nullopt;
  std::lock_guard lock(mutex_);
  Bucket& bucket = refill(client, now);
  if (bucket.tokens >= cost) {
    bucket.tokens -= cost;
    return std::nullopt;
  }
  const double per_second = per_minute_ / 60.0;
  return std::max(1, static_cast<int>(std::ceil((cost - bucket.tokens) / per_second)));
}

void RateLimiter::charge(const ClientKey& client, double cost, Clock::time_point now) {
  if (per_minute_ <= 0 || cost <= 0) return;
  std::lock_guard lock(mutex_);
  refill(client, now).tokens -= cost;
}

RateLimiter::Grant RateLimiter::take_up_to(const ClientKey& client, double most,
                                           Clock::time_point now) {
  if (per_minute_ <= 0) return Grant{most, std::nullopt};
  std::lock_guard lock(mutex_);
  Bucket& bucket = refill(client, now);
  if (bucket.tokens < 1) {
    const double per_second = per_minute_ / 60.0;
    return Grant{0, std::max(1, static_cast<int>(std::ceil((1 - bucket.tokens) / per_second)))};
  }
  const double granted = std::min(most, bucket.tokens);
  bucket.tokens -= granted;
  return Grant{granted, std::nullopt};
}

double RateLimiter::spend(const ClientKey& client, double units, Clock::time_point now) {
  if (per_minute_ <= 0) return units;
  std::lock_guard lock(mutex_);
  Bucket& bucket = refill(client, now);
  const double held = std::clamp(bucket.tokens, 0.0, units);
  bucket.tokens -= units;
  return held;
}

void RateLimiter::give_back(const ClientKey& client, double units, Clock::time_point now) {
  if (per_minute_ <= 0 || units <= 0) return;
  std::lock_guard lock(mutex_);
  Bucket& bucket = refill(client, now);
  bucket.tokens = std::min(per_minute_, bucket.tokens + units);
}

void RateLimiter::forget_idle(Clock::time_point now) {
  if (now - last_sweep_ < std::chrono::seconds(30)) return;
  last_sweep_ = now;
  // A bucket that has refilled is the same as no bucket; one in debt stays.
  const double per_second = per_minute_ / 60.0;
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    const double elapsed = std::chrono::duration<double>(now - it->second.updated).count();
    const bool full = it->second.tokens + elapsed * per_second >= per_minute_;
    it = full ? buckets_.erase(it) : std::next(it);
  }
}

LongRequestGate::Pass::~Pass() {
  std::lock_guard lock(gate_->mutex_);
  --gate_->running_;
  if (--gate_->per_client_[client_] <= 0) gate_->per_client_.erase(client_);
}

std::variant<std::unique_ptr<LongRequestGate::Pass>, LongRequestGate::Refusal>
LongRequestGate::enter(const ClientKey& client) {
  std::lock_guard lock(mutex_);
  if (per_client_.contains(client)) return Refusal::kClientBusy;
  if (running_ >= total_) return Refusal::kServerBusy;
  ++running_;
  ++per_client_[client];
  return std::make_unique<Pass>(this, client);
}

WorkGate::Place::~Place() {
  {
    std::lock_guard lock(gate_->mutex_);
    --gate_->running_;
  }
  gate_->freed_.notify_one();
}

std::unique_ptr<WorkGate::Place> WorkGate::enter(std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  if (running_ >= total_) {
    if (waiting_ >= most_waiting_) return nullptr;
    ++waiting_;
    const bool freed = freed_.wait_for(lock, wait, [&] { return running_ < total_; });
    --waiting_;
    if (!freed) return nullptr;
  }
  ++running_;
  return std::make_unique<Place>(this);
}

int WorkGate::running() const {
  std::lock_guard lock(mutex_);
  return running_;
}

int WorkGate::waiting() const {
  std::lock_guard lock(mutex_);
  return waiting_;
}

}  // namespace bulleted::appview
