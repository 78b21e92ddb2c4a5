// Addresses from the network: https only, never this machine or a private
// network, unless the operator allows it for a test network.
#include "firehose/client/network_policy.hpp"

#include <gtest/gtest.h>

namespace bulleted::firehose {
namespace {

TEST(NetworkPolicy, PrivateLoopbackAndLinkLocalAddressesAreRecognised) {
  for (const char* address :
       {"127.0.0.1", "127.1.2.3", "10.0.0.5", "172.16.0.1", "172.31.255.255", "192.168.1.1",
        "169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1", "::1", "::", "fc00::1",
        "fd12:3456::1", "fe80::1", "::ffff:127.0.0.1", "::ffff:10.1.2.3", "ff02::1"}) {
    EXPECT_TRUE(is_private_address(address)) << address;
  }
  for (const char* address : {"8.8.8.8", "172.32.0.1", "192.169.0.1", "100.128.0.1",
                              "2606:4700::1111", "::ffff:8.8.4.4"}) {
    EXPECT_FALSE(is_private_address(address)) << address;
  }
}

TEST(NetworkPolicy, EveryBlockOfIanasSpecialPurposeRegistriesIsRefused) {
  // Each form that once got through, and one address of each block that is
  // not globally reachable or carries an IPv4 address back inside.
  for (const char* address : {"192.88.99.1",
                              "::127.0.0.1",
                              "::10.0.0.1",
                              "::ffff:0:127.0.0.1",
                              "::ffff:0:8.8.8.8",
                              "64:ff9b::7f00:1",
                              "64:ff9b::808:808",
                              "64:ff9b:1::1",
                              "2002:7f00:1::1",
                              "2002:808:808::1",
                              "fec0::1",
                              "100::1",
                              "2001::1",
                              "2001:0:4136:e378:8000:63bf:3fff:fdd2",
                              "2001:db8::1",
                              "2001:10::1",
                              "3fff::1",
                              "192.0.2.1",
                              "198.51.100.1",
                              "203.0.113.1",
                              "192.31.196.1",
                              "192.52.193.1",
                              "192.175.48.1",
                              "240.0.0.1",
                              "255.255.255.255",
                              "198.19.0.1",
                              "192.0.0.8",
                              "4000::1",
                              "1::1"}) {
    EXPECT_TRUE(is_private_address(address)) << address;
  }
  for (const char* address :
       {"1.1.1.1", "192.88.98.1", "192.0.3.1", "198.20.0.1", "2a00:1450:4001::1",
        "2606:4700:4700::1111", "2400:cb00::1", "::ffff:1.1.1.1"}) {
    EXPECT_FALSE(is_private_address(address)) << address;
  }
  EXPECT_FALSE(check_network_url("https://[64:ff9b::7f00:1]/", false).has_value());
  EXPECT_FALSE(check_network_url("https://[::ffff:0:7f00:1]:443/", false).has_value());
  EXPECT_FALSE(check_network_url("https://192.88.99.1/", false).has_value());
}

TEST(NetworkPolicy, OnlyHttpsToPublicHostsUnlessAllowed) {
  EXPECT_FALSE(check_network_url("http://8.8.8.8/xrpc/x", false).has_value());
  EXPECT_FALSE(check_network_url("https://127.0.0.1:2583/xrpc/x", false).has_value());
  EXPECT_FALSE(check_network_url("https://[::1]/xrpc/x", false).has_value());
  EXPECT_FALSE(check_network_url("https://169.254.169.254/latest/meta-data", false).has_value());
  EXPECT_FALSE(check_network_url("https://localhost:8080/", false).has_value());
  EXPECT_FALSE(check_network_url("https://pds.localhost/", false).has_value());
  EXPECT_FALSE(check_network_url("https://user@8.8.8.8/", false).has_value());
  EXPECT_FALSE(check_network_url("ftp://8.8.8.8/", true).has_value());
  EXPECT_TRUE(check_network_url("https://8.8.8.8/xrpc/x", false).has_value());
  // A test network on 127.0.0.1, with the operator's leave.
  EXPECT_TRUE(check_network_url("http://127.0.0.1:2583/xrpc/x", true).has_value());
}

TEST(NetworkPolicy, AddressesWrittenOutAreCheckedAndNamesAreLeftToTheClient) {
  // Every form the system reads as an address (127.1 and 0x7f000001 are
  // 127.0.0.1 to getaddrinfo and to the sockets behind it).
  for (const char* url : {"https://127.1/", "https://0x7f000001/", "https://0177.0.0.1/",
                          "https://10.1/", "https://[::ffff:127.0.0.1]/"}) {
    auto refused = check_network_url(url, false);
    ASSERT_FALSE(refused.has_value()) << url;
    EXPECT_EQ(refused.error().code, ErrorCode::kInvalidRequest) << url;
  }
  // A name is not looked up here (this one never resolves: .invalid is
  // never delegated); the HTTP client looks it up by its deadline and
  // checks the addresses it connects to (http_exchange_test.cpp).
  EXPECT_TRUE(check_network_url("https://slow-names.invalid/xrpc/x", false).has_value());
}

TEST(NetworkPolicy, UrlsSplitIntoOriginAndTarget) {
  auto parts = split_url("https://pds.example.com:8443/xrpc/com.atproto.sync.getRepo?did=x#f");
  ASSERT_TRUE(parts.has_value());
  EXPECT_EQ(parts->first, "https://pds.example.com:8443");
  EXPECT_EQ(parts->second, "/xrpc/com.atproto.sync.getRepo?did=x");
  EXPECT_EQ(split_url("https://h")->second, "/");
  EXPECT_FALSE(split_url("/relative").has_value());
}

}  // namespace
}  // namespace bulleted::firehose
