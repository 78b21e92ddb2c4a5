// The HTTP front's connections over real loopback sockets: what a client
// talking to the app view directly can make it hold and for how long. A
// refused chunked body of any chunk size is never held, heads are bounded
// in size and time, pipelined requests are answered in order, and an
// admitted body sent after Expect: 100-continue is asked for at once.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "appview/http/server.hpp"
#include "tests/support/loopback_port.hpp"
#include "tests/support/raw_http.hpp"

namespace bulleted::appview {
namespace {

using testing::Client;
using testing::plain;
using testing::status_line;

// The process's resident memory now, in MiB.
double resident_mib() { return testing::process_status_mib("VmRSS"); }

class HttpConnectionTest : public ::testing::Test {
 protected:
  void start(HttpServerOptions options = {}) {
    port_ = testing::free_loopback_port();
    options.port = port_;
    server_ = std::make_unique<HttpServer>(std::move(options), [this](const HttpRequest& request) {
      ++handled_;
      return plain(200, request.path + " " + std::to_string(request.body.size()));
    });
    ASSERT_TRUE(server_->start().has_value());
  }
  void TearDown() override {
    if (server_) server_->stop(std::chrono::seconds(2));
  }
  std::string request(const std::string& bytes) {
    Client client(port_);
    client.send(bytes);
    return client.response();
  }

  int port_ = 0;
  std::atomic<int> handled_{0};
  std::unique_ptr<HttpServer> server_;
};

// Three clients each announce one chunk of 512 MiB and send 96 MiB of it:
// each is answered 411 and what it sends is dropped as it arrives, so the
// process's memory does not grow with the chunks (it grew by every byte
// sent when the listener read a whole chunk before the front saw it).
TEST_F(HttpConnectionTest, AHugeChunkIsDroppedAsItArrivesNeverHeld) {
  start();
  const std::string piece(1 << 20, 'c');
  const double before = resident_mib();
  std::atomic<bool> sending{true};
  std::atomic<double> peak{before};
  std::thread sampler([&] {
    while (sending) {
      const double now = resident_mib();
      if (now > peak) peak = now;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  std::vector<std::string> answers(3);
  std::vector<std::thread> clients;
  for (int c = 0; c < 3; ++c) {
    clients.emplace_back([&, c] {
      Client client(port_);
      client.send("POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n20000000\r\n");
      for (int i = 0; i < 96; ++i) client.send(piece);
      answers[c] = client.response();
    });
  }
  for (auto& client : clients) client.join();
  sending = false;
  sampler.join();
  for (const auto& answer : answers) EXPECT_EQ(status_line(answer), "HTTP/1.1 411 Length Required");
  EXPECT_LT(peak - before, 64) << "MiB held while 288 MiB of chunk data arrived";
  EXPECT_EQ(handled_.load(), 0);
}

TEST_F(HttpConnectionTest, AHeadOverItsLimitIsRefusedWith431) {
  start();
  const std::string big(128 * 1024, 'a');
  const std::string answer = request("GET /x HTTP/1.1\r\nHost: h\r\nX-Big: " + big + "\r\n\r\n");
  EXPECT_EQ(status_line(answer), "HTTP/1.1 431 Request Header Fields Too Large") << answer;
  EXPECT_NE(answer.find("Connection: close"), std::string::npos);
  EXPECT_EQ(handled_.load(), 0);
  // Not HTTP at all: 400.
  EXPECT_EQ(status_line(request("hello there\r\n\r\n")), "HTTP/1.1 400 Bad Request");
}

// A head that does not arrive in time, and a body that stops arriving, cost
// their connection: it is closed, and the server goes on answering.
TEST_F(HttpConnectionTest, SlowHeadsAndStalledBodiesAreCutOff) {
  HttpServerOptions options;
  options.read_timeout = std::chrono::seconds(1);
  start(std::move(options));
  Client slow_head(port_);
  slow_head.send("GET /x HTTP/1.1\r\nHost: h\r\n");
  Client stalled_body(port_);
  stalled_body.send("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\nhalf");
  // Both connections are closed by the server (not given up on by the
  // client, whose reads time out after 20 s).
  EXPECT_EQ(slow_head.response(), "");
  EXPECT_TRUE(slow_head.closed());
  const std::string cut = stalled_body.response();
  EXPECT_TRUE(stalled_body.closed());
  EXPECT_EQ(cut.find("200 OK"), std::string::npos) << cut;
  EXPECT_EQ(handled_.load(), 0);
  EXPECT_TRUE(request("GET /after HTTP/1.1\r\nHost: h\r\n\r\n").ends_with("/after 0"));
}

// A client that asks for a large answer and never reads it costs its
// connection once a write has made no progress for read_timeout: it finds
// part of the answer and then the connection closed, and the server goes on.
TEST_F(HttpConnectionTest, AClientThatNeverReadsItsAnswerIsClosed) {
  HttpServerOptions options;
  options.read_timeout = std::chrono::seconds(1);
  port_ = testing::free_loopback_port();
  options.port = port_;
  const std::string big(32u << 20, 'b');
  server_ = std::make_unique<HttpServer>(std::move(options), [&big](const HttpRequest& request) {
    return plain(200, request.path == "/big" ? big : request.path);
  });
  ASSERT_TRUE(server_->start().has_value());
  Client reader(port_);
  reader.send("GET /big HTTP/1.1\r\nHost: h\r\n\r\n");
  std::this_thread::sleep_for(std::chrono::seconds(4));  // reads nothing meanwhile
  EXPECT_TRUE(request("GET /other HTTP/1.1\r\nHost: h\r\n\r\n").ends_with("/other"));
  const std::string got = reader.until_closed();
  EXPECT_TRUE(reader.closed()) << "the server closed the connection";
  EXPECT_LT(got.size(), big.size()) << "the whole answer was never taken, so never all sent";
}

TEST_F(HttpConnectionTest, PipelinedRequestsAreAnsweredInOrder) {
  start();
  Client client(port_);
  client.send(
      "GET /one HTTP/1.1\r\nHost: h\r\n\r\n"
      "POST /two HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"
      "GET /three HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
  const std::string answers = client.until_closed();
  EXPECT_TRUE(client.closed());
  const std::size_t one = answers.find("\r\n\r\n/one 0HTTP/1.1 200 OK");
  const std::size_t two = answers.find("\r\n\r\n/two 3HTTP/1.1 200 OK");
  EXPECT_NE(one, std::string::npos) << answers;
  EXPECT_NE(two, std::string::npos) << answers;
  EXPECT_LT(one, two);
  EXPECT_TRUE(answers.ends_with("\r\n\r\n/three 0")) << answers;
}

// An admitted body is asked for at once (a client that waits for
// "100 Continue" sends it then, not after a timeout of its own); a refused
// one never is.
TEST_F(HttpConnectionTest, ExpectContinueIsAnsweredOnlyForAnAdmittedBody) {
  HttpServerOptions options;
  options.admit = [](const HttpRequestHead& head) {
    Admission admission;
    admission.body_limit = 1024;
    if (head.path == "/refused") admission.refusal = plain(401, "who are you");
    return admission;
  };
  start(std::move(options));
  Client admitted(port_);
  admitted.send(
      "POST /in HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
  std::string interim(64, '\0');
  const ssize_t n = ::recv(admitted.fd(), interim.data(), interim.size(), 0);
  ASSERT_GT(n, 0);
  EXPECT_EQ(interim.substr(0, static_cast<std::size_t>(n)), "HTTP/1.1 100 Continue\r\n\r\n");
  admitted.send("hello");
  EXPECT_TRUE(admitted.response().ends_with("/in 5"));
  Client refused(port_);
  refused.send(
      "POST /refused HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
  EXPECT_EQ(status_line(refused.response()), "HTTP/1.1 401 Unauthorized");
}

}  // namespace
}  // namespace bulleted::appview
