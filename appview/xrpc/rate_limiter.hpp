// Per-client limits: a token bucket per client key holding `per_minute`
// units and refilling at that rate. A request over the limit is told how
// many seconds to wait (Retry-After). Units are requests for procedures and
// sign-in attempts, bytes produced for queries: a query is granted what
// the bucket holds (up to its answer's bound) before it runs, and gives back
// what its answer did not use, so the bucket never goes below zero for
// answers bounded in advance; a streamed export is charged as it is written.
// Idle buckets are forgotten, so memory stays bounded by the clients of the
// last few minutes.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>

namespace bulleted::appview {

// Who a limit counts against: a client's address (TrustedProxies'
// client_key: an IPv4 address or an IPv6 /64), a DID a verified JWT
// proved, an app view token (by its digest), or an account named at
// sign-in. Each kind is a space of its own: no value of one kind stands
// for another's.
struct ClientKey {
  enum class Kind { kAddress, kDid, kToken, kAccount };
  Kind kind = Kind::kAddress;
  std::string value;

  static ClientKey address(std::string value) { return {Kind::kAddress, std::move(value)}; }
  static ClientKey did(std::string value) { return {Kind::kDid, std::move(value)}; }
  static ClientKey token(std::string digest) { return {Kind::kToken, std::move(digest)}; }
  static ClientKey account(std::string value) { return {Kind::kAccount, std::move(value)}; }
  // "address 198.51.100.7", "did did:plc:..." (for logs and other rooms' keys).
  std::string str() const;
  auto operator<=>(const ClientKey&) const = default;
};

class RateLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  // 0 turns the limit off.
  explicit RateLimiter(double per_minute) : per_minute_(per_minute) {}

  // Takes `cost` units. nullopt when the request may go ahead; otherwise the
  // seconds to wait (nothing is taken).
  std::optional<int> take(const ClientKey& client, double cost = 1.0,
                          Clock::time_point now = Clock::now());
  std::optional<int> take(const ClientKey& client, Clock::time_point now) {
    return take(client, 1.0, now);
  }
  // Takes `cost` units whatever the bucket holds.
  void charge(const ClientKey& client, double cost, Clock::time_point now = Clock::now());
  // Takes what the bucket holds, up to `most` units, before the work that
  // spends them: the units granted (all of `most` when the limit is off),
  // or the seconds to wait when the bucket holds less than one unit. What
  // the work did not spend goes back with give_back().
  struct Grant {
    double units = 0;
    std::optional<int> wait;
  };
  Grant take_up_to(const ClientKey& client, double most, Clock::time_point now = Clock::now());
  // Pays for `units` already used: takes what the budget holds and owes
  // the rest (the client's next asks wait until it is repaid). What it
  // held of them (0: the client was already spent).
  double spend(const ClientKey& client, double units, Clock::time_point now = Clock::now());
  void give_back(const ClientKey& client, double units, Clock::time_point now = Clock::now());
  bool enabled() const { return per_minute_ > 0; }

 private:
  struct Bucket {
    double tokens;
    Clock::time_point updated;
  };
  Bucket& refill(const ClientKey& client, Clock::time_point now);
  void forget_idle(Clock::time_point now);

  double per_minute_;
  std::mutex mutex_;
  std::map<ClientKey, Bucket> buckets_;
  Clock::time_point last_sweep_{};
};

// Requests that run long (streamed exports): at most one per client and
// `total` at once, so that the rest of the worker pool stays free for
// everyone else.
class LongRequestGate {
 public:
  explicit LongRequestGate(int total) : total_(total) {}

  // A pass that releases its place when destroyed.
  class Pass {
   public:
    Pass(LongRequestGate* gate, ClientKey client) : gate_(gate), client_(std::move(client)) {}
    ~Pass();
    Pass(const Pass&) = delete;
    Pass& operator=(const Pass&) = delete;

   private:
    LongRequestGate* gate_;
    ClientKey client_;
  };
  enum class Refusal { kClientBusy, kServerBusy };
  // A pass, or why there is none.
  std::variant<std::unique_ptr<Pass>, Refusal> enter(const ClientKey& client);

 private:
  std::mutex mutex_;
  int total_;
  int running_ = 0;
  std::map<ClientKey, int> per_client_;
};

// Work that may only run so many at once (searches): a place is waited for
// briefly by at most `waiting` requests (each holds a worker while it
// waits); the rest are refused at once.
class WorkGate {
 public:
  WorkGate(int total, int waiting) : total_(total), most_waiting_(waiting) {}

  // Holds a place until destroyed.
  class Place {
   public:
    explicit Place(WorkGate* gate) : gate_(gate) {}
    ~Place();
    Place(const Place&) = delete;
    Place& operator=(const Place&) = delete;

   private:
    WorkGate* gate_;
  };
  // A place, or null when none came free within `wait`.
  std::unique_ptr<Place> enter(std::chrono::milliseconds wait);
  int running() const;
  int waiting() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  int total_;
  int most_waiting_;
  int running_ = 0;
  int waiting_ = 0;
};

}  // namespace bulleted::appview
