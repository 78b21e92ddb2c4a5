// The outbound XRPC client: answers read whole and exactly, and never past
// their caps whatever the host sends; connections kept for a bounded number
// of hosts, so hosts the network names (a PDS, a DID document's host)
// cannot grow it.
#include "firehose/client/xrpc_client.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "tests/support/loopback_port.hpp"

namespace bulleted::firehose {
namespace {

// A loopback port nothing listens on (connections to it are refused at once).
int closed_port() { return testing::free_loopback_port(); }

// A host that answers each connection with `head` and then writes `body`
// (chunked when `chunks` > 0: that many chunks of 1 MiB), counting what it
// managed to write before the reader went away.
class CannedHost {
 public:
  CannedHost(std::string head, std::string body, int chunks = 0, std::size_t piece = 0)
      : head_(std::move(head)), body_(std::move(body)), chunks_(chunks), piece_(piece) {
    fd_ = testing::bound_loopback_socket(port_, 4);
    thread_ = std::thread([this] { serve_one(); });
  }
  ~CannedHost() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::size_t written() const { return written_.load(); }

 private:
  void serve_one() {
    const int client = ::accept(fd_, nullptr, nullptr);
    if (client < 0) return;
    std::string request;
    char buffer[4096];
    while (request.find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = ::recv(client, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      request.append(buffer, static_cast<std::size_t>(n));
    }
    auto put = [&](const std::string& bytes) {
      std::size_t at = 0;
      while (at < bytes.size()) {
        const std::size_t size =
            piece_ > 0 ? std::min(piece_, bytes.size() - at) : bytes.size() - at;
        const ssize_t n = ::send(client, bytes.data() + at, size, MSG_NOSIGNAL);
        if (n <= 0) return false;
        at += static_cast<std::size_t>(n);
        written_ += static_cast<std::size_t>(n);
      }
      return true;
    };
    bool open = put(head_) && put(body_);
    const std::string chunk = "100000\r\n" + std::string(1 << 20, 'x') + "\r\n";
    for (int i = 0; open && i < chunks_; ++i) open = put(chunk);
    if (open && chunks_ > 0) put("0\r\n\r\n");
    ::close(client);
  }

  std::string head_;
  std::string body_;
  int chunks_;
  std::size_t piece_;  // each send at most this many bytes (0: as many as the socket takes)
  int fd_ = -1;
  int port_ = 0;
  std::atomic<std::size_t> written_{0};
  std::thread thread_;
};

TEST(XrpcClientTest, AnAnswerIsReadWholeAndExactly) {
  const std::string body = R"({"did":"did:plc:ewvi7nxzyoun6zhxrhs64oiz"})";
  CannedHost host("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                      std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n",
                  body);
  auto client = make_http_xrpc_client(std::chrono::seconds(5), 1024);
  auto reply = client->call({.base_url = host.url(), .path = "/x"});
  ASSERT_TRUE(reply.has_value()) << reply.error().message;
  EXPECT_EQ(reply->status, 200);
  EXPECT_EQ(reply->body, body);
}

// A request to the network's address carries that to the connection: a host
// on loopback is refused, and nothing is sent to it.
TEST(XrpcClientTest, TheNetworksAddressOnLoopbackIsRefused) {
  CannedHost host("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n", "{}");
  auto client = make_http_xrpc_client(std::chrono::seconds(5), 1024);
  auto refused = client->call({.base_url = host.url(), .path = "/x", .public_only = true});
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidRequest);
  EXPECT_EQ(host.written(), 0u);
  auto reply = client->call({.base_url = host.url(), .path = "/x"});
  ASSERT_TRUE(reply.has_value()) << reply.error().message;
  EXPECT_EQ(reply->body, "{}");
}

// Just under every limit: an answer of exactly the cap, with a length and
// chunked, and a head just under 32 KiB, are read whole; one byte more of
// body is refused.
TEST(XrpcClientTest, AnswersJustUnderTheLimitsAreReadWhole) {
  const std::size_t cap = 1024;
  auto client = make_http_xrpc_client(std::chrono::seconds(5), cap);
  for (const std::size_t size : {cap, cap + 1}) {
    const std::string body(size, 'a');
    CannedHost host("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(size) +
                        "\r\nConnection: close\r\n\r\n",
                    body);
    auto reply = client->call({.base_url = host.url(), .path = "/x"});
    if (size == cap) {
      ASSERT_TRUE(reply.has_value()) << reply.error().message;
      EXPECT_EQ(reply->body, body);
    } else {
      ASSERT_FALSE(reply.has_value());
      EXPECT_EQ(reply.error().code, ErrorCode::kPayloadTooLarge);
    }
  }
  {
    CannedHost host("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
                    "400\r\n" + std::string(cap, 'b') + "\r\n0\r\n\r\n");
    auto reply = client->call({.base_url = host.url(), .path = "/x"});
    ASSERT_TRUE(reply.has_value()) << reply.error().message;
    EXPECT_EQ(reply->body, std::string(cap, 'b'));
  }
  {
    const std::string pad(31 * 1024, 'p');
    CannedHost host(
        "HTTP/1.1 200 OK\r\nX-Pad: " + pad + "\r\nContent-Length: 2\r\nConnection: close\r\n\r\n",
        "{}");
    auto reply = client->call({.base_url = host.url(), .path = "/x"});
    ASSERT_TRUE(reply.has_value()) << reply.error().message;
    EXPECT_EQ(reply->body, "{}");
    EXPECT_EQ(reply->header("x-pad"), pad);
  }
}

// 256 MiB offered in chunks to a client capped at 64 KiB: it stops reading
// past the cap and closes the connection; what the host could write is
// what the sockets' buffers hold, not the answer.
TEST(XrpcClientTest, AChunkedAnswerPastTheCapIsCutOffNotRead) {
  CannedHost host(
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n", "",
      256);
  auto client = make_http_xrpc_client(std::chrono::seconds(20), 64 * 1024);
  auto reply = client->call({.base_url = host.url(), .path = "/did.json"});
  ASSERT_FALSE(reply.has_value());
  EXPECT_EQ(reply.error().code, ErrorCode::kPayloadTooLarge);
  EXPECT_LT(host.written(), 64u * 1024 * 1024);
}

// Answers past the cap, one after another, with a Content-Length (which
// the parser of Beast 1.74 forgets when the body's first bytes come with
// the head) and chunked, sent in small pieces as fast as the host can.
// The client these replaced crashed once on such an answer under the
// sanitizers: it closed the connection from the caller's thread while its
// own read of it went on.
TEST(XrpcClientTest, ManyAnswersPastTheCapAreCutOff) {
  const std::string big(4 << 20, 'x');
  auto client = make_http_xrpc_client(std::chrono::seconds(20), 64 * 1024);
  for (int i = 0; i < 100; ++i) {
    const bool chunked = i % 2 == 1;
    CannedHost host(
        chunked ? "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                : "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(big.size()) + "\r\n\r\n",
        chunked ? "" : big, chunked ? 4 : 0, 1024);
    auto reply = client->call({.base_url = host.url(), .path = "/did.json"});
    ASSERT_FALSE(reply.has_value())
        << "answer " << i << " " << reply->status << " " << reply->body.size();
    EXPECT_EQ(reply.error().code, ErrorCode::kPayloadTooLarge) << reply.error().message;
  }
}

// A chunk may claim any size: what is read of it still stops at the cap.
TEST(XrpcClientTest, OneHugeChunkIsCutOffNotRead) {
  CannedHost host("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n7fffffff\r\n",
                  std::string(128 << 20, 'x'));
  auto client = make_http_xrpc_client(std::chrono::seconds(20), 64 * 1024);
  auto reply = client->call({.base_url = host.url(), .path = "/did.json"});
  ASSERT_FALSE(reply.has_value());
  EXPECT_EQ(reply.error().code, ErrorCode::kPayloadTooLarge) << reply.error().message;
  EXPECT_LT(host.written(), 64u * 1024 * 1024);
}

// A head that never ends stops at the head's limit (32 KiB).
TEST(XrpcClientTest, EndlessHeadersAreCutOff) {
  std::string head = "HTTP/1.1 200 OK\r\n";
  std::string lines;
  for (int i = 0; i < (1 << 20); ++i)
    lines += "X-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n";
  CannedHost host(head, lines);
  auto client = make_http_xrpc_client(std::chrono::seconds(20), 64 * 1024);
  auto reply = client->call({.base_url = host.url(), .path = "/did.json"});
  ASSERT_FALSE(reply.has_value());
  EXPECT_EQ(reply.error().code, ErrorCode::kPayloadTooLarge) << reply.error().message;
  EXPECT_LT(host.written(), 16u * 1024 * 1024);
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
