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
#pragma once

#include <netdb.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
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

  explicit NameLookups(std::size_t max_running = kMaxRunning, Lookup lookup = ::getaddrinfo);
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

 private:
  struct Pending;

  const std::size_t max_running_;
  const Lookup lookup_;
  mutable std::mutex mutex_;
  std::condition_variable ended_;
  std::size_t running_ = 0;
};

}  // namespace bulleted::firehose
