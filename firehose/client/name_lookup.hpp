// Name lookups bounded by a deadline. getaddrinfo() waits on name servers
// the network may choose (a handle's or a did:web's domain, a PDS's host)
// for as long as the system resolver's timeouts allow, up to half a minute,
// and cannot be stopped. So each lookup runs on a thread of its own; its
// caller waits until its deadline and then leaves it, and a lookup left
// behind frees its answer when it ends. At most `max_running` lookups run
// at once, those left behind included: more are refused at once, so slow
// name servers hold a bounded number of threads and no caller past its
// deadline. An address written out (an IPv4 or IPv6 literal) is read at
// once, without a thread.
//
// Shares: lookups a request makes for a name the network gave it (a
// ForClient on its thread) may take at most `request_share` of the places,
// and one client at most `per_client` of them, those left behind included;
// the rest (the process's own work: the firehose, backfill, resyncs, the
// operator's hosts) may take every place. So requests naming names on slow
// name servers never leave the operator's lookups without a place, and one
// client cannot take the requests' share from the others.
#pragma once

#include <netdb.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "schema/error.hpp"

namespace bulleted::firehose {

// An answer of getaddrinfo(), freed with freeaddrinfo().
struct AddressInfoFree {
  void operator()(addrinfo* found) const { freeaddrinfo(found); }
};
using AddressInfo = std::unique_ptr<addrinfo, AddressInfoFree>;

class NameLookups {
 public:
  // getaddrinfo() itself, or what stands for it.
  using Lookup = int (*)(const char* host, const char* port, const addrinfo* hints,
                         addrinfo** found);
  static constexpr std::size_t kMaxRunning = 64;
  static constexpr std::size_t kPerClient = 4;

  // `request_share`: 0 is half of `max_running`.
  explicit NameLookups(std::size_t max_running = kMaxRunning, Lookup lookup = ::getaddrinfo,
                       std::size_t request_share = 0, std::size_t per_client = kPerClient);

  // While one lives on a thread, the lookups made there are a request's for
  // `client` (its key), in the requests' share.
  class ForClient {
   public:
    explicit ForClient(std::string client);
    ~ForClient();
    ForClient(const ForClient&) = delete;
    ForClient& operator=(const ForClient&) = delete;

   private:
    std::string client_;
    const std::string* outer_;
  };
  // Waits for the lookups left behind.
  ~NameLookups();
  NameLookups(const NameLookups&) = delete;
  NameLookups& operator=(const NameLookups&) = delete;

  // The process's own (never destroyed: lookups left behind may outlive
  // everything else).
  static NameLookups& shared();

  // `host`'s addresses (`port` may be empty), or kUpstreamFailure: the name
  // is not known, the deadline passed first, or max_running lookups run.
  Result<AddressInfo> look_up(const std::string& host, const std::string& port,
                              const addrinfo& hints,
                              std::chrono::steady_clock::time_point deadline);

  // Lookups running now, those left behind included.
  std::size_t running() const;
  // The same, the requests' share of them, and the lookups refused for want
  // of a place since the start (the operator's metrics).
  struct Counts {
    std::size_t running = 0;
    std::size_t requests = 0;
    std::uint64_t refused = 0;
  };
  Counts counts() const;

 private:
  struct Pending;
  // Takes a place for a lookup of `client`'s (empty: the process's own), or
  // says why there is none.
  std::optional<std::string> take_place(const std::string& client, const std::string& host);
  void give_place(const std::string& client);

  const std::size_t max_running_;
  const Lookup lookup_;
  const std::size_t request_share_;
  const std::size_t per_client_;
  mutable std::mutex mutex_;
  std::condition_variable ended_;
  std::size_t running_ = 0;
  std::size_t requests_running_ = 0;
  std::uint64_t refused_ = 0;
  std::map<std::string, std::size_t> clients_;  // requests' lookups running, by client
};

}  // namespace bulleted::firehose
