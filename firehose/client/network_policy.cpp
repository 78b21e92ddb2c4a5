#include "firehose/client/network_policy.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <array>
#include <cstring>

#include "firehose/client/name_lookup.hpp"

namespace bulleted::firehose {
namespace {

// A block of addresses: its first bytes and prefix length.
struct Block {
  std::array<unsigned char, 16> bytes;
  int bits;
  const char* what;
};

bool in_block(const unsigned char* address, const Block& block) {
  int bits = block.bits;
  for (int i = 0; bits > 0; ++i, bits -= 8) {
    const unsigned char mask = bits >= 8 ? 0xff : static_cast<unsigned char>(0xff << (8 - bits));
    if ((address[i] & mask) != (block.bytes[i] & mask)) return false;
  }
  return true;
}

// IANA's IPv4 Special-Purpose Address Registry: every block that is not
// globally reachable, plus the deprecated 6to4 relay anycast (RFC 7526),
// and multicast and the reserved space above it. Only what is left may be
// the target of an address the network names.
constexpr Block kSpecialV4[] = {
    {{0}, 8, "this network"},
    {{10}, 8, "private"},
    {{100, 64}, 10, "shared (carrier-grade NAT)"},
    {{127}, 8, "loopback"},
    {{169, 254}, 16, "link-local"},
    {{172, 16}, 12, "private"},
    {{192, 0, 0}, 24, "IETF protocol assignments"},
    {{192, 0, 2}, 24, "documentation"},
    {{192, 31, 196}, 24, "AS112"},
    {{192, 52, 193}, 24, "AMT"},
    {{192, 88, 99}, 24, "6to4 relay anycast"},
    {{192, 168}, 16, "private"},
    {{192, 175, 48}, 24, "AS112 direct delegation"},
    {{198, 18}, 15, "benchmarking"},
    {{198, 51, 100}, 24, "documentation"},
    {{203, 0, 113}, 24, "documentation"},
    {{224}, 4, "multicast"},
    {{240}, 4, "reserved, and the limited broadcast address"},
};

bool private_v4(const unsigned char* a) {
  for (const Block& block : kSpecialV4) {
    if (in_block(a, block)) return true;
  }
  return false;
}

// IPv6: only global unicast (2000::/3) is reachable, less the blocks of
// IANA's IPv6 Special-Purpose Address Registry inside it (each either not
// globally reachable, or carrying an IPv4 address inside it that could
// lead back to a private one: Teredo, 6to4, NAT64). IPv4-mapped addresses
// follow the IPv4 rules; every other form (IPv4-compatible, IPv4-translated
// ::ffff:0:a.b.c.d, 64:ff9b::/96 and 64:ff9b:1::/48, discard 100::/64,
// unique local, site-local, link-local, multicast) is outside 2000::/3.
constexpr Block kGlobalV6 = {{0x20}, 3, "global unicast"};
constexpr Block kSpecialV6[] = {
    {{0x20, 0x01}, 23, "IETF protocol assignments (Teredo, ORCHID, benchmarking, ...)"},
    {{0x20, 0x01, 0x0d, 0xb8}, 32, "documentation"},
    {{0x20, 0x02}, 16, "6to4"},
    {{0x3f, 0xff}, 20, "documentation"},
};

bool private_v6(const unsigned char* a) {
  static constexpr std::array<unsigned char, 12> kMapped = {0, 0, 0, 0, 0,    0,
                                                            0, 0, 0, 0, 0xff, 0xff};
  if (std::memcmp(a, kMapped.data(), 12) == 0) return private_v4(a + 12);
  if (!in_block(a, kGlobalV6)) return true;
  for (const Block& block : kSpecialV6) {
    if (in_block(a, block)) return true;
  }
  return false;
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
  // An address written out (in any form the system reads as one) is checked
  // here; a name is left to the HTTP client, which looks it up once, by its
  // exchange's deadline, and checks the addresses it connects to.
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST;
  addrinfo* literal = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &literal) != 0 || literal == nullptr) return {};
  const AddressInfo found(literal);
  bool refused = false;
  for (addrinfo* entry = found.get(); entry != nullptr; entry = entry->ai_next) {
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
  if (refused) {
    return fail(ErrorCode::kInvalidRequest,
                host + " is an address the network may not send this app view to");
  }
  return {};
}

}  // namespace bulleted::firehose
