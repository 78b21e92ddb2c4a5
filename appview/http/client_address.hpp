// Who is calling, as far as the network says: the TCP peer, or, when the
// peer is one of the operator's trusted proxies (`server.trustedProxies`:
// addresses or CIDR ranges), the address the proxy reports. X-Forwarded-For
// is read from the right, skipping trusted proxies, so a client cannot
// choose its address by sending the header itself; X-Real-IP is used when
// X-Forwarded-For is absent. Headers from any other peer are ignored.
//
// Immutable after construction; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "appview/http/server.hpp"
#include "schema/error.hpp"

namespace bulleted::appview {

class TrustedProxies {
 public:
  TrustedProxies() = default;
  // Each entry an IPv4 or IPv6 address, optionally with a /prefix.
  static Result<TrustedProxies> parse(const std::vector<std::string>& entries);

  bool contains(std::string_view address) const;
  // The client's address for `head` (see above).
  std::string client_address(const HttpRequestHead& head) const;
  // The key the client's limits are kept under: its address in one
  // canonical spelling, an IPv4 address (IPv4-mapped IPv6 included) as
  // "a.b.c.d", an IPv6 address as its /64 ("2001:db8:1:2::/64": one
  // subscriber is usually given a whole /64, so one key per /128 would let
  // it choose among 2^64 keys).
  std::string client_key(const HttpRequestHead& head) const;

 private:
  struct Range {
    std::array<std::uint8_t, 16> bytes{};
    int prefix_bits = 0;
  };
  std::vector<Range> ranges_;
};

// An address in the spelling client_key() gives it; text that is not an
// address is kept as it is.
std::string canonical_client(std::string_view address);

}  // namespace bulleted::appview
