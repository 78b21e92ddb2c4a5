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
