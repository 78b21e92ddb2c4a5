// One client connection of the HTTP front (internal to appview/http/): reads
// request heads and admitted bodies, hands requests to the front, writes
// their answers, and closes what it refuses without keeping any of it.
//
// Bounds, each a constant below or an option:
// - a request's head (request line and headers) is at most kHeadLimit bytes
//   (431 above it) and must arrive whole within `read_timeout` of the
//   connection's opening or of the last answer's end (an idle keep-alive
//   connection is closed then);
// - an admitted body is read as it arrives, never reserved from its
//   announced length, each read making progress within `read_timeout`;
// - a body the front refuses is never read into memory: the answer goes out,
//   the connection stops sending, and what the client still sends is read
//   into a small scratch buffer and dropped, for at most kLingerTime (so the
//   client hears the answer rather than a reset), then the connection is
//   closed. A chunked body is always refused (411), whatever its chunks say;
// - every write makes progress within `read_timeout` or the connection is
//   closed, except a held answer's, whose holder decides when its client
//   has stalled (and ends the answer, which stops the write);
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
};

class Connection;

// What a connection asks of the server (the server's state is one).
class Front {
 public:
  virtual ~Front() = default;
  // From the head alone (`head.path` and `.query` set from `target`).
  virtual Decision decide(const HttpRequestHead& head, const Fields& fields, const Target& target,
                          std::size_t length, bool body_pending) = 0;
  // Hands a request whose body has been read to its lane; its answer comes
  // through `reply`. kAtOnce: served here, on the calling thread.
  virtual void hand_on(HttpRequest request, Lane lane, std::shared_ptr<Reply> reply) = 0;
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
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  static constexpr std::size_t kHeadLimit = 64 * 1024;
  static constexpr auto kLingerTime = std::chrono::seconds(30);

  Connection(std::shared_ptr<Front> front, boost::asio::ip::tcp::socket socket);
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
  boost::asio::awaitable<bool> write(std::vector<boost::asio::const_buffer> pieces);
  boost::asio::awaitable<void> linger();
  boost::asio::awaitable<Reply::Taken> next();
  void woken();

  std::shared_ptr<Front> front_;
  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  boost::asio::steady_timer signal_;
  std::string remote_;
  std::shared_ptr<Reply> reply_;
  std::mutex reply_mutex_;  // reply_ is set on the strand, closed by shut()
  bool shut_ = false;
  bool held_ = false;  // writing a held answer: no write timeout of its own
};

}  // namespace bulleted::appview::http_detail
