#include "firehose/client/http_exchange.hpp"

#include <netdb.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <cerrno>
#include <cstring>
#include <deque>
#include <future>
#include <list>
#include <mutex>
#include <thread>

#include "firehose/client/name_lookup.hpp"
#include "firehose/client/network_policy.hpp"

namespace bulleted::firehose {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using boost::system::error_code;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::size_t kHeadLimit = 32 * 1024;
constexpr std::size_t kReadAhead = 64 * 1024;     // what one read asks for
constexpr std::size_t kBufferLimit = 128 * 1024;  // what is read ahead of the parser
constexpr std::size_t kIdlePerOrigin = 4;
constexpr auto kIdleLife = std::chrono::seconds(30);
constexpr int kMostInterimAnswers = 4;

auto with(error_code& ec) { return asio::redirect_error(asio::use_awaitable, ec); }

// The process's outbound I/O thread: started when a client first needs it,
// stopped when the last has let go.
class IoThread {
 public:
  static std::shared_ptr<IoThread> shared() {
    static std::mutex mutex;
    static std::weak_ptr<IoThread> current;
    std::lock_guard lock(mutex);
    auto found = current.lock();
    if (!found) {
      found = std::make_shared<IoThread>();
      current = found;
    }
    return found;
  }
  IoThread() : work_(asio::make_work_guard(io_)), thread_([this] { io_.run(); }) {}
  ~IoThread() {
    work_.reset();
    io_.stop();
    thread_.join();
  }
  asio::io_context& io() { return io_; }

 private:
  asio::io_context io_{1};
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::thread thread_;
};

struct Origin {
  bool tls = false;
  std::string authority;  // host[:port], as the Host header
  std::string host;       // without brackets
  std::string port;
  std::string prefix;  // a path before every target ("" or "/x")
};

Result<Origin> parse_origin(std::string_view url) {
  Origin origin;
  if (url.starts_with("https://")) {
    origin.tls = true;
    url.remove_prefix(8);
  } else if (url.starts_with("http://")) {
    url.remove_prefix(7);
  } else {
    return fail(ErrorCode::kUpstreamFailure, "not an http(s) URL");
  }
  const std::size_t slash = url.find('/');
  origin.authority = std::string(url.substr(0, slash));
  if (slash != std::string_view::npos) origin.prefix = std::string(url.substr(slash));
  while (!origin.prefix.empty() && origin.prefix.back() == '/') origin.prefix.pop_back();
  std::string_view authority = origin.authority;
  if (authority.empty() || authority.find_first_of("@ \r\n?#") != std::string_view::npos) {
    return fail(ErrorCode::kUpstreamFailure, "a URL with no host, or with credentials");
  }
  std::string_view port;
  if (authority.starts_with("[")) {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos)
      return fail(ErrorCode::kUpstreamFailure, "a bad IPv6 host");
    origin.host = std::string(authority.substr(1, close - 1));
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return fail(ErrorCode::kUpstreamFailure, "a bad host");
      port = authority.substr(close + 2);
    }
  } else {
    const std::size_t colon = authority.rfind(':');
    origin.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (origin.host.empty() || (!port.empty() && !std::all_of(port.begin(), port.end(), [](char c) {
        return c >= '0' && c <= '9';
      }))) {
    return fail(ErrorCode::kUpstreamFailure, "a bad host or port");
  }
  origin.port = port.empty() ? (origin.tls ? "443" : "80") : std::string(port);
  return origin;
}

// A target or header that would break the request's framing.
bool sendable(std::string_view text) {
  return std::none_of(text.begin(), text.end(),
                      [](char c) { return c == '\r' || c == '\n' || c == '\0'; });
}

bool is_ip_literal(const std::string& host) {
  error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

struct Connection {
  // Beast reads as much at a time as the buffer's capacity holds free (512
  // bytes at first): 64 KiB from the start, not 512 bytes a read.
  Connection() { buffer.reserve(kReadAhead); }
  std::optional<beast::tcp_stream> plain;
  std::optional<beast::ssl_stream<beast::tcp_stream>> secure;
  beast::flat_buffer buffer{kBufferLimit};
  Clock::time_point idle_since;
  beast::tcp_stream& tcp() { return secure ? beast::get_lowest_layer(*secure) : *plain; }
};

// Whether a kept connection may carry a request: the host has not closed it
// (or sent anything on it, which it never does on an idle one). Seen before
// a request goes out, so that a request is seldom sent on a closed one.
bool still_open(Connection& connection) {
  char byte = 0;
  const ssize_t n =
      ::recv(connection.tcp().socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

// What one try on one connection came to.
struct Try {
  Result<HttpAnswer> answer = fail(ErrorCode::kUpstreamFailure, "");
  bool reusable = false;      // the connection may carry another exchange
  bool nothing_came = false;  // failed before a byte of the answer arrived
  bool unsent = false;        // failed while sending: the host has no whole request
};

Error transport_error(const error_code& ec, std::string_view step) {
  if (ec == http::error::body_limit || ec == http::error::header_limit ||
      ec == http::error::buffer_overflow) {
    return Error{ErrorCode::kPayloadTooLarge, "answer larger than the limit"};
  }
  if (ec == beast::error::timeout) {
    return Error{ErrorCode::kUpstreamFailure, std::string(step) + ": timed out"};
  }
  return Error{ErrorCode::kUpstreamFailure, std::string(step) + ": " + ec.message()};
}

template <class Stream>
asio::awaitable<Try> send_and_read(Stream& stream, beast::flat_buffer& buffer,
                                   http::request<http::string_body>& request,
                                   std::size_t max_body_bytes) {
  Try result;
  error_code ec;
  co_await http::async_write(stream, request, with(ec));
  if (ec) {
    result.answer = std::unexpected(transport_error(ec, "sending"));
    result.nothing_came = true;
    result.unsent = true;
    co_return result;
  }
  // Interim answers (1xx) before the answer are read and passed over, a
  // few at most.
  std::optional<http::response_parser<http::string_body>> parser;
  for (int interim = 0;; ++interim) {
    parser.emplace();
    parser->header_limit(kHeadLimit);
    parser->body_limit(max_body_bytes);
    // The head alone first: Beast 1.74 forgets a Content-Length over the
    // body's limit when the body's first bytes are parsed together with
    // the head (an eager read), and reads the whole body.
    co_await http::async_read_header(stream, buffer, *parser, with(ec));
    if (!ec && parser->content_length() && *parser->content_length() > max_body_bytes) {
      ec = http::error::body_limit;
    }
    if (!ec && !parser->is_done()) co_await http::async_read(stream, buffer, *parser, with(ec));
    if (ec) {
      result.answer = std::unexpected(transport_error(ec, "reading the answer"));
      result.nothing_came = interim == 0 && !parser->got_some() && ec != beast::error::timeout;
      co_return result;
    }
    const unsigned status = parser->get().result_int();
    if (status < 100 || status >= 200 || status == 101) break;
    if (interim == kMostInterimAnswers) {
      result.answer = fail(ErrorCode::kUpstreamFailure, "reading the answer: only interim answers");
      co_return result;
    }
  }
  HttpAnswer answer;
  auto message = parser->release();
  answer.status = static_cast<int>(message.result_int());
  for (const auto& field : message) {
    std::string name(field.name_string());
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    answer.headers[name] = std::string(field.value());
  }
  answer.body = std::move(message.body());
  result.reusable = message.keep_alive() && buffer.size() == 0;
  result.answer = std::move(answer);
  co_return result;
}

// The addresses of `origin`'s host, resolved for the calling thread (which
// waits for its exchange anyway) by the exchange's deadline: a slow name
// server holds only the caller asking for that name, until its deadline,
// never the I/O thread or other callers.
Result<std::vector<tcp::endpoint>> resolve(const Origin& origin, Clock::time_point deadline) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  auto found = NameLookups::shared().look_up(origin.host, origin.port, hints, deadline);
  if (!found) return std::unexpected(found.error());
  std::vector<tcp::endpoint> endpoints;
  for (addrinfo* entry = found->get(); entry != nullptr; entry = entry->ai_next) {
    if (entry->ai_family != AF_INET && entry->ai_family != AF_INET6) continue;
    tcp::endpoint endpoint;
    std::memcpy(endpoint.data(), entry->ai_addr, entry->ai_addrlen);
    endpoint.resize(entry->ai_addrlen);
    endpoints.push_back(endpoint);
  }
  if (endpoints.empty()) return fail(ErrorCode::kUpstreamFailure, "cannot resolve " + origin.host);
  return endpoints;
}

}  // namespace

struct HttpConnections::State {
  explicit State(HttpLimits given) : limits(std::move(given)), io_thread(IoThread::shared()) {
    tls.set_default_verify_paths();
    tls.set_verify_mode(ssl::verify_peer);
    SSL_CTX_set_min_proto_version(tls.native_handle(), TLS1_2_VERSION);
    if (limits.extra_trust_pem) {
      tls.add_certificate_authority(asio::buffer(*limits.extra_trust_pem));
    }
  }

  HttpLimits limits;
  std::shared_ptr<IoThread> io_thread;
  ssl::context tls{ssl::context::tls_client};
  std::atomic<std::size_t> hosts{0};

  // Origins, most recently used first, and each one's idle connections. A
  // connection's sockets are used on the I/O thread only; the lists are
  // taken from and given to under the mutex, from any thread.
  std::mutex mutex;
  std::list<std::string> recent;
  std::map<std::string,
           std::pair<std::deque<std::unique_ptr<Connection>>, std::list<std::string>::iterator>>
      idle;

  // Connections let go of end on the I/O thread (a timer of theirs may
  // still have a completion queued there).
  void let_go(std::unique_ptr<Connection> connection) {
    if (connection) asio::post(io_thread->io(), [gone = std::move(connection)] {});
  }

  std::unique_ptr<Connection> take(const std::string& key) {
    std::lock_guard lock(mutex);
    auto found = idle.find(key);
    if (found == idle.end()) {
      while (idle.size() >= std::max<std::size_t>(1, limits.max_hosts) && !recent.empty()) {
        auto evicted = idle.find(recent.back());
        for (auto& connection : evicted->second.first) let_go(std::move(connection));
        idle.erase(evicted);
        recent.pop_back();
      }
      recent.push_front(key);
      idle.emplace(key, std::pair{std::deque<std::unique_ptr<Connection>>{}, recent.begin()});
      hosts = idle.size();
      return nullptr;
    }
    recent.splice(recent.begin(), recent, found->second.second);
    auto& kept = found->second.first;
    while (!kept.empty()) {  // the one used last first: the least likely closed
      auto connection = std::move(kept.back());
      kept.pop_back();
      if (Clock::now() - connection->idle_since < kIdleLife && still_open(*connection)) {
        return connection;
      }
      let_go(std::move(connection));
    }
    return nullptr;
  }

  void keep(const std::string& key, std::unique_ptr<Connection> connection) {
    connection->tcp().expires_never();
    connection->idle_since = Clock::now();
    std::lock_guard lock(mutex);
    auto found = idle.find(key);
    if (found == idle.end() || found->second.first.size() >= kIdlePerOrigin) return;
    found->second.first.push_back(std::move(connection));
  }

  asio::awaitable<Result<std::unique_ptr<Connection>>> connect(
      const Origin& origin, const std::vector<tcp::endpoint>& endpoints,
      Clock::time_point deadline) {
    auto& io = io_thread->io();
    error_code ec;
    auto connection = std::make_unique<Connection>();
    if (origin.tls) {
      connection->secure.emplace(io, tls);
    } else {
      connection->plain.emplace(io);
    }
    connection->tcp().expires_at(deadline);
    co_await connection->tcp().async_connect(endpoints, with(ec));
    if (ec) co_return std::unexpected(transport_error(ec, "connecting to " + origin.authority));
    // A request goes out at once, never held back for the last answer's
    // acknowledgement (Nagle's algorithm with the host's delayed ACK: 40 ms
    // a call, measured).
    connection->tcp().socket().set_option(tcp::no_delay(true), ec);
    if (origin.tls) {
      auto& stream = *connection->secure;
      if (!is_ip_literal(origin.host) &&
          SSL_set_tlsext_host_name(stream.native_handle(), origin.host.c_str()) != 1) {
        co_return fail(ErrorCode::kUpstreamFailure, "TLS: cannot name " + origin.host);
      }
      stream.set_verify_callback(ssl::host_name_verification(origin.host));
      co_await stream.async_handshake(ssl::stream_base::client, with(ec));
      if (ec) co_return std::unexpected(transport_error(ec, "TLS with " + origin.authority));
    }
    co_return connection;
  }

  // One try, on the I/O thread: on `connection` when it is given (a kept
  // one), else on a new one to `endpoints`; kept afterwards when it may
  // carry another exchange. The caller waits, so the references hold.
  asio::awaitable<Try> attempt(const Origin& origin, const std::string& key,
                               std::unique_ptr<Connection> connection,
                               const std::vector<tcp::endpoint>& endpoints,
                               http::request<http::string_body>& request,
                               Clock::time_point deadline) {
    if (!connection) {
      auto made = co_await connect(origin, endpoints, deadline);
      if (!made) co_return Try{.answer = std::unexpected(made.error())};
      connection = std::move(*made);
    }
    connection->tcp().expires_at(deadline);
    Try outcome;
    if (connection->secure) {
      outcome = co_await send_and_read(*connection->secure, connection->buffer, request,
                                       limits.max_body_bytes);
    } else {
      outcome = co_await send_and_read(*connection->plain, connection->buffer, request,
                                       limits.max_body_bytes);
    }
    if (outcome.answer && outcome.reusable) keep(key, std::move(connection));
    co_return outcome;
  }
};

namespace {

// Runs `work` on the I/O thread and waits for its outcome.
Try on_io_thread(asio::io_context& io, asio::awaitable<Try> work) {
  auto promise = std::make_shared<std::promise<Try>>();
  auto future = promise->get_future();
  asio::co_spawn(io, std::move(work), [promise](std::exception_ptr error, Try outcome) {
    if (error) {
      try {
        std::rethrow_exception(error);
      } catch (const std::exception& e) {
        outcome = Try{.answer = fail(ErrorCode::kUpstreamFailure, e.what())};
      } catch (...) {
        outcome = Try{.answer = fail(ErrorCode::kUpstreamFailure, "the exchange failed")};
      }
    }
    promise->set_value(std::move(outcome));
  });
  return future.get();
}

}  // namespace

HttpConnections::HttpConnections(HttpLimits limits)
    : state_(std::make_shared<State>(std::move(limits))) {}

HttpConnections::~HttpConnections() {
  // The kept connections end on the I/O thread, before the state does.
  std::promise<void> done;
  asio::post(state_->io_thread->io(), [this, &done] {
    std::lock_guard lock(state_->mutex);
    state_->idle.clear();
    done.set_value();
  });
  done.get_future().wait();
}

std::size_t HttpConnections::pooled_hosts() const { return state_->hosts.load(); }

Result<HttpAnswer> HttpConnections::exchange(std::string_view origin_url,
                                             const HttpExchange& exchange) {
  auto origin = parse_origin(origin_url);
  if (!origin) return std::unexpected(origin.error());
  const std::string target = origin->prefix + exchange.target;
  if (!sendable(target) || target.find(' ') != std::string::npos) {
    return fail(ErrorCode::kInvalidRequest, "a request target that cannot be sent: " + target);
  }
  http::request<http::string_body> request{
      exchange.method == "POST" ? http::verb::post : http::verb::get, target, 11};
  request.set(http::field::host, origin->authority);
  request.set(http::field::user_agent, "bulleted-appview");
  for (const auto& [name, value] : exchange.headers) {
    if (name.empty() || !sendable(name) || !sendable(value) ||
        name.find_first_of(" :") != std::string::npos) {
      return fail(ErrorCode::kInvalidRequest, "a request header that cannot be sent: " + name);
    }
    request.set(name, value);
  }
  if (exchange.method == "POST") {
    request.body() = exchange.body;
    request.prepare_payload();
  }
  const auto deadline = Clock::now() + state_->limits.timeout;
  // Connections made for the network's hosts are kept apart: their
  // addresses were checked.
  const std::string key = (origin->tls ? "https://" : "http://") + origin->authority +
                          (exchange.public_only ? " public" : "");
  // A kept connection first, and once more on a new one when the host had
  // closed the kept one unseen; a POST only when the host had none of it
  // (one it read may have been carried out: never sent twice).
  std::unique_ptr<Connection> connection = state_->take(key);
  for (bool reused = connection != nullptr;; reused = false) {
    std::vector<tcp::endpoint> endpoints;
    if (!connection) {
      auto resolved = resolve(*origin, deadline);
      if (!resolved) return std::unexpected(resolved.error());
      endpoints = std::move(*resolved);
      if (exchange.public_only) {
        for (const tcp::endpoint& endpoint : endpoints) {
          if (is_private_address(endpoint.address().to_string())) {
            return fail(
                ErrorCode::kInvalidRequest,
                origin->host + " resolves to an address the network may not send this app view to");
          }
        }
      }
    }
    Try outcome = on_io_thread(
        state_->io_thread->io(),
        state_->attempt(*origin, key, std::move(connection), endpoints, request, deadline));
    if (!outcome.answer && outcome.nothing_came && reused &&
        (exchange.method != "POST" || outcome.unsent)) {
      continue;
    }
    return std::move(outcome.answer);
  }
}

}  // namespace bulleted::firehose
