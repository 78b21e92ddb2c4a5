// The one way out for fetches whose target or size comes from outside the
// app view: DID documents, handles, OAuth metadata and OAuth endpoints, and
// an app-password sign-in at a PDS (the JWT keys of service auth are in DID
// documents). Each fetch names its kind,
// which fixes its byte cap and timeout (kFetchKinds), and whose address it
// is: the operator's (the PLC directory, the handle resolver) is used as
// given; the network's is checked by the network policy first
// (firehose/client/network_policy.hpp).
//
// A GET that failed (no answer, an answer over the cap, or an HTTP status of
// 400 and up) is remembered for `negative_seconds`: asking again in that time
// gets the same failure without a fetch, so a flood of requests naming one
// unknown DID costs its directory one read.
//
// Fetches made while serving a request (a RequestScope on the thread) first
// take a place in the FetchGate: at most `total` requests at once hold one,
// one per client (pds mode's calls to users' PDSes: two per account,
// appview/signin/pds_sessions.cpp), each for the rest of its request. A
// request that finds no place is refused at once (kUnavailable, retry in a
// second); it never waits behind a slow host, and slow hosts can never hold
// more workers than the gate's places. Fetches outside a request (the firehose, the CLI) run on
// threads of their own and pass no gate.
//
// Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "firehose/client/xrpc_client.hpp"
#include "schema/error.hpp"

namespace bulleted::identity {

enum class FetchKind { kDidDocument, kHandle, kOAuthMetadata, kOAuthEndpoint, kPdsSignIn };

struct FetchKindInfo {
  FetchKind kind;
  std::string_view name;  // in logs and metrics
  std::size_t max_bytes;  // of an answer; no more is ever read
  std::chrono::seconds timeout;
};

inline constexpr FetchKindInfo kFetchKinds[] = {
    {FetchKind::kDidDocument, "did-document", 64 * 1024, std::chrono::seconds(5)},
    {FetchKind::kHandle, "handle", 8 * 1024, std::chrono::seconds(5)},
    {FetchKind::kOAuthMetadata, "oauth-metadata", 64 * 1024, std::chrono::seconds(5)},
    {FetchKind::kOAuthEndpoint, "oauth-endpoint", 64 * 1024, std::chrono::seconds(10)},
    {FetchKind::kPdsSignIn, "pds-sign-in", 64 * 1024, std::chrono::seconds(10)},
};
constexpr bool fetch_kinds_in_order() {
  for (std::size_t i = 0; i < std::size(kFetchKinds); ++i) {
    if (static_cast<std::size_t>(kFetchKinds[i].kind) != i) return false;
  }
  return static_cast<std::size_t>(FetchKind::kPdsSignIn) + 1 == std::size(kFetchKinds);
}
static_assert(fetch_kinds_in_order(), "one row per FetchKind, in the enum's order");

constexpr const FetchKindInfo& fetch_kind(FetchKind kind) {
  return kFetchKinds[static_cast<std::size_t>(kind)];
}

// Whose address a fetch goes to.
enum class Target {
  kOperator,  // configured by the operator: used as given
  kNetwork,   // named by the network: https, public addresses only
};

// Places for fetches made while serving requests: at most `total` requests
// hold one of a share at once, and a client holds at most one.
class FetchGate {
 public:
  explicit FetchGate(int total) : total_(std::max(1, total)) {}
  int total() const { return total_; }
  // A place for `client` in `share` (fetches to the network's hosts, or to
  // the operator's: each share has `total` places of its own, so requests
  // waiting on slow hosts of the network never keep another's fetch of the
  // PLC directory waiting), or nullopt when the client holds `per_client`
  // of that share already or every place of it is taken.
  class Place;
  std::optional<Place> try_enter(const std::string& client, int per_client = 1,
                                 Target share = Target::kNetwork);
  int held() const;
  std::uint64_t refused() const { return refused_.load(); }

  class Place {
   public:
    Place(FetchGate* gate, std::string client, Target share)
        : gate_(gate), client_(std::move(client)), share_(share) {}
    Place(Place&& other) noexcept
        : gate_(std::exchange(other.gate_, nullptr)),
          client_(std::move(other.client_)),
          share_(other.share_) {}
    Place& operator=(Place&&) = delete;
    ~Place();

   private:
    FetchGate* gate_;
    std::string client_;
    Target share_;
  };

 private:
  int total_;
  mutable std::mutex mutex_;
  std::map<std::string, int> clients_[2];  // by share
  std::atomic<std::uint64_t> refused_{0};
};

// The request a thread is serving, for the fetches it makes: created by the
// API around each request, with the client's key.
class RequestScope {
 public:
  RequestScope(FetchGate& gate, std::string client);
  ~RequestScope();
  RequestScope(const RequestScope&) = delete;
  RequestScope& operator=(const RequestScope&) = delete;

  // The scope of this thread's request, or nullptr.
  static RequestScope* current();
  const std::string& client() const { return client_; }
  // Holds a place of the gate's `share` for the rest of the request; false
  // when none is free (or the client's requests hold `per_client` already).
  bool hold(int per_client = 1, Target share = Target::kNetwork);
  // The same, the place counted as `client`'s (an account rather than the
  // address it came from) when the request holds none yet.
  bool hold_as(const std::string& client, int per_client, Target share = Target::kNetwork);

 private:
  FetchGate& gate_;
  std::string client_;
  std::optional<FetchGate::Place> places_[2];  // by share
  RequestScope* outer_;
};

struct FetcherOptions {
  // Lifts the network policy (test networks on 127.0.0.1).
  bool allow_private_addresses = false;
  std::chrono::seconds negative_seconds{60};
  std::size_t max_remembered_failures = 10'000;
};

// Makes the client of one kind: its timeout and byte cap.
using ClientMaker = std::function<std::shared_ptr<firehose::XrpcClient>(
    std::chrono::seconds timeout, std::size_t max_bytes)>;

class Fetcher {
 public:
  Fetcher(FetcherOptions options, const ClientMaker& make_client);
  // One client for every kind (tests' fakes); the caps still hold, checked
  // on the answer.
  static std::shared_ptr<Fetcher> over(std::shared_ptr<firehose::XrpcClient> client,
                                       FetcherOptions options = {});

  // Any answer is a value (the caller reads its status); kUnavailable when
  // no place of the request's gate is free; kInvalidRequest when the
  // network policy refuses the address; kPayloadTooLarge over the kind's
  // cap; kUpstreamFailure when nothing came back in time.
  Result<firehose::XrpcReply> fetch(FetchKind kind, Target target,
                                    const firehose::XrpcRequest& request);

  bool allow_private_addresses() const { return options_.allow_private_addresses; }
  // Fetches sent, and failures answered from memory instead.
  std::uint64_t sent() const { return sent_.load(); }
  std::uint64_t remembered_hits() const { return remembered_hits_.load(); }

 private:
  struct Failure {
    std::optional<firehose::XrpcReply> reply;  // an answer of 400 and up
    Error error{ErrorCode::kUpstreamFailure, ""};
    std::chrono::steady_clock::time_point until;
  };
  std::optional<Result<firehose::XrpcReply>> remembered(const std::string& key);
  void remember(const std::string& key, const Result<firehose::XrpcReply>& outcome);

  FetcherOptions options_;
  std::shared_ptr<firehose::XrpcClient> clients_[std::size(kFetchKinds)];
  std::mutex mutex_;
  std::map<std::string, Failure> failures_;
  std::deque<std::string> failure_order_;  // oldest first
  std::atomic<std::uint64_t> sent_{0};
  std::atomic<std::uint64_t> remembered_hits_{0};
};

}  // namespace bulleted::identity
