// What one client talking to the HTTP front directly can make it hold, and
// for how long: connections per address and in all (with a reserve for
// health), unfinished large heads, held answers whose holder let go while
// their client reads nothing, connections reset (not left in FIN-WAIT-1)
// once their client stopped reading, a slow but steady reader of a long
// answer, Host as RFC 9112 asks, and repeated header lines.
#include <gtest/gtest.h>
#include <poll.h>

#include <atomic>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "appview/http/answers.hpp"
#include "appview/http/server.hpp"
#include "tests/support/loopback_port.hpp"
#include "tests/support/raw_http.hpp"

namespace bulleted::appview {
namespace {

using namespace std::chrono_literals;
using testing::Client;
using testing::plain;
using testing::status_line;

// The server's side of its connections on `port` (not the listener), by
// TCP state as /proc/net/tcp spells it ("01" established, "04" FIN-WAIT-1).
std::vector<std::string> server_side_states(int port) {
  std::vector<std::string> states;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // the column names
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state;
      fields >> slot >> local >> remote >> state;
      const auto colon = local.rfind(':');
      if (colon == std::string::npos) continue;
      if (std::stoi(local.substr(colon + 1), nullptr, 16) != port || state == "0A") continue;
      states.push_back(state);
    }
  }
  return states;
}

// Waits up to `limit` for the server to hold no connection on `port`.
bool server_lets_go(int port, std::chrono::seconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (server_side_states(port).empty()) return true;
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

// A socket's receive buffer kept small (set before it connects): the
// kernel holds little of what the server sends it.
void small_receive_buffer(Client& client) {
  const int size = 16 * 1024;
  ::setsockopt(client.fd(), SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
}

// Whether the server reset the connection (or closed it): a read that does
// not time out and finds no more data.
bool ended_by_server(Client& client) {
  char buffer[4096];
  while (true) {
    const ssize_t n = ::recv(client.fd(), buffer, sizeof buffer, 0);
    if (n > 0) continue;
    return n == 0 || errno == ECONNRESET;
  }
}

class HttpLimitsTest : public ::testing::Test {
 protected:
  void start(HttpServerOptions options, HttpHandler handler = {}) {
    port_ = testing::free_loopback_port();
    options.port = port_;
    if (!handler) {
      handler = [](const HttpRequest& request) { return plain(200, request.path); };
    }
    server_ = std::make_unique<HttpServer>(std::move(options), std::move(handler));
    ASSERT_TRUE(server_->start().has_value());
  }
  void TearDown() override {
    if (server_) server_->stop(2s);
  }
  std::string request(const std::string& bytes) {
    Client client(port_);
    client.send(bytes);
    return client.response();
  }

  int port_ = 0;
  std::unique_ptr<HttpServer> server_;
};

// A held answer (a change stream) filled with far more than the sockets
// hold, then ended by its holder (as a stream replaced by its client's
// newer one is) while the client reads nothing: the connection is reset
// within the read timeout, and the kernel keeps nothing of it. (It was
// written with no deadline, forever.)
TEST_F(HttpLimitsTest, AHeldAnswerItsHolderEndedMustStillMakeProgressOrIsReset) {
  std::promise<std::shared_ptr<HeldAnswer>> held;
  HttpServerOptions options;
  options.read_timeout = 1s;
  start(std::move(options), [&held](const HttpRequest&) {
    HttpResponse response;
    response.content_type = "text/event-stream";
    response.hold = [&held](std::shared_ptr<HeldAnswer> answer) { held.set_value(answer); };
    return response;
  });
  Client client(port_);
  small_receive_buffer(client);
  client.send("GET /stream HTTP/1.1\r\nHost: h\r\n\r\n");
  auto answer = held.get_future().get();
  const std::string piece(64 * 1024, 'e');
  for (int i = 0; i < 128; ++i) ASSERT_TRUE(answer->write(piece));  // 8 MiB
  std::this_thread::sleep_for(1500ms);  // held: no deadline while its holder keeps it
  EXPECT_FALSE(server_side_states(port_).empty()) << "a held answer is not timed out";
  answer->end();
  EXPECT_TRUE(server_lets_go(port_, 10s)) << "the server still holds the connection: "
                                          << ::testing::PrintToString(server_side_states(port_));
  EXPECT_TRUE(ended_by_server(client));
}

// A client that leaves a held answer (a change stream) while nothing is
// written to it: the answer is over at once, without waiting for a write
// to fail (10,000 killed clients were counted open until their next event).
TEST_F(HttpLimitsTest, AClientLeavingAHeldAnswerEndsItWithoutAWrite) {
  std::promise<std::shared_ptr<HeldAnswer>> held;
  start({}, [&held](const HttpRequest&) {
    HttpResponse response;
    response.content_type = "text/event-stream";
    response.hold = [&held](std::shared_ptr<HeldAnswer> answer) { held.set_value(answer); };
    return response;
  });
  auto client = std::make_unique<Client>(port_);
  client->send("GET /stream HTTP/1.1\r\nHost: h\r\n\r\n");
  auto answer = held.get_future().get();
  ASSERT_TRUE(answer->write(": open\n\n"));
  char head[256];
  ASSERT_GT(::recv(client->fd(), head, sizeof head, 0), 0);
  EXPECT_FALSE(answer->over());
  client.reset();  // gone, nothing written since
  for (int i = 0; i < 100 && !answer->over(); ++i) std::this_thread::sleep_for(50ms);
  EXPECT_TRUE(answer->over()) << "the holder hears that its client left";
  EXPECT_FALSE(answer->write("data: late\n\n"));
}

// A client that never reads a large answer: its connection is reset once a
// write makes no progress for the read timeout, so nothing of it stays in
// the kernel (closed gracefully, the unsent megabytes waited in
// FIN-WAIT-1 for minutes).
TEST_F(HttpLimitsTest, AConnectionWhoseClientStoppedReadingIsResetNotLeftInFinWait) {
  HttpServerOptions options;
  options.read_timeout = 1s;
  const std::string big(16u << 20, 'b');
  start(std::move(options), [&big](const HttpRequest&) { return plain(200, big); });
  Client client(port_);
  small_receive_buffer(client);
  client.send("GET /big HTTP/1.1\r\nHost: h\r\n\r\n");
  std::this_thread::sleep_for(300ms);
  EXPECT_FALSE(server_side_states(port_).empty());
  EXPECT_TRUE(server_lets_go(port_, 10s)) << "the server's side is left in state(s) "
                                          << ::testing::PrintToString(server_side_states(port_));
}

// A streamed answer (an export) to a reader that takes a steady 640 KB/s:
// every slice written is progress, so it gets the whole answer though a
// megabyte takes it longer than the read timeout. (Progress was counted
// per megabyte taken, and the answer was cut.)
TEST_F(HttpLimitsTest, ASlowButSteadyReaderGetsItsStreamedAnswerWhole) {
  HttpServerOptions options;
  options.read_timeout = 1s;
  // Small kernel buffers, so what the reader takes is what the server sees
  // go out (a large one frees room, and wakes the writer, only in large
  // steps).
  options.send_buffer_bytes = 64 * 1024;
  constexpr std::size_t kPiece = 64 * 1024;
  constexpr int kPieces = 96;  // 6 MiB
  start(std::move(options), [](const HttpRequest&) {
    HttpResponse response;
    response.content_type = "application/octet-stream";
    response.stream = [](ResponseStream& out) {
      const std::string piece(kPiece, 's');
      for (int i = 0; i < kPieces; ++i) {
        if (!out.write(piece)) return;
      }
    };
    return response;
  });
  Client client(port_);
  small_receive_buffer(client);
  client.send("GET /export HTTP/1.1\r\nHost: h\r\n\r\n");
  std::string got;
  std::vector<char> buffer(32 * 1024);
  while (!got.ends_with("\r\n0\r\n\r\n")) {
    const ssize_t n = ::recv(client.fd(), buffer.data(), buffer.size(), 0);
    if (n <= 0) break;
    got.append(buffer.data(), static_cast<std::size_t>(n));
    std::this_thread::sleep_for(50ms);  // 32 KiB every 50 ms
  }
  EXPECT_EQ(testing::dechunk(got).size(), kPiece * kPieces) << "the answer was cut short";
}

// One address holds at most its connections (the next is reset before a
// byte is read); the operator's proxies are not capped; the last
// connections of all answer only health and the operators.
TEST_F(HttpLimitsTest, ConnectionsAreCappedPerAddressAndHealthKeepsAReserve) {
  HttpServerOptions options;
  options.connections_per_address = 4;
  options.max_connections = 16;
  options.reserved_connections = 2;
  options.admit = [](const HttpRequestHead& head) {
    Admission admission;
    if (head.path == "/healthz") admission.lane = Lane::kAtOnce;
    return admission;
  };
  std::atomic<bool> uncapped{false};
  options.uncapped = [&uncapped](const std::string&) { return uncapped.load(); };
  start(std::move(options));
  std::vector<std::unique_ptr<Client>> idle;
  for (int i = 0; i < 4; ++i) idle.push_back(std::make_unique<Client>(port_));
  // Taken up by the server (accepted and counted) before the next comes.
  for (int i = 0; i < 100 && server_->counters().open < 4; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(server_->counters().open, 4u);
  Client fifth(port_);
  fifth.send("GET /x HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(fifth.response(), "");
  EXPECT_TRUE(ended_by_server(fifth));
  EXPECT_EQ(server_->counters().refused_address, 1u);
  idle.pop_back();  // one of its own closed: room again
  for (int i = 0; i < 100 && server_->counters().open > 3; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(status_line(request("GET /x HTTP/1.1\r\nHost: h\r\n\r\n")), "HTTP/1.1 200 OK");

  // A proxy of the operator's: no cap per address, up to the reserve.
  uncapped = true;
  for (int i = 0; i < 11; ++i) idle.push_back(std::make_unique<Client>(port_));
  for (int i = 0; i < 200 && server_->counters().open < 14; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(server_->counters().open, 14u);
  // The reserve: health answers, nothing else does.
  Client health(port_);
  health.send("GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(status_line(health.response()), "HTTP/1.1 200 OK");
  {
    Client other(port_);
    other.send("GET /x HTTP/1.1\r\nHost: h\r\n\r\n");
    EXPECT_EQ(status_line(other.response()), "HTTP/1.1 503 Service Unavailable");
  }
  for (int i = 0; i < 100 && server_->counters().open > 15; ++i) std::this_thread::sleep_for(10ms);
  idle.push_back(std::make_unique<Client>(port_));
  for (int i = 0; i < 100 && server_->counters().open < 16; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(server_->counters().open, 16u);
  // Past all: reset at once, unread.
  Client past(port_);
  past.send("GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(past.response(), "");
  EXPECT_EQ(server_->counters().refused_total, 1u);
}

// Unfinished heads past 8 KiB draw on one budget: a few clients dribbling
// 40 KiB heads cannot hold more than it (the next large head is 503), and
// requests with ordinary heads go on being answered.
TEST_F(HttpLimitsTest, UnfinishedLargeHeadsDrawOnASharedBudget) {
  HttpServerOptions options;
  options.large_head_bytes = 96 * 1024;
  start(std::move(options));
  const std::string part =
      "GET /x HTTP/1.1\r\nHost: h\r\nX-Big: " + std::string(40 * 1024, 'a');  // no end
  std::vector<std::unique_ptr<Client>> heads;
  std::vector<std::string> answers;
  for (int i = 0; i < 4; ++i) {
    heads.push_back(std::make_unique<Client>(port_));
    heads.back()->send(part);
    std::this_thread::sleep_for(100ms);
  }
  int refused = 0;
  for (auto& head : heads) {
    pollfd ready{head->fd(), POLLIN, 0};
    if (::poll(&ready, 1, 200) == 1) {
      const std::string answer = head->response();
      EXPECT_EQ(status_line(answer), "HTTP/1.1 503 Service Unavailable") << answer;
      ++refused;
    }
  }
  EXPECT_GE(refused, 1) << "four 40 KiB heads fit a budget of 96 KiB";
  EXPECT_LE(refused, 3) << "the first fits";
  EXPECT_EQ(server_->counters().refused_large_head, static_cast<std::size_t>(refused));
  EXPECT_EQ(status_line(request("GET /small HTTP/1.1\r\nHost: h\r\n\r\n")), "HTTP/1.1 200 OK");
  // Finished, a head gives its bytes back.
  heads.clear();
  std::this_thread::sleep_for(200ms);
  const std::string whole = request(part + "\r\n\r\n");
  EXPECT_EQ(status_line(whole), "HTTP/1.1 200 OK") << whole;
}

// RFC 9112: an HTTP/1.1 request names one Host (HTTP/1.0 may name none),
// and an empty line before the request line is ignored.
TEST_F(HttpLimitsTest, HostIsRequiredOnceAndALeadingEmptyLineIsIgnored) {
  start({});
  EXPECT_EQ(status_line(request("GET /x HTTP/1.1\r\n\r\n")), "HTTP/1.1 400 Bad Request");
  EXPECT_EQ(status_line(request("GET /x HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n")),
            "HTTP/1.1 400 Bad Request");
  EXPECT_EQ(status_line(request("GET /x HTTP/1.0\r\n\r\n")), "HTTP/1.1 200 OK");
  const std::string answer = request("\r\nGET /after-empty HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(status_line(answer), "HTTP/1.1 200 OK") << answer;
  EXPECT_TRUE(answer.ends_with("/after-empty"));
}

// Thousands of lines of one header are joined in place: the joined value
// moves a logarithmic number of times, not once a line (each line built a
// new string of everything before it: quadratic).
TEST(JoinFieldTest, ManyLinesOfOneNameAreJoinedInPlace) {
  std::string joined;
  std::size_t moves = 0;
  const char* last = nullptr;
  for (int i = 0; i < 10'800; ++i) {
    http_detail::join_field(joined, "value");
    if (joined.data() != last) ++moves;
    last = joined.data();
  }
  EXPECT_EQ(joined.size(), 10'800 * 5 + 10'799 * 2);
  EXPECT_TRUE(joined.starts_with("value, value"));
  EXPECT_LT(moves, 64u);
}

}  // namespace
}  // namespace bulleted::appview
