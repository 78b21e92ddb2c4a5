// The key a client's limits are kept under: one spelling per address, and
// one key per IPv6 /64 (a subscriber's usual allocation), so that neither
// another spelling nor another address of the same /64 is a fresh budget.
#include <gtest/gtest.h>

#include "appview/http/client_address.hpp"

namespace bulleted::appview {
namespace {

std::string key_of(const std::string& peer) {
  HttpRequestHead head;
  head.remote = peer;
  return TrustedProxies().client_key(head);
}

TEST(ClientKeyTest, EveryAddressOfAnIpv6Slash64IsOneClientInOneSpelling) {
  const std::string key = key_of("2001:db8:1:2::1");
  EXPECT_EQ(key, "2001:db8:1:2::/64");
  for (const char* same : {"2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:DB8:1:2::1",
                           "2001:0db8:0001:0002:0000:0000:0000:0009", "[2001:db8:1:2::7]"}) {
    EXPECT_EQ(key_of(same), key) << same;
  }
  EXPECT_NE(key_of("2001:db8:1:3::1"), key) << "the next /64 is another client";
}

TEST(ClientKeyTest, Ipv4InEitherFormIsItsDottedQuad) {
  EXPECT_EQ(key_of("198.51.100.7"), "198.51.100.7");
  EXPECT_EQ(key_of("::ffff:198.51.100.7"), "198.51.100.7");
  EXPECT_EQ(key_of("::FFFF:c633:6407"), "198.51.100.7");
  EXPECT_NE(key_of("198.51.100.8"), key_of("198.51.100.7"));
}

TEST(ClientKeyTest, BehindATrustedProxyTheForwardedAddressIsKeyedTheSameWay) {
  auto proxies = TrustedProxies::parse({"127.0.0.1"});
  ASSERT_TRUE(proxies.has_value());
  HttpRequestHead head;
  head.remote = "127.0.0.1";
  head.headers["x-forwarded-for"] = "2001:db8:aa:bb:1:2:3:4";
  EXPECT_EQ(proxies->client_key(head), "2001:db8:aa:bb::/64");
}

}  // namespace
}  // namespace bulleted::appview
