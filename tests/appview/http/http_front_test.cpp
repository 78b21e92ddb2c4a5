// The HTTP front over real loopback sockets: framing refused before
// anything else, admission decided before the body is read, the operators'
// lane answering while every worker is busy, streamed answers, HEAD and
// TRACE.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "appview/http/server.hpp"
#include "tests/support/loopback_port.hpp"
#include "tests/support/raw_http.hpp"

namespace bulleted::appview {
namespace {

using testing::Client;
using testing::dechunk;
using testing::plain;
using testing::status_line;

int free_port() { return testing::free_loopback_port(); }

class HttpFrontTest : public ::testing::Test {
 protected:
  void start(HttpServerOptions options, HttpHandler handler) {
    port_ = free_port();
    options.port = port_;
    server_ = std::make_unique<HttpServer>(std::move(options), std::move(handler));
    ASSERT_TRUE(server_->start().has_value());
  }
  void TearDown() override {
    if (server_) server_->stop(std::chrono::seconds(2));
  }
  std::string request(const std::string& bytes) {
    Client client(port_);
    EXPECT_TRUE(client.connected());
    client.send(bytes);
    return client.response();
  }

  // Starts a server of one worker (and the operators' lane for /healthz),
  // sends /slow on `slow` and returns once that request holds the worker;
  // release_worker() lets it go. Other paths are answered at once.
  void hold_the_only_worker(HttpServerOptions options, std::unique_ptr<Client>& slow) {
    options.workers = 1;
    options.admit = [](const HttpRequestHead& head) {
      Admission admission;
      admission.body_limit = 1024;
      if (head.path == "/healthz") admission.lane = Lane::kOperators;
      return admission;
    };
    std::shared_future<void> released = release_.get_future().share();
    auto busy = std::make_shared<std::promise<void>>();
    std::future<void> held = busy->get_future();
    start(std::move(options), [busy, released](const HttpRequest& request) {
      if (request.path == "/slow") {
        busy->set_value();
        released.wait();
      }
      return plain(200, request.path);
    });
    slow = std::make_unique<Client>(port_);
    slow->send("GET /slow HTTP/1.1\r\nHost: h\r\n\r\n");
    held.wait();
  }
  void release_worker() { release_.set_value(); }

  int port_ = 0;
  std::unique_ptr<HttpServer> server_;
  std::promise<void> release_;
};

TEST(FramingTest, RefusesWhatAProxyWouldReadDifferently) {
  using Headers = std::vector<std::pair<std::string, std::string>>;
  EXPECT_FALSE(framing_problem(Headers{{"Content-Length", "12"}}).has_value());
  EXPECT_FALSE(framing_problem(Headers{}).has_value());
  struct Case {
    Headers headers;
    int status;
  };
  const std::vector<Case> cases = {
      {{{"Content-Length", "1"}, {"Transfer-Encoding", "chunked"}}, 400},
      {{{"Transfer-Encoding", "xchunked"}}, 400},
      {{{"Transfer-Encoding", "gzip, chunked"}}, 400},
      {{{"Transfer-Encoding ", "chunked"}, {"Content-Length", "3"}}, 400},
      {{{"Transfer-Encoding", "Chunked"}}, 411},
      {{{"Content-Length", "1, 50"}}, 400},
      {{{"Content-Length", "1"}, {"content-length", "1"}}, 400},
      {{{"Content-Length", "-1"}}, 400},
      {{{"Content-Length", "0x10"}}, 400},
      {{{"Content-Length", ""}}, 400},
      {{{"Content-Length", "99999999999999999999999"}}, 400},
  };
  for (const auto& c : cases) {
    auto problem = framing_problem(c.headers);
    ASSERT_TRUE(problem.has_value()) << c.headers.front().first << ": " << c.headers.front().second;
    EXPECT_EQ(error_status(problem->code).status, c.status) << c.headers.front().second;
  }
}

TEST_F(HttpFrontTest, FramingProblemsAreAnsweredOverTheWire) {
  std::atomic<int> handled{0};
  start({}, [&](const HttpRequest&) {
    ++handled;
    return plain(200, "ok");
  });
  // A body on its way is drained, never kept, and the answer follows it,
  // Expect: 100-continue or not (see BodiesRefusedAsTheyArrive...).
  const std::string body(8192, 'b');
  EXPECT_EQ(status_line(request("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n"
                                "Transfer-Encoding: chunked\r\n\r\n2000\r\n" +
                                body + "\r\n0\r\n\r\n")),
            "HTTP/1.1 400 Bad Request");
  EXPECT_EQ(status_line(request("POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding : xchunked\r\n"
                                "Expect: 100-continue\r\n\r\n0\r\n\r\n")),
            "HTTP/1.1 400 Bad Request");
  EXPECT_EQ(status_line(request("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 1, 9\r\n"
                                "Expect: 100-Continue\r\n\r\n123456789")),
            "HTTP/1.1 400 Bad Request");
  EXPECT_EQ(status_line(request("POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                                "5\r\nhello\r\n0\r\n\r\n")),
            "HTTP/1.1 411 Length Required");
  EXPECT_EQ(status_line(request("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n"
                                "Content-Length: 2\r\n\r\nab")),
            "HTTP/1.1 400 Bad Request");
  EXPECT_EQ(handled.load(), 0);
}

TEST_F(HttpFrontTest, AdmissionIsDecidedBeforeTheBodyIsRead) {
  std::atomic<int> handled{0};
  HttpServerOptions options;
  options.admit = [](const HttpRequestHead& head) {
    Admission admission;
    admission.body_limit = 1024;
    if (head.header("authorization").empty()) admission.refusal = plain(401, "who are you");
    return admission;
  };
  start(options, [&](const HttpRequest& request) {
    ++handled;
    return plain(200, "read " + std::to_string(request.body.size()));
  });
  // Refused, and drained as it comes (never kept): a client that sent
  // Expect: 100-continue hears the refusal once it has sent its body.
  const std::string piece(1 << 20, 'x');
  Client anonymous(port_);
  anonymous.send(
      "POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 50331648\r\nExpect: 100-continue\r\n\r\n");
  for (int i = 0; i < 48; ++i) anonymous.send(piece);
  const std::string refused = anonymous.response();
  EXPECT_EQ(status_line(refused), "HTTP/1.1 401 Unauthorized");
  EXPECT_NE(refused.find("Connection: close"), std::string::npos);
  Client too_large(port_);
  too_large.send(
      "POST /x HTTP/1.1\r\nHost: h\r\nAuthorization: yes\r\nContent-Length: 20971520\r\n"
      "Expect: 100-continue\r\n\r\n");
  for (int i = 0; i < 20; ++i) too_large.send(piece);
  EXPECT_EQ(status_line(too_large.response()), "HTTP/1.1 413 Request Entity Too Large");
  // Without Expect the refused body is drained as it comes, then answered.
  EXPECT_EQ(status_line(request("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 300000\r\n\r\n" +
                                std::string(300000, 'x'))),
            "HTTP/1.1 401 Unauthorized");
  EXPECT_EQ(handled.load(), 0);
  // Within the limit the body is read whole.
  const std::string body(1024, 'b');
  const std::string fine = request(
      "POST /x HTTP/1.1\r\nHost: h\r\nAuthorization: yes\r\nContent-Length: 1024\r\n\r\n" + body);
  EXPECT_EQ(status_line(fine), "HTTP/1.1 200 OK");
  EXPECT_TRUE(fine.ends_with("read 1024"));
}

TEST_F(HttpFrontTest, TheOperatorsLaneAnswersWhileEveryWorkerIsBusy) {
  std::unique_ptr<Client> slow;
  hold_the_only_worker({}, slow);
  EXPECT_TRUE(request("GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n").ends_with("/healthz"))
      << "health waited behind request work";
  release_worker();
  EXPECT_TRUE(slow->response().ends_with("/slow"));
}

TEST_F(HttpFrontTest, TheTimeARequestWaitsForAWorkerIsReportedWithItsLane) {
  HttpServerOptions options;
  std::mutex mutex;
  std::vector<std::pair<Lane, double>> waits;
  options.waited = [&](Lane lane, double seconds) {
    std::lock_guard lock(mutex);
    waits.emplace_back(lane, seconds);
  };
  // The waits are measured on a clock the test moves.
  std::atomic<std::int64_t> clock_seconds{1000};
  options.clock = [&] {
    return std::chrono::steady_clock::time_point(std::chrono::seconds(clock_seconds.load()));
  };
  std::unique_ptr<Client> slow;
  hold_the_only_worker(std::move(options), slow);
  Client next(port_);
  next.send("GET /next HTTP/1.1\r\nHost: h\r\n\r\n");
  // /next waits in the requests' queue behind /slow; the clock moves on.
  while (server_->queued(Lane::kRequests) < 1) std::this_thread::yield();
  clock_seconds += 300;
  EXPECT_TRUE(request("GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n").ends_with("/healthz"));
  release_worker();
  EXPECT_TRUE(slow->response().ends_with("/slow"));
  EXPECT_TRUE(next.response().ends_with("/next"));
  std::lock_guard lock(mutex);
  ASSERT_EQ(waits.size(), 3u) << "one report a request";
  EXPECT_EQ(waits[0].first, Lane::kRequests);   // /slow
  EXPECT_EQ(waits[1].first, Lane::kOperators);  // /healthz, while the worker was held
  EXPECT_EQ(waits[1].second, 0.0) << "its own lane had a worker free";
  EXPECT_EQ(waits[2].first, Lane::kRequests);  // /next, once /slow let the worker go
  EXPECT_EQ(waits[2].second, 300.0) << "the wait behind the held worker";
}

// Searches run on workers of their own, at a lower priority, with a short
// queue: while they are all busy and one waits, another search is 429 at
// once and other requests are served by the request workers.
TEST_F(HttpFrontTest, SearchesRunInTheirOwnLaneAtALowerPriority) {
  HttpServerOptions options;
  options.workers = 1;
  options.search_workers = 1;
  options.max_searches_queued = 1;
  options.search_nice = 3;
  std::atomic<int> overflows{0};
  options.overflowed = [&](Lane lane) {
    if (lane == Lane::kSearches) ++overflows;
  };
  options.admit = [](const HttpRequestHead& head) {
    Admission admission;
    admission.body_limit = 1024;
    if (head.path.starts_with("/search")) admission.lane = Lane::kSearches;
    return admission;
  };
  const int base_nice = ::getpriority(PRIO_PROCESS, 0);
  std::shared_future<void> released = release_.get_future().share();
  auto busy = std::make_shared<std::promise<void>>();
  std::future<void> held = busy->get_future();
  std::atomic<int> search_nice{-100};
  start(std::move(options), [&, busy, released](const HttpRequest& request) {
    if (request.path == "/search-held") {
      search_nice = ::getpriority(PRIO_PROCESS, 0);
      busy->set_value();
      released.wait();
    }
    return plain(200, request.path);
  });
  Client held_search(port_);
  held_search.send("GET /search-held HTTP/1.1\r\nHost: h\r\n\r\n");
  held.wait();
  Client waiting(port_);
  waiting.send("GET /search-waiting HTTP/1.1\r\nHost: h\r\n\r\n");
  while (server_->queued(Lane::kSearches) < 1) std::this_thread::yield();
  const std::string refused = request("GET /search-refused HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_TRUE(refused.starts_with("HTTP/1.1 429")) << refused;
  EXPECT_NE(refused.find("Retry-After: 1"), std::string::npos) << refused;
  EXPECT_EQ(overflows.load(), 1);
  EXPECT_TRUE(request("GET /other HTTP/1.1\r\nHost: h\r\n\r\n").ends_with("/other"))
      << "the request worker is not the searches'";
  release_worker();
  EXPECT_TRUE(held_search.response().ends_with("/search-held"));
  EXPECT_TRUE(waiting.response().ends_with("/search-waiting"));
  EXPECT_EQ(search_nice.load(), std::min(base_nice + 3, 19));
  EXPECT_EQ(::getpriority(PRIO_PROCESS, 0), base_nice) << "the test's own thread is untouched";
}

// One client's searches hold at most their share of the lane: past it its
// next is 429 at once, while another client's waits its turn and is
// answered.
TEST_F(HttpFrontTest, OneClientCannotHoldTheSearchesLane) {
  HttpServerOptions options;
  options.workers = 1;
  options.search_workers = 1;
  options.max_searches_queued = 4;
  options.searches_per_client = 1;
  options.admit = [](const HttpRequestHead& head) {
    Admission admission;
    admission.body_limit = 1024;
    if (head.path.starts_with("/search")) {
      admission.lane = Lane::kSearches;
      admission.client = head.header("x-client");
    }
    return admission;
  };
  std::shared_future<void> released = release_.get_future().share();
  auto busy = std::make_shared<std::promise<void>>();
  std::future<void> held = busy->get_future();
  start(std::move(options), [busy, released](const HttpRequest& request) {
    if (request.path == "/search-held") {
      busy->set_value();
      released.wait();
    }
    return plain(200, request.path);
  });
  Client held_search(port_);
  held_search.send("GET /search-held HTTP/1.1\r\nHost: h\r\nX-Client: a\r\n\r\n");
  held.wait();
  const std::string again = request("GET /search-a HTTP/1.1\r\nHost: h\r\nX-Client: a\r\n\r\n");
  EXPECT_TRUE(again.starts_with("HTTP/1.1 429")) << again;
  EXPECT_NE(again.find("Retry-After: 1"), std::string::npos) << again;
  Client other(port_);
  other.send("GET /search-b HTTP/1.1\r\nHost: h\r\nX-Client: b\r\n\r\n");
  while (server_->queued(Lane::kSearches) < 1) std::this_thread::yield();
  release_worker();
  EXPECT_TRUE(held_search.response().ends_with("/search-held"));
  EXPECT_TRUE(other.response().ends_with("/search-b"));
  // Its search answered, the client has its place again.
  EXPECT_TRUE(
      request("GET /search-a HTTP/1.1\r\nHost: h\r\nX-Client: a\r\n\r\n").ends_with("/search-a"));
}

// A search gives way between stretches of its work: while requests wait
// for the request workers it sleeps, at most its allowance; with nothing
// waiting it does not sleep; off the searches' lane give_way does nothing.
TEST_F(HttpFrontTest, ASearchSleepsWhileRequestsWaitForAWorkerAtMostItsAllowance) {
  HttpServerOptions options;
  options.workers = 1;
  options.search_workers = 1;
  options.admit = [](const HttpRequestHead& head) {
    Admission admission;
    admission.body_limit = 1024;
    if (head.path.starts_with("/search")) admission.lane = Lane::kSearches;
    return admission;
  };
  constexpr std::chrono::microseconds kAllowance{3'000};
  std::shared_future<void> released = release_.get_future().share();
  auto busy = std::make_shared<std::promise<void>>();
  std::future<void> held = busy->get_future();
  start(std::move(options), [&, busy, released](const HttpRequest& request) {
    if (request.path == "/held") {
      busy->set_value();
      released.wait();
    }
    if (request.path == "/search") {
      return plain(200, std::to_string(server_->give_way(kAllowance).count()));
    }
    return plain(200, request.path);
  });
  Client holder(port_);
  holder.send("GET /held HTTP/1.1\r\nHost: h\r\n\r\n");
  held.wait();
  Client waiting(port_);
  waiting.send("GET /waiting HTTP/1.1\r\nHost: h\r\n\r\n");
  while (server_->queued(Lane::kRequests) < 1) std::this_thread::yield();
  EXPECT_EQ(server_->give_way(std::chrono::seconds(5)).count(), 0)
      << "the test's own thread is not the searches' lane";
  const std::string paused = request("GET /search HTTP/1.1\r\nHost: h\r\n\r\n");
  const auto slept = std::stoll(paused.substr(paused.rfind("\r\n\r\n") + 4));
  EXPECT_GE(slept, kAllowance.count()) << "a request waited the whole time";
  EXPECT_LT(slept, std::chrono::microseconds(std::chrono::seconds(5)).count());
  release_worker();
  EXPECT_TRUE(holder.response().ends_with("/held"));
  EXPECT_TRUE(waiting.response().ends_with("/waiting"));
  const std::string free = request("GET /search HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_TRUE(free.ends_with("\r\n\r\n0")) << free;
}

TEST_F(HttpFrontTest, AStreamedAnswerArrivesWholeAndChunked) {
  start({}, [](const HttpRequest&) {
    HttpResponse response;
    response.content_type = "text/plain";
    response.stream = [](ResponseStream& out) {
      const std::string piece(3000, 'p');
      for (int i = 0; i < 1000; ++i) {
        if (!out.write(piece)) return;
      }
      out.write("end");
    };
    return response;
  });
  const std::string answer = request("GET /export HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(status_line(answer), "HTTP/1.1 200 OK");
  EXPECT_NE(answer.find("Transfer-Encoding: chunked"), std::string::npos);
  const std::string body = dechunk(answer);
  EXPECT_EQ(body.size(), 3'000'003u);
  EXPECT_TRUE(body.ends_with("pend"));
  // HEAD: the headers, no body and no production.
  const std::string head = request("HEAD /export HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(status_line(head), "HTTP/1.1 200 OK");
  EXPECT_TRUE(head.ends_with("\r\n\r\n")) << head;
}

// An answer whose size its request bounds (stream_waits = false) never
// holds its worker on a client that does not read: the one worker is free
// for the next request, and the answer still arrives whole when read.
TEST_F(HttpFrontTest, ABoundedStreamedAnswerNeverWaitsOnItsClient) {
  HttpServerOptions options;
  options.workers = 1;
  constexpr std::size_t kPiece = 64 * 1024;
  constexpr int kPieces = 384;  // 24 MiB: far more than the sockets hold
  std::promise<void> produced;
  start(options, [&](const HttpRequest& request) {
    if (request.path != "/big") return plain(200, request.path);
    HttpResponse response;
    response.content_type = "text/plain";
    response.stream_waits = false;
    response.stream = [&](ResponseStream& out) {
      const std::string piece(kPiece, 'b');
      for (int i = 0; i < kPieces; ++i) {
        if (!out.write(piece)) return;
      }
      produced.set_value();
    };
    return response;
  });
  Client reader(port_);
  reader.send("GET /big HTTP/1.1\r\nHost: h\r\n\r\n");
  ASSERT_EQ(produced.get_future().wait_for(std::chrono::seconds(15)), std::future_status::ready)
      << "the worker waited on a client that does not read";
  EXPECT_TRUE(request("GET /next HTTP/1.1\r\nHost: h\r\n\r\n").ends_with("/next"));
  EXPECT_EQ(dechunk(reader.response()).size(), kPiece * kPieces);
}

TEST_F(HttpFrontTest, HeadHasNoBodyAndTraceReachesTheHandler) {
  start({}, [](const HttpRequest& request) {
    if (request.method == "TRACE") return plain(405, "no");
    return plain(200, "a body that HEAD must not carry");
  });
  Client client(port_);
  client.send("HEAD /x HTTP/1.1\r\nHost: h\r\n\r\n");
  const std::string head = client.response();
  EXPECT_EQ(status_line(head), "HTTP/1.1 200 OK");
  EXPECT_EQ(head.find("a body"), std::string::npos) << head;
  const std::string trace =
      request("TRACE / HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer secret-token\r\n\r\n");
  EXPECT_EQ(status_line(trace), "HTTP/1.1 405 Method Not Allowed");
  EXPECT_EQ(trace.find("secret-token"), std::string::npos) << "TRACE echoed the request";
}

TEST_F(HttpFrontTest, HealthAtOnceAnswersWhileTheOperatorsThreadAndEveryWorkerAreBusy) {
  HttpServerOptions options;
  options.workers = 1;
  options.admit = [](const HttpRequestHead& head) {
    Admission admission;
    admission.body_limit = 1024;
    if (head.path == "/metrics") admission.lane = Lane::kOperators;
    if (head.path == "/healthz") admission.lane = Lane::kAtOnce;
    return admission;
  };
  std::shared_future<void> released = release_.get_future().share();
  std::atomic<int> holding{0};
  std::promise<void> both_held;
  start(std::move(options), [&](const HttpRequest& request) {
    if (request.path == "/slow" || request.path == "/metrics") {
      if (++holding == 2) both_held.set_value();
      released.wait();
    }
    return plain(200, request.path);
  });
  Client slow(port_);
  slow.send("GET /slow HTTP/1.1\r\nHost: h\r\n\r\n");
  Client metrics(port_);
  metrics.send("GET /metrics HTTP/1.1\r\nHost: h\r\n\r\n");
  both_held.get_future().wait();
  EXPECT_TRUE(request("GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n").ends_with("/healthz"))
      << "health waited behind the operators' thread or a worker";
  release_worker();
  EXPECT_TRUE(slow.response().ends_with("/slow"));
  EXPECT_TRUE(metrics.response().ends_with("/metrics"));
}

// Bodies refused while they keep arriving, with Expect: 100-continue or
// without, chunked or with a length: each drained to its end, never cut
// short under cpprest's own body reader (answering Expect clients at once
// let the connection close under a read cpprest was starting, and crashed
// the process). 360 such connections, then the server still answers.
TEST_F(HttpFrontTest, BodiesRefusedAsTheyArriveNeverBringTheServerDown) {
  HttpServerOptions options;
  options.admit = [](const HttpRequestHead&) {
    Admission admission;
    admission.body_limit = 1024;
    admission.refusal = plain(401, "who are you");
    return admission;
  };
  start(std::move(options), [](const HttpRequest&) { return plain(200, "ok"); });
  const std::string chunk = "4000\r\n" + std::string(16384, 'c') + "\r\n";
  std::vector<std::thread> clients;
  for (int t = 0; t < 4; ++t) {
    clients.emplace_back([&, t] {
      for (int i = 0; i < 90; ++i) {
        Client client(port_);
        const bool sized = i % 3 == 2;
        const std::string framing =
            sized ? "Content-Length: 131072"
                  : std::string("Transfer-Encoding: ") + (i % 3 == 0 ? "chunked" : "xchunked");
        client.send("POST /x HTTP/1.1\r\nHost: h\r\n" + framing +
                    (t % 2 == 0 ? "\r\nExpect: 100-continue" : "") + "\r\n\r\n");
        for (int k = 0; k < 8; ++k) client.send(sized ? std::string(16384, 'c') : chunk);
        if (!sized) client.send("0\r\n\r\n");
        client.response();
      }
    });
  }
  for (auto& client : clients) client.join();
  EXPECT_EQ(status_line(request("GET /x HTTP/1.1\r\nHost: h\r\n\r\n")),
            "HTTP/1.1 401 Unauthorized");
}

// What a process has mapped, in MiB.
double mapped_mib() { return testing::process_status_mib("VmSize"); }

// A body is held as it arrives: 64 clients announcing 48 MiB each and
// sending a few bytes cost what they sent, not 3 GiB reserved up front.
TEST_F(HttpFrontTest, AnAnnouncedLengthIsNotReservedBeforeTheBodyArrives) {
  HttpServerOptions options;
  options.default_body_limit = 64u << 20;
  std::atomic<int> handled{0};
  start(std::move(options), [&](const HttpRequest& request) {
    ++handled;
    return plain(200, std::to_string(request.body.size()));
  });
  const double before = mapped_mib();
  std::vector<std::unique_ptr<Client>> half_open;
  for (int i = 0; i < 64; ++i) {
    half_open.push_back(std::make_unique<Client>(port_));
    half_open.back()->send("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 50331648\r\n\r\nstart");
  }
  // Every connection's headers are read once a request behind them is.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(status_line(request("GET /probe HTTP/1.1\r\nHost: h\r\n\r\n")), "HTTP/1.1 200 OK");
  }
  const double grown = mapped_mib() - before;
  EXPECT_LT(grown, 1024) << "MiB mapped for bodies that have not arrived";
  EXPECT_EQ(handled.load(), 3);
  // A body that does arrive is read whole.
  const std::string body(3u << 20, 'b');
  EXPECT_TRUE(request("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: " +
                      std::to_string(body.size()) + "\r\n\r\n" + body)
                  .ends_with(std::to_string(body.size())));
}

TEST_F(HttpFrontTest, HeadSaysTheLengthTheGetWouldHaveAndSendsNoBody) {
  const std::string page = "<!doctype html><title>x</title>";
  start({}, [&](const HttpRequest&) { return plain(200, page); });
  const std::string get = request("GET / HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_NE(get.find("Content-Length: " + std::to_string(page.size())), std::string::npos) << get;
  const std::string head = request("HEAD / HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(status_line(head), "HTTP/1.1 200 OK");
  EXPECT_NE(head.find("Content-Length: " + std::to_string(page.size()) + "\r\n"), std::string::npos)
      << head;
  EXPECT_EQ(head.find("Content-Length: 0"), std::string::npos) << head;
  EXPECT_TRUE(head.ends_with("\r\n\r\n")) << "no body: " << head;
}

TEST_F(HttpFrontTest, ATargetThatIsNotAPathIsRefusedAndEveryAnswerSaysNosniff) {
  std::vector<std::string> paths;
  std::mutex mutex;
  start({}, [&](const HttpRequest& request) {
    std::lock_guard lock(mutex);
    paths.push_back(request.path);
    return plain(200, "handled " + request.path);
  });
  const std::string network_path = request("GET //app.js HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(status_line(network_path), "HTTP/1.1 400 Bad Request") << network_path;
  EXPECT_TRUE(paths.empty()) << "//app.js reached the handler as " << paths.front();
  const std::string fine = request("GET /app.js HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_TRUE(fine.ends_with("handled /app.js"));
  for (const std::string& answer : {network_path, fine}) {
    EXPECT_NE(answer.find("X-Content-Type-Options: nosniff"), std::string::npos) << answer;
  }
}

}  // namespace
}  // namespace bulleted::appview
