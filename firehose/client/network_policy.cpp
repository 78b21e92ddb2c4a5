#include "firehose/client/network_policy.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <array>
#include <cstring>

namespace bulleted::firehose {
namespace {

bool private_v4(const unsigned char* a) {
  return a[0] == 0 || a[0] == 10 || a[0] == 127 ||   // this network, private, loopback
         (a[0] == 100 && (a[1] & 0xc0) == 64) ||     // carrier-grade NAT 100.64/10
         (a[0] == 169 && a[1] == 254) ||             // link-local
         (a[0] == 172 && (a[1] & 0xf0) == 16) ||     // 172.16/12
         (a[0] == 192 && a[1] == 168) ||             // 192.168/16
         (a[0] == 192 && a[1] == 0 && a[2] == 0) ||  // IETF protocol assignments
         (a[0] == 198 && (a[1] & 0xfe) == 18) ||     // benchmarking 198.18/15
         a[0] >= 224;                                // multicast and reserved
}

bool private_v6(const unsigned char* a) {
  static constexpr std::array<unsigned char, 16> kLoopback = {0, 0, 0, 0, 0, 0, 0, 0,
                                                              0, 0, 0, 0, 0, 0, 0, 1};
  static constexpr std::array<unsigned char, 16> kAny{};
  if (std::memcmp(a, kLoopback.data(), 16) == 0 || std::memcmp(a, kAny.data(), 16) == 0) {
    return true;
  }
  // IPv4-mapped ::ffff:a.b.c.d: the IPv4 rules.
  static constexpr std::array<unsigned char, 12> kMapped = {0, 0, 0, 0, 0,    0,
                                                            0, 0, 0, 0, 0xff, 0xff};
  if (std::memcmp(a, kMapped.data(), 12) == 0) return private_v4(a + 12);
  return (a[0] & 0xfe) == 0xfc ||                    // unique local fc00::/7
         (a[0] == 0xfe && (a[1] & 0xc0) == 0x80) ||  // link-local fe80::/10
         a[0] == 0xff;                               // multicast
}

}  // namespace

bool is_private_address(std::string_view text) {
  const std::string address(text);
  unsigned char bytes[16];
  if (inet_pton(AF_INET, address.c_str(), bytes) == 1) return private_v4(bytes);
  if (inet_pton(AF_INET6, address.c_str(), bytes) == 1) return private_v6(bytes);
  return false;
}

Result<std::pair<std::string, std::string>> split_url(std::string_view url) {
  const std::size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) {
    return fail(ErrorCode::kInvalidRequest, "not an absolute URL");
  }
  const std::string_view scheme = url.substr(0, scheme_end);
  if (scheme != "https" && scheme != "http") {
    return fail(ErrorCode::kInvalidRequest, "not an http(s) URL");
  }
  const std::size_t host_start = scheme_end + 3;
  std::size_t rest = url.find_first_of("/?#", host_start);
  if (rest == std::string_view::npos) rest = url.size();
  const std::string_view authority = url.substr(host_start, rest - host_start);
  if (authority.empty() || authority.find('@') != std::string_view::npos ||
      authority.find(' ') != std::string_view::npos) {
    return fail(ErrorCode::kInvalidRequest, "a URL with no host, or with credentials");
  }
  std::string tail(url.substr(rest));
  if (const std::size_t fragment = tail.find('#'); fragment != std::string::npos) {
    tail.resize(fragment);
  }
  if (tail.empty() || tail[0] != '/') tail.insert(0, "/");
  return std::pair{std::string(url.substr(0, rest)), tail};
}

Result<void> check_network_url(std::string_view url, bool allow_private) {
  auto parts = split_url(url);
  if (!parts) return std::unexpected(parts.error());
  if (allow_private) return {};
  if (!url.starts_with("https://")) {
    return fail(ErrorCode::kInvalidRequest, "an address from the network must be https");
  }
  std::string host = parts->first.substr(8);
  if (host.starts_with("[")) {
    const std::size_t close = host.find(']');
    if (close == std::string::npos) return fail(ErrorCode::kInvalidRequest, "a bad IPv6 host");
    host = host.substr(1, close - 1);
  } else if (const std::size_t colon = host.rfind(':'); colon != std::string::npos) {
    host.resize(colon);
  }
  if (host.empty() || host == "localhost" || host.ends_with(".localhost")) {
    return fail(ErrorCode::kInvalidRequest, "an address from the network names this machine");
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0 || found == nullptr) {
    return fail(ErrorCode::kUpstreamFailure, "cannot resolve " + host);
  }
  bool refused = false;
  for (addrinfo* entry = found; entry != nullptr; entry = entry->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    const void* raw =
        entry->ai_family == AF_INET
            ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(entry->ai_addr)->sin_addr)
            : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(entry->ai_addr)->sin6_addr);
    if (inet_ntop(entry->ai_family, raw, text, sizeof text) == nullptr ||
        is_private_address(text)) {
      refused = true;
    }
  }
  freeaddrinfo(found);
  if (refused) {
    return fail(ErrorCode::kInvalidRequest,
                host + " is, or resolves to, an address the network may not send this app view to");
  }
  return {};
}

}  // namespace bulleted::firehose
