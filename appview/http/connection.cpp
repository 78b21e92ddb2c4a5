#include "appview/http/connection.hpp"

#include <array>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_prefix.hpp>
#include <boost/beast/core/buffers_suffix.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <cstdio>
#include <limits>

namespace bulleted::appview::http_detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using boost::system::error_code;
using tcp = asio::ip::tcp;

namespace {

constexpr std::size_t kWriteSlice = 256 * 1024;  // each write makes progress in time
constexpr std::size_t kReadPiece = 64 * 1024;
constexpr auto kLingerQuiet = std::chrono::seconds(5);

auto with(error_code& ec) { return asio::redirect_error(asio::use_awaitable, ec); }

// Buffers to write, built outside the coroutines (g++ 12 cannot keep an
// initializer list's array in a coroutine's frame).
std::vector<asio::const_buffer> pieces_of(std::string_view first, std::string_view second = {},
                                          std::string_view third = {}) {
  std::vector<asio::const_buffer> pieces;
  for (std::string_view piece : {first, second, third}) {
    if (!piece.empty()) pieces.push_back(asio::buffer(piece.data(), piece.size()));
  }
  return pieces;
}

// A head that is not HTTP (as opposed to a client that left or timed out).
bool malformed(const error_code& ec) {
  return ec.category() == http::make_error_code(http::error::bad_method).category() &&
         ec != http::error::end_of_stream && ec != http::error::partial_message;
}

std::string chunk_size_line(std::size_t size) {
  char line[24];
  const int n = std::snprintf(line, sizeof line, "%zx\r\n", size);
  return std::string(line, static_cast<std::size_t>(n));
}

}  // namespace

struct Connection::Read {
  HttpRequestHead head;
  Fields fields;
  Target target;
  std::size_t length = 0;
  bool body_pending = false;
  bool keep_alive = true;
  bool expects_continue = false;
  unsigned version = 11;
};

Connection::Connection(std::shared_ptr<Front> front, tcp::socket socket)
    : front_(std::move(front)), stream_(std::move(socket)), signal_(stream_.get_executor()) {
  error_code ec;
  const auto endpoint = stream_.socket().remote_endpoint(ec);
  if (!ec) {
    auto address = endpoint.address();
    if (address.is_v6() && address.to_v6().is_v4_mapped()) {
      address = asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6());
    }
    remote_ = address.to_string();
  }
}

Connection::~Connection() {
  {
    std::lock_guard lock(reply_mutex_);
    if (reply_) reply_->close();
  }
  front_->closed(this);
}

void Connection::shut() {
  {
    std::lock_guard lock(reply_mutex_);
    if (reply_) reply_->close();
  }
  asio::post(stream_.get_executor(), [self = shared_from_this()] {
    self->shut_ = true;
    self->signal_.cancel();
    error_code ec;
    self->stream_.socket().close(ec);
  });
}

asio::awaitable<void> Connection::run() {
  while (!shut_) {
    std::optional<Read> read = co_await read_head();
    if (!read) break;
    const bool goes_on = co_await serve(std::move(*read));
    if (!goes_on) break;
    // A long head or body left its buffer large; an idle connection keeps little.
    if (buffer_.size() == 0 && buffer_.capacity() > 16 * 1024) buffer_.shrink_to_fit();
  }
  error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
  stream_.socket().close(ec);
}

asio::awaitable<std::optional<Connection::Read>> Connection::read_head() {
  // buffer_body: its reader accepts a body (empty_body refuses one at the
  // head); the body itself is read by read_body, not by the parser.
  http::request_parser<http::buffer_body> parser;
  parser.header_limit(kHeadLimit);
  // The front decides, from the head. (Not boost::none: Boost 1.74 compares
  // a length with an empty limit as larger than it.)
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  stream_.expires_after(front_->read_timeout());
  error_code ec;
  co_await http::async_read_header(stream_, buffer_, parser, with(ec));
  if (ec) {
    // A client that left, or did not finish its head in time, hears nothing.
    if (ec == http::error::header_limit || malformed(ec)) {
      const bool too_long = ec == http::error::header_limit;
      HttpResponse refusal = front_->refusal(Error{
          ErrorCode::kInvalidRequest,
          too_long ? "the request's head is larger than " + std::to_string(kHeadLimit) + " bytes"
                   : "the request is not HTTP/1.1 (" + ec.message() + ")"});
      if (too_long) refusal.status = 431;
      HttpRequestHead bare;
      bare.remote = remote_;
      co_await answer_unread(bare, std::move(refusal), true, true);
    }
    co_return std::nullopt;
  }
  const auto& message = parser.get();
  Read read;
  read.head.method = std::string(message.method_string());
  read.head.remote = remote_;
  for (const auto& field : message) {
    std::string name(field.name_string());
    std::string value(field.value());
    std::string& joined = read.head.headers[lower_trimmed(name)];
    joined = joined.empty() ? value : joined + ", " + value;
    read.fields.emplace_back(std::move(name), std::move(value));
  }
  const auto target = message.target();
  read.target = parse_target(std::string_view(target.data(), target.size()));
  read.head.path = read.target.path;
  read.head.query = read.target.query;
  read.length = parser.content_length() ? static_cast<std::size_t>(*parser.content_length()) : 0;
  read.body_pending =
      read.length > 0 || parser.chunked() || read.head.headers.contains("transfer-encoding");
  read.keep_alive = message.keep_alive();
  read.version = message.version();
  read.expects_continue = lower_trimmed(read.head.header("expect")) == "100-continue";
  co_return read;
}

asio::awaitable<bool> Connection::serve(Read read) {
  Decision decision =
      front_->decide(read.head, read.fields, read.target, read.length, read.body_pending);
  if (decision.answer) {
    HttpResponse answer = std::move(*decision.answer);
    const bool close = decision.close || !read.keep_alive;
    const bool drain = decision.close && read.body_pending;
    const bool goes_on = co_await answer_unread(read.head, std::move(answer), close, drain);
    co_return goes_on;
  }
  HttpRequest request;
  static_cast<HttpRequestHead&>(request) = std::move(read.head);
  if (decision.body_length > 0) {
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    if (read.expects_continue && read.version >= 11) {
      std::vector<asio::const_buffer> pieces = pieces_of(kContinue);
      const bool sent = co_await write(std::move(pieces));
      if (!sent) {
        front_->abandoned();
        co_return false;
      }
    }
    const bool whole = co_await read_body(request.body, decision.body_length);
    if (!whole) {
      front_->abandoned();
      HttpResponse refusal =
          front_->refusal(Error{ErrorCode::kInvalidRequest, "the request body could not be read"});
      co_await answer_unread(request, std::move(refusal), true, false);
      co_return false;
    }
  }
  const HttpRequestHead head = request;
  auto reply =
      std::make_shared<Reply>([weak = weak_from_this(), executor = stream_.get_executor()] {
        asio::post(executor, [weak] {
          if (auto self = weak.lock()) self->woken();
        });
      });
  {
    std::lock_guard lock(reply_mutex_);
    reply_ = reply;
  }
  front_->hand_on(std::move(request), decision.lane, reply);
  front_->answering(true);
  const bool goes_on = co_await deliver(head, read.keep_alive, read.version);
  front_->answering(false);
  std::lock_guard lock(reply_mutex_);
  reply_->close();
  reply_.reset();
  co_return goes_on;
}

// Reads `length` bytes of body, as they arrive (what is already buffered
// first), into memory that grows with them, never past `length`.
asio::awaitable<bool> Connection::read_body(std::string& body, std::size_t length) {
  body.clear();
  auto grow_for = [&](std::size_t more) {
    if (body.size() + more > body.capacity()) {
      body.reserve(std::min(length, std::max(body.capacity() * 2, body.size() + more)));
    }
  };
  const std::size_t buffered = std::min(buffer_.size(), length);
  grow_for(buffered);
  body.append(static_cast<const char*>(buffer_.data().data()), buffered);
  buffer_.consume(buffered);
  while (body.size() < length) {
    const std::size_t want = std::min(kReadPiece, length - body.size());
    grow_for(want);
    const std::size_t at = body.size();
    body.resize(at + want);
    stream_.expires_after(front_->read_timeout());
    error_code ec;
    const std::size_t got =
        co_await stream_.async_read_some(asio::buffer(body.data() + at, want), with(ec));
    body.resize(at + got);
    if (ec) co_return false;
  }
  co_return true;
}

void Connection::woken() {
  signal_.cancel();
  // A write that waits on a client that does not read is stopped.
  std::lock_guard lock(reply_mutex_);
  if (reply_ && reply_->aborted()) {
    error_code ec;
    stream_.socket().cancel(ec);
  }
}

asio::awaitable<Reply::Taken> Connection::next() {
  while (true) {
    Reply::Taken taken;
    {
      std::lock_guard lock(reply_mutex_);
      if (reply_) taken = reply_->take();
    }
    if (shut_ || !reply_) taken.aborted = true;
    if (!taken.empty()) co_return taken;
    signal_.expires_at(asio::steady_timer::time_point::max());
    error_code ec;
    co_await signal_.async_wait(with(ec));
  }
}

asio::awaitable<bool> Connection::deliver(const HttpRequestHead& head, bool keep_alive,
                                          int version) {
  Reply::Taken taken = co_await next();
  if (!taken.answer) co_return false;
  HttpResponse out = std::move(*taken.answer);
  taken.answer.reset();
  front_->decorate(head, out);
  const bool head_only = head.method == "HEAD";
  const bool body_follows = out.stream || out.hold;
  // A held answer's client may read nothing for a while: its holder decides
  // when that is a stall (limits.streamStallSeconds) and ends the answer.
  held_ = static_cast<bool>(out.hold);
  out.stream = nullptr;
  out.hold = nullptr;
  const Framing framing = !body_follows   ? Framing::kLength
                          : version >= 11 ? Framing::kChunked
                                          : Framing::kUntilClose;
  const bool close = head_only || !keep_alive || framing == Framing::kUntilClose;
  const std::string bytes = answer_head(out, framing, close);
  if (head_only || !body_follows) {
    std::vector<asio::const_buffer> pieces =
        pieces_of(bytes, head_only ? std::string_view() : std::string_view(out.body));
    const bool sent = co_await write(std::move(pieces));
    co_return sent && !close;
  }
  std::vector<asio::const_buffer> pieces = pieces_of(bytes);
  const bool sent = co_await write(std::move(pieces));
  if (!sent) co_return false;
  const bool whole = co_await stream_body(std::move(taken), framing == Framing::kChunked);
  held_ = false;
  co_return whole && !close;
}

asio::awaitable<bool> Connection::stream_body(Reply::Taken taken, bool chunked) {
  static constexpr std::string_view kLineEnd = "\r\n";
  static constexpr std::string_view kLastChunk = "0\r\n\r\n";
  while (true) {
    if (!taken.bytes.empty()) {
      const std::string size_line = chunked ? chunk_size_line(taken.bytes.size()) : "";
      std::vector<asio::const_buffer> pieces =
          pieces_of(size_line, taken.bytes, chunked ? kLineEnd : "");
      const bool sent = co_await write(std::move(pieces));
      if (!sent) co_return false;
      reply_->sent();
    }
    if (taken.aborted) co_return false;
    if (taken.ended) {
      if (!chunked) co_return true;
      std::vector<asio::const_buffer> pieces = pieces_of(kLastChunk);
      const bool sent = co_await write(std::move(pieces));
      co_return sent;
    }
    taken = co_await next();
  }
}

asio::awaitable<bool> Connection::answer_unread(const HttpRequestHead& head, HttpResponse out,
                                                bool close, bool drain) {
  front_->decorate(head, out);
  const bool head_only = head.method == "HEAD";
  close = close || head_only;
  const std::string bytes = answer_head(out, Framing::kLength, close);
  std::vector<asio::const_buffer> pieces =
      pieces_of(bytes, head_only ? std::string_view() : std::string_view(out.body));
  const bool sent = co_await write(std::move(pieces));
  if (!sent) co_return false;
  if (!close) co_return true;
  if (drain) co_await linger();
  co_return false;
}

asio::awaitable<bool> Connection::write(std::vector<asio::const_buffer> pieces) {
  beast::buffers_suffix<std::vector<asio::const_buffer>> rest(std::move(pieces));
  while (asio::buffer_size(rest) > 0) {
    if (held_) {
      stream_.expires_never();
    } else {
      stream_.expires_after(front_->read_timeout());
    }
    error_code ec;
    const auto slice = beast::buffers_prefix(kWriteSlice, rest);
    const std::size_t n = co_await asio::async_write(stream_, slice, with(ec));
    if (ec) co_return false;
    rest.consume(n);
  }
  co_return true;
}

// Stops sending, then reads and drops what the client still sends (a body
// the front refused) until it stops, is quiet for kLingerQuiet, or
// kLingerTime has passed: it hears the answer instead of a reset.
asio::awaitable<void> Connection::linger() {
  error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  buffer_.consume(buffer_.size());
  buffer_.shrink_to_fit();
  auto scratch = std::make_unique<std::array<char, 16 * 1024>>();
  const auto until = std::chrono::steady_clock::now() + kLingerTime;
  while (!ec && !shut_ && std::chrono::steady_clock::now() < until) {
    stream_.expires_after(kLingerQuiet);
    co_await stream_.async_read_some(asio::buffer(*scratch), with(ec));
  }
}

}  // namespace bulleted::appview::http_detail
