// The outbound HTTP client keeps connections for a bounded number of hosts:
// hosts the network names (a PDS, a DID document's host) cannot grow it.
#include "firehose/client/xrpc_client.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace bulleted::firehose {
namespace {

// A loopback port nothing listens on (connections to it are refused at once).
int closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

TEST(XrpcClientTest, ConnectionsAreKeptForABoundedNumberOfHosts) {
  auto client = make_http_xrpc_client(std::chrono::seconds(2), 1024, 4);
  for (int i = 0; i < 12; ++i) {
    auto reply = client->call(
        {.base_url = "http://127.0.0.1:" + std::to_string(closed_port()), .path = "/x"});
    EXPECT_FALSE(reply.has_value());
    EXPECT_LE(client->pooled_hosts(), 4u);
  }
  EXPECT_EQ(client->pooled_hosts(), 4u);
}

}  // namespace
}  // namespace bulleted::firehose
