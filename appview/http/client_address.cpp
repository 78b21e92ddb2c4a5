#include "appview/http/client_address.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <cstring>

namespace bulleted::appview {
namespace {

// An address as 16 bytes (IPv4 as IPv4-mapped IPv6), or nullopt.
std::optional<std::array<std::uint8_t, 16>> address_bytes(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  if (text.empty() || text.size() > 45) return std::nullopt;
  const std::string copy(text);
  std::array<std::uint8_t, 16> out{};
  in_addr v4{};
  if (inet_pton(AF_INET, copy.c_str(), &v4) == 1) {
    out[10] = 0xff;
    out[11] = 0xff;
    std::memcpy(out.data() + 12, &v4, 4);
    return out;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, copy.c_str(), &v6) == 1) {
    std::memcpy(out.data(), &v6, 16);
    return out;
  }
  return std::nullopt;
}

bool is_v4_mapped(const std::array<std::uint8_t, 16>& bytes) {
  for (int i = 0; i < 10; ++i) {
    if (bytes[i] != 0) return false;
  }
  return bytes[10] == 0xff && bytes[11] == 0xff;
}

}  // namespace

std::string canonical_client(std::string_view address) {
  auto bytes = address_bytes(address);
  if (!bytes) return std::string(address);
  char text[INET6_ADDRSTRLEN] = {};
  if (is_v4_mapped(*bytes)) {
    inet_ntop(AF_INET, bytes->data() + 12, text, sizeof text);
    return text;
  }
  std::fill(bytes->begin() + 8, bytes->end(), std::uint8_t{0});
  inet_ntop(AF_INET6, bytes->data(), text, sizeof text);
  return std::string(text) + "/64";
}

Result<TrustedProxies> TrustedProxies::parse(const std::vector<std::string>& entries) {
  TrustedProxies out;
  for (const auto& entry : entries) {
    const std::size_t slash = entry.find('/');
    const std::string_view address = std::string_view(entry).substr(0, slash);
    auto bytes = address_bytes(address);
    if (!bytes) {
      return fail(ErrorCode::kInvalidRequest,
                  "server.trustedProxies: \"" + entry + "\" is not an IP address or CIDR range");
    }
    const int max_bits = is_v4_mapped(*bytes) ? 32 : 128;
    int bits = max_bits;
    if (slash != std::string::npos) {
      const std::string_view digits = std::string_view(entry).substr(slash + 1);
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), bits);
      if (ec != std::errc() || end != digits.data() + digits.size() || bits < 0 ||
          bits > max_bits) {
        return fail(ErrorCode::kInvalidRequest,
                    "server.trustedProxies: \"" + entry + "\" has a bad prefix length");
      }
    }
    out.ranges_.push_back(Range{*bytes, max_bits == 32 ? bits + 96 : bits});
  }
  return out;
}

bool TrustedProxies::contains(std::string_view address) const {
  if (ranges_.empty()) return false;
  auto bytes = address_bytes(address);
  if (!bytes) return false;
  for (const auto& range : ranges_) {
    int bits = range.prefix_bits;
    bool match = true;
    for (int i = 0; i < 16 && bits > 0 && match; ++i, bits -= 8) {
      const std::uint8_t mask = bits >= 8 ? 0xff : static_cast<std::uint8_t>(0xff << (8 - bits));
      match = ((*bytes)[i] & mask) == (range.bytes[i] & mask);
    }
    if (match) return true;
  }
  return false;
}

std::string TrustedProxies::client_key(const HttpRequestHead& head) const {
  return canonical_client(client_address(head));
}

std::string TrustedProxies::client_address(const HttpRequestHead& head) const {
  if (!contains(head.remote)) return head.remote;
  const std::string forwarded = head.header("x-forwarded-for");
  if (!forwarded.empty()) {
    // Rightmost first: each proxy appends the peer it saw.
    std::string_view rest = forwarded;
    while (!rest.empty()) {
      const std::size_t comma = rest.rfind(',');
      std::string_view hop = comma == std::string_view::npos ? rest : rest.substr(comma + 1);
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(0, comma);
      while (!hop.empty() && hop.front() == ' ') hop.remove_prefix(1);
      while (!hop.empty() && hop.back() == ' ') hop.remove_suffix(1);
      if (!address_bytes(hop)) break;  // garbage: stop at the last address we can trust
      if (!contains(hop)) return std::string(hop);
    }
    return head.remote;
  }
  const std::string real = head.header("x-real-ip");
  if (address_bytes(real)) return real;
  return head.remote;
}

}  // namespace bulleted::appview
