// One client connection of the HTTP front (internal to appview/http/): reads
// request heads and admitted bodies, hands requests to the front, writes
// their answers, and closes what it refuses without keeping any of it.
//
// Bounds, each a constant below or an option:
// - a request's head (request line and headers) is at most kHeadLimit bytes
//   (431 above it) and must arrive whole within `read_timeout` of the
//   connection's opening or of the last answer's end (an idle keep-alive
//   connection is closed then); what a head holds past kFreeHead while it
//   arrives comes from a budget all connections share (503 when it is
//   spent), so unfinished large heads cannot hold memory without bound;
//   empty lines before the request line are ignored, and an HTTP/1.1
//   request without exactly one Host is 400;
// - an admitted body is read as it arrives, never reserved from its
//   announced length, each read making progress within `read_timeout`;
// - a body the front refuses is never read into memory: the answer goes out,
//   the connection stops sending, and what the client still sends is read
//   into a small scratch buffer and dropped, for at most kLingerTime (so the
//   client hears the answer rather than a reset), then the connection is
//   closed. A chunked body is always refused (411), whatever its chunks say;
// - every write makes progress within `read_timeout` or the connection is
//   reset, except a held answer's while it is held, whose holder decides
//   when its client has stalled (and ends the answer, which stops the
//   write); once its holder ends it, its last bytes too must make progress
//   within `read_timeout`. A held answer's socket keeps at most
//   kHeldSendBuffer unsent in the kernel, and a client that leaves while
//   it is held (its end read) ends it at once;
// - a connection closed because its client stopped reading (a write's
//   timeout, an answer aborted, shut()) is reset (RST), so the kernel drops
//   what was unsent at once instead of keeping it in FIN-WAIT-1;
// - pipelined requests are answered one after the other, in order.
#pragma once

// clang-format off
#include <utility>  // before asio: its awaitable.hpp uses std::exchange
// clang-format on
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "appview/http/answers.hpp"
#include "appview/http/reply.hpp"
#include "appview/http/server.hpp"

namespace bulleted::appview::http_detail {

using Fields = std::vector<std::pair<std::string, std::string>>;

// What the front decided for a request whose head has been read.
struct Decision {
  std::optional<HttpResponse> answer;  // answered without reading the body
  bool close = false;                  // ...and the connection closed after it
  Lane lane = Lane::kRequests;
  std::size_t body_length = 0;  // what to read before the request is handed on
  std::string client;           // Admission::client
};

class Connection;

// A socket's peer address (an IPv4-mapped IPv6 address as IPv4); empty when
// it has none.
std::string peer_address(const boost::asio::ip::tcp::socket& socket);
// Closes `socket` with a reset: nothing it still holds is sent.
void reset_socket(boost::asio::ip::tcp::socket& socket);

// What a connection asks of the server (the server's state is one).
class Front {
 public:
  virtual ~Front() = default;
  // From the head alone (`head.path` and `.query` set from `target`).
  // `reserve`: the connection is one of the reserve kept for health and
  // the operators (anything else is refused).
  virtual Decision decide(const HttpRequestHead& head, const Fields& fields, const Target& target,
                          std::size_t length, bool body_pending, bool reserve) = 0;
  // Hands a request whose body has been read to its lane; its answer comes
  // through `reply`. kAtOnce: served here, on the calling thread.
  virtual void hand_on(HttpRequest request, Lane lane, const std::string& client,
                       std::shared_ptr<Reply> reply) = 0;
  // A request handed on (or about to be) will not be answered: its client left.
  virtual void abandoned() = 0;
  // A connection starts (true) or ends (false) writing a handed-on
  // request's answer: stop() lets answers being written finish (a held
  // answer its holder has ended still has its last bytes to send).
  virtual void answering(bool started) = 0;
  virtual HttpResponse refusal(const Error& error) const = 0;
  virtual void decorate(const HttpRequestHead& head, HttpResponse& response) const = 0;
  virtual std::chrono::seconds read_timeout() const = 0;
  virtual void closed(Connection* connection) = 0;
  // The budget of bytes that heads larger than Connection::kFreeHead hold
  // while they arrive (all connections together): false when it has no
  // room for `bytes` more (the head is refused, 503).
  virtual bool take_head_bytes(std::size_t bytes) = 0;
  virtual void give_head_bytes(std::size_t bytes) = 0;
  virtual void refused_large_head() = 0;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  static constexpr std::size_t kHeadLimit = 64 * 1024;
  // What a head may hold while it arrives without drawing on the front's
  // budget for large heads (requests' heads are far smaller).
  static constexpr std::size_t kFreeHead = 8 * 1024;
  static constexpr auto kLingerTime = std::chrono::seconds(30);

  // `remote`: the peer's address (peer_address()).
  Connection(std::shared_ptr<Front> front, boost::asio::ip::tcp::socket socket, std::string remote);
  // Before run(): one of the connections kept for health and the operators
  // (anything else it asks is refused).
  void keep_for_operators() { reserve_ = true; }
  // Before run(), instead of it: reset at once, unread.
  void refuse();
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Serves the connection until it closes (runs on its strand).
  boost::asio::awaitable<void> run();
  // From any thread: the connection closes as soon as its strand runs, and
  // what its answer would still write is dropped now.
  void shut();

 private:
  struct Read;
  boost::asio::awaitable<std::optional<Read>> read_head();
  boost::asio::awaitable<bool> read_body(std::string& body, std::size_t length);
  boost::asio::awaitable<bool> serve(Read read);
  boost::asio::awaitable<bool> deliver(const HttpRequestHead& head, bool keep_alive, int version);
  boost::asio::awaitable<bool> stream_body(Reply::Taken taken, bool chunked);
  boost::asio::awaitable<bool> answer_unread(const HttpRequestHead& head, HttpResponse out,
                                             bool close, bool drain);
  // Writes `pieces` in slices, each within the read timeout (none while a
  // held answer is held); each slice written is told to `progress`.
  boost::asio::awaitable<bool> write(std::vector<boost::asio::const_buffer> pieces,
                                     Reply* progress = nullptr);
  // The write under way must end within the read timeout, or the
  // connection is reset.
  void arm_finish();
  // While a held answer is written: a client that leaves (its end read)
  // ends the answer at once, so its holder need not write to find out.
  void watch_departure();
  boost::asio::awaitable<void> linger();
  boost::asio::awaitable<Reply::Taken> next();
  void woken();

  std::shared_ptr<Front> front_;
  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  boost::asio::steady_timer signal_;
  boost::asio::steady_timer finish_;  // the deadline of the write under way
  std::string remote_;
  bool reserve_ = false;
  std::shared_ptr<Reply> reply_;
  std::mutex reply_mutex_;  // reply_ is set on the strand, closed by shut()
  bool shut_ = false;
  bool held_ = false;               // writing a held answer: no write timeout of its own
  bool writing_ = false;            // a write is under way
  std::uint64_t finish_armed_ = 0;  // which arming of finish_ is current
  bool reset_ = false;              // close with a reset (its client stopped reading)
};

}  // namespace bulleted::appview::http_detail
