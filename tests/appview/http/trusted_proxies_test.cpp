// Client addresses: forwarded headers count only from a trusted peer.
#include <gtest/gtest.h>

#include "appview/http/client_address.hpp"

namespace bulleted::appview {
namespace {

HttpRequestHead from(const std::string& peer, std::map<std::string, std::string> headers = {}) {
  HttpRequestHead head;
  head.remote = peer;
  head.headers = std::move(headers);
  return head;
}

TEST(TrustedProxiesTest, ForwardedHeadersCountOnlyFromATrustedPeer) {
  auto proxies = TrustedProxies::parse({"127.0.0.1", "10.0.0.0/8", "::1", "fd00::/8"});
  ASSERT_TRUE(proxies.has_value()) << proxies.error().message;
  // From the proxy: the rightmost address that is not a proxy.
  EXPECT_EQ(proxies->client_address(from("127.0.0.1", {{"x-forwarded-for", "203.0.113.9"}})),
            "203.0.113.9");
  EXPECT_EQ(proxies->client_address(
                from("127.0.0.1", {{"x-forwarded-for", "1.1.1.1, 198.51.100.7, 10.2.3.4"}})),
            "198.51.100.7")
      << "a client-sent first hop is not believed";
  EXPECT_EQ(proxies->client_address(from("10.9.9.9", {{"x-real-ip", "198.51.100.8"}})),
            "198.51.100.8");
  EXPECT_EQ(proxies->client_address(from("::1", {{"x-forwarded-for", "2001:db8::5"}})),
            "2001:db8::5");
  // From anyone else the headers are ignored: no choosing one's own bucket.
  EXPECT_EQ(proxies->client_address(from("198.51.100.1", {{"x-forwarded-for", "1.2.3.4"}})),
            "198.51.100.1");
  EXPECT_EQ(proxies->client_address(from("11.0.0.1", {{"x-real-ip", "1.2.3.4"}})), "11.0.0.1");
  // Garbage in the header stops the walk at the peer.
  EXPECT_EQ(proxies->client_address(from("127.0.0.1", {{"x-forwarded-for", "not-an-address"}})),
            "127.0.0.1");
  // Without trusted proxies nothing is believed.
  TrustedProxies none;
  EXPECT_EQ(none.client_address(from("127.0.0.1", {{"x-forwarded-for", "1.2.3.4"}})), "127.0.0.1");
  EXPECT_TRUE(proxies->contains("10.255.0.1"));
  EXPECT_FALSE(proxies->contains("11.0.0.1"));
  EXPECT_TRUE(proxies->contains("fd12::1"));
  EXPECT_FALSE(proxies->contains("fe80::1"));
  for (const char* bad : {"10.0.0.0/33", "nonsense", "1.2.3.4/x", "::1/129"}) {
    EXPECT_FALSE(TrustedProxies::parse({bad}).has_value()) << bad;
  }
}

}  // namespace
}  // namespace bulleted::appview
