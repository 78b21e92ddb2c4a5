// The HTTP front: HTTP/1.1 on Boost.Asio (Beast's parser reads request
// heads), behind a small interface of plain request/response values.
// Handlers run on the server's own worker threads (never on the threads
// that read and write sockets), so they may block on SQLite.
//
// Guarantees:
// - every path and method (OPTIONS and TRACE included) reaches the handler;
// - the framing is checked before anything else: Transfer-Encoding with
//   Content-Length, an unknown transfer coding, or a malformed, repeated or
//   conflicting Content-Length is 400, a chunked body 411 (nginx in front
//   turns chunked bodies into a length); a head that is not HTTP is 400, one
//   over 64 KiB 431;
// - `admit` decides from the request line and headers alone, before a byte
//   of the body is read, whether the request may go on and how large its
//   body may be; a refused or oversized body (chunked or not) is never read
//   into memory: the answer goes out, then what the client still sends is
//   dropped as it arrives, for a bounded time, and the connection closed;
// - an admitted body is read once, into the request's string, which grows
//   with what has arrived (never reserved from the announced length);
//   Expect: 100-continue is answered once the body is admitted;
// - a head must arrive, and every body read and answer write make progress,
//   within `read_timeout`, or the connection is closed;
// - requests admitted to the operators' lane (metrics) are answered by a
//   thread of their own that never waits behind request work, and those
//   admitted to answer at once (health, readiness: reads of kept state) on
//   the connection's own thread, behind nothing; a full work queue is 503;
// - a request target of the form //host/path is 400, not "/";
// - every answer says X-Content-Type-Options: nosniff;
// - a response may be streamed (chunked) as a handler produces it, with at
//   most ~1 MiB waiting for the client; or held open (server-sent events):
//   its head sent, then written from any thread, holding no worker;
// - requests admitted to the streams' lane are taken up by a worker of
//   their own, behind a queue of their own (opening a held answer is quick);
// - HEAD is answered without a body, with the Content-Length the GET would
//   have (or chunked, for a streamed answer), and the connection closed;
// - pipelined requests are answered in order;
// - every request gets exactly one reply; stop() answers new requests 503
//   and waits for in-flight ones;
// - connections are capped per address and in all, with a reserve for
//   health and the operators (see HttpServerOptions).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schema/error.hpp"

namespace bulleted::appview {

// What the front knows before it reads a body.
struct HttpRequestHead {
  std::string method;
  std::string path;                            // decoded path, no query
  std::string query;                           // raw query string, without '?'
  std::map<std::string, std::string> headers;  // lower-case names
  std::string remote;                          // the TCP peer's address
  std::string header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

struct HttpRequest : HttpRequestHead {
  std::string body;
};

// Where a streamed response's bytes go.
class ResponseStream {
 public:
  virtual ~ResponseStream() = default;
  // Queues `bytes` for the client, waiting while ~1 MiB is already waiting
  // (unless the answer said it need not: HttpResponse::stream_waits).
  // False when the client stopped reading (gone, or no progress for 30 s):
  // the producer should stop.
  virtual bool write(std::string_view bytes) = 0;
};

// An answer held open after its handler returned: written from any thread,
// never waiting. Thread-safe.
class HeldAnswer {
 public:
  virtual ~HeldAnswer() = default;
  // Queues `bytes` for the client at once; false when the client is gone
  // or the answer ended.
  virtual bool write(std::string_view bytes) = 0;
  // Bytes written and not yet taken up by the connection.
  virtual std::size_t queued() const = 0;
  // The answer is over: ended here, or its client left (a send failed).
  virtual bool over() const = 0;
  // Ends the answer: what is queued goes out, then the last chunk. With
  // `abort`, the connection is closed instead (a client that stopped
  // reading) and what is queued is dropped.
  virtual void end(bool abort = false) = 0;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // Written out as given, a line each.
  std::vector<std::pair<std::string, std::string>> headers;
  // When set, the body is produced by this function on the worker thread
  // and sent chunked as it is written (`body` is ignored).
  std::function<void(ResponseStream&)> stream;
  // Whether write() waits for a slow client. An answer whose whole size its
  // request bounds (getSubtree's budget) sets it false: its worker never
  // waits on the client, and the answer is held whole if need be, as an
  // answer that is not streamed would be.
  bool stream_waits = true;
  // When set, the answer is held open: the front sends its head and hands
  // `hold` the answer, to write into from any thread, and the worker goes
  // on to other requests (`body` and `stream` are ignored). A HEAD request
  // gets the head only.
  std::function<void(std::shared_ptr<HeldAnswer>)> hold;
};

enum class Lane {
  kRequests,   // the worker pool
  kOperators,  // a thread of its own: metrics, and whatever below has a body
  kAtOnce,     // the connection's own thread, no queue: answers that are only
               // reads of kept state (/healthz, /readyz); the handler must not
               // block
  kStreams,    // a worker and a queue of their own: held answers (change
               // streams), whose handlers only open them
  kSearches,   // workers of their own at a lower CPU priority, and a short
               // queue (429 past it): searches, whose cost other requests
               // must not feel
};

// The front's decision from the head of a request.
struct Admission {
  std::optional<HttpResponse> refusal;  // answered without reading the body
  std::size_t body_limit = 0;           // 413 above it
  Lane lane = Lane::kRequests;
  // Who the request is for the searches' lane's places (the client's key):
  // at most HttpServerOptions::searches_per_client of one client's searches
  // run or wait at once; empty: not counted.
  std::string client;
};

struct HttpServerOptions {
  std::string bind = "127.0.0.1";
  int port = 2584;
  int workers = 4;
  // Threads that read and write sockets (never handlers' work, but health
  // answers at once on them).
  int io_threads = 2;
  // A request's head must arrive within this of the connection's opening
  // or its last answer's end (idle keep-alive connections close then); a
  // body read or an answer write must make progress within it.
  std::chrono::seconds read_timeout{30};
  std::size_t max_queued = 1024;
  // The streams' lane's queue (10,000 clients reconnecting at once after a
  // restart wait there, not in the requests' queue).
  std::size_t max_streams_queued = 16384;
  // The searches' lane: its workers (each with a nice value this much
  // above the process's, at most 19: the kernel gives other workers the
  // cores first; under a load that keeps every core busy, searches wait for
  // them), and how many searches may wait for one.
  int search_workers = 1;
  std::size_t max_searches_queued = 1;
  // One client's searches running or waiting at once (Admission::client):
  // past it 429 at once, so one client cannot hold the lane from everyone.
  std::size_t searches_per_client = 2;
  int search_nice = 19;
  // Called when a lane's queue is full and a request is refused for it.
  std::function<void(Lane)> overflowed;
  // Called on a connection's thread with the request's head; must be quick (no
  // network, at most an indexed SQLite read). Without it every request is
  // admitted with `default_body_limit`.
  std::function<Admission(const HttpRequestHead&)> admit;
  std::size_t default_body_limit = 1024 * 1024;
  // The answer to the front's own refusals (400, 411, 413, 503, ...), in the
  // API's error format; without it, the same JSON from the error table.
  std::function<HttpResponse(const Error&)> refusal;
  // Called on every answer before it is sent (the handler's, the
  // admission's refusals and the front's own), with the request's head:
  // headers every answer carries (CORS). Must be quick.
  std::function<void(const HttpRequestHead&, HttpResponse&)> decorate;
  // Called by the worker that takes up a request, before the handler, with
  // its lane and the seconds it waited in that lane's queue (from the head
  // or, with a body, from the body's end). Must be quick.
  std::function<void(Lane, double)> waited;
  // The clock those waits are measured on; unset: the steady clock.
  std::function<std::chrono::steady_clock::time_point()> clock;
  // Connections: at most `connections_per_address` open from one address
  // (an IPv6 client's /64), except addresses `uncapped` says are the
  // operator's own proxies; at most `max_connections` in all (0: what the
  // open-files limit leaves after kOtherFiles), of which the last
  // `reserved_connections` only answer the operators' and at-once lanes
  // (health, readiness, metrics; anything else 503): one address, or a
  // crowd, cannot take the descriptors health needs. A connection past a
  // limit is reset at once, before a byte is read.
  std::size_t connections_per_address = 256;
  std::size_t max_connections = 0;
  std::size_t reserved_connections = 32;
  std::function<bool(const std::string&)> uncapped;
  static constexpr std::size_t kOtherFiles = 1024;
  // What heads larger than 8 KiB may hold, in all, while they arrive
  // (503 past it): unfinished heads cannot hold memory without bound.
  std::size_t large_head_bytes = 16 * 1024 * 1024;
  // The kernel's send buffer of each connection (SO_SNDBUF; 0: the
  // kernel's own, which grows with the connection).
  int send_buffer_bytes = 0;
};

// What the front refused or cut off (for /metrics).
struct HttpFrontCounters {
  std::size_t open = 0;                // connections open now
  std::size_t refused_address = 0;     // past connections_per_address
  std::size_t refused_total = 0;       // past max_connections
  std::size_t refused_large_head = 0;  // heads refused for the large-head budget
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

// The framing problem of a request's headers (names as sent), or nullopt:
// kInvalidRequest (400) or kLengthRequired (411). Exposed for tests; the
// server applies it to every request.
std::optional<Error> framing_problem(
    const std::vector<std::pair<std::string, std::string>>& headers);

class HttpServer {
 public:
  HttpServer(HttpServerOptions options, HttpHandler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  Result<void> start();
  // Stops accepting work (new requests get 503 and Connection: close), waits
  // up to `grace` for in-flight requests and for the answers connections are
  // writing (a held answer its holder ended still sends its last bytes),
  // then closes every connection.
  void stop(std::chrono::milliseconds grace);
  std::size_t in_flight() const;
  HttpFrontCounters counters() const;
  // Requests waiting in a lane's queue for a worker.
  std::size_t queued(Lane lane) const;
  // Called by a search between stretches of its work, on the searches'
  // lane: while requests wait in the request workers' queue, sleeps in
  // steps of kGiveWayStep, for at most `allowance` in all; then gives up
  // the core once, so that any thread waiting for one (a request's worker,
  // a connection's) runs first. Returns the time it slept. Anywhere but on
  // the searches' lane it does nothing.
  std::chrono::microseconds give_way(std::chrono::microseconds allowance) const;
  static constexpr std::chrono::microseconds kGiveWayStep{200};

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace bulleted::appview
