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

// Each write makes progress within the read timeout (a client reading a
// steady 2.2 KB/s keeps its answer), and each slice written counts as
// progress for a streamed answer's producer.
constexpr std::size_t kWriteSlice = 64 * 1024;
constexpr std::size_t kReadPiece = 64 * 1024;
constexpr std::size_t kHeadPiece = 16 * 1024;  // what one read of a head asks for at most
// A held answer's socket keeps at most this much unsent in the kernel
// (which doubles it): a client that stops reading a change stream costs
// little beyond the stream's own buffer bound.
constexpr int kHeldSendBuffer = 64 * 1024;
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

// What a head holds past kFreeHead while it arrives, taken from the front's
// budget for large heads and given back at the end of the read.
class HeadCharge {
 public:
  explicit HeadCharge(Front& front) : front_(front) {}
  ~HeadCharge() {
    if (taken_ > 0) front_.give_head_bytes(taken_);
  }
  HeadCharge(const HeadCharge&) = delete;
  HeadCharge& operator=(const HeadCharge&) = delete;
  // The head's buffer now holds `capacity`: false when the budget has no
  // room for it.
  bool hold(std::size_t capacity) {
    const std::size_t need =
        capacity > Connection::kFreeHead ? capacity - Connection::kFreeHead : 0;
    if (need <= taken_) return true;
    if (!front_.take_head_bytes(need - taken_)) return false;
    taken_ = need;
    return true;
  }

 private:
  Front& front_;
  std::size_t taken_ = 0;
};

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
  int hosts = 0;  // Host lines
};

std::string peer_address(const tcp::socket& socket) {
  error_code ec;
  const auto endpoint = socket.remote_endpoint(ec);
  if (ec) return {};
  auto address = endpoint.address();
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    address = asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6());
  }
  return address.to_string();
}

void reset_socket(tcp::socket& socket) {
  error_code ec;
  socket.set_option(asio::socket_base::linger(true, 0), ec);
  socket.close(ec);
}

Connection::Connection(std::shared_ptr<Front> front, tcp::socket socket, std::string remote)
    : front_(std::move(front)),
      stream_(std::move(socket)),
      signal_(stream_.get_executor()),
      finish_(stream_.get_executor()),
      remote_(std::move(remote)) {}

void Connection::refuse() { reset_socket(stream_.socket()); }

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
    self->finish_.cancel();
    // What is still unsent is dropped with the connection, not left to
    // the kernel for minutes.
    reset_socket(self->stream_.socket());
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
  finish_.cancel();
  if (reset_) {
    // Closed because its client stopped reading: a reset, so what the
    // kernel still holds for it is dropped now rather than kept in
    // FIN-WAIT-1 for minutes.
    reset_socket(stream_.socket());
    co_return;
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
  // What the head holds past kFreeHead is taken from the front's budget for
  // large heads while it arrives (given back when this returns).
  HeadCharge charge(*front_);
  bool refused = false;
  while (!parser.is_header_done()) {
    // Empty lines before the request line are ignored (RFC 9112, 2.2).
    if (!parser.got_some()) {
      while (buffer_.size() > 0) {
        const char* at = static_cast<const char*>(buffer_.data().data());
        const std::size_t skip = at[0] == '\n'                                           ? 1
                                 : buffer_.size() >= 2 && at[0] == '\r' && at[1] == '\n' ? 2
                                                                                         : 0;
        if (skip == 0) break;
        buffer_.consume(skip);
      }
    }
    if (buffer_.size() > 0) {
      const std::size_t used = parser.put(buffer_.data(), ec);
      buffer_.consume(used);
      if (ec == http::error::need_more) {
        ec = {};
      } else if (ec || parser.is_header_done()) {
        break;
      } else if (used > 0) {
        continue;
      }
    }
    const std::size_t room = buffer_.capacity() - buffer_.size();
    const std::size_t want = std::clamp<std::size_t>(room, 1024, kHeadPiece);
    const std::size_t got = co_await stream_.async_read_some(buffer_.prepare(want), with(ec));
    buffer_.commit(got);
    if (ec) break;
    if (!charge.hold(buffer_.capacity())) {
      refused = true;
      front_->refused_large_head();
      break;
    }
  }
  if (refused) {
    HttpResponse refusal = front_->refusal(
        Error{ErrorCode::kUnavailable, "the server holds too many large request heads; retry"});
    refusal.headers.emplace_back("Retry-After", "1");
    HttpRequestHead bare;
    bare.remote = remote_;
    co_await answer_unread(bare, std::move(refusal), true, false);
    co_return std::nullopt;
  }
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
    std::string lower = lower_trimmed(name);
    if (lower == "host") ++read.hosts;
    join_field(read.head.headers[std::move(lower)], value);
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
  // RFC 9112, 3.2: an HTTP/1.1 request names exactly one Host (HTTP/1.0
  // may name none); anything else is 400, and the connection closed.
  if (read.hosts > 1 || (read.hosts == 0 && read.version >= 11)) {
    HttpResponse refusal = front_->refusal(Error{
        ErrorCode::kInvalidRequest, read.hosts > 1 ? "the request names more than one Host"
                                                   : "an HTTP/1.1 request must name its Host"});
    co_return co_await answer_unread(read.head, std::move(refusal), true, read.body_pending);
  }
  Decision decision =
      front_->decide(read.head, read.fields, read.target, read.length, read.body_pending, reserve_);
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
  auto reply = std::make_shared<Reply>(
      [weak = weak_from_this(), executor = stream_.get_executor()] {
        asio::post(executor, [weak] {
          if (auto self = weak.lock()) self->woken();
        });
      },
      front_->read_timeout());
  {
    std::lock_guard lock(reply_mutex_);
    reply_ = reply;
  }
  front_->hand_on(std::move(request), decision.lane, decision.client, reply);
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
  std::lock_guard lock(reply_mutex_);
  if (!reply_) return;
  if (reply_->aborted()) {
    // A write that waits on a client that does not read is stopped.
    reset_ = true;
    error_code ec;
    stream_.socket().cancel(ec);
  } else if (held_ && reply_->ended()) {
    // Its holder let go: what it still has to send must make progress
    // within the read timeout like any answer's, the write under way too.
    held_ = false;
    if (writing_) arm_finish();
  }
}

void Connection::watch_departure() {
  stream_.socket().async_wait(
      tcp::socket::wait_read, [weak = weak_from_this()](const error_code& ec) {
        auto self = weak.lock();
        if (ec || !self) return;
        // Readable: more from the client (a pipelined request, read later), or
        // its end. A peek tells which.
        char byte = 0;
        error_code peeked;
        const std::size_t n = self->stream_.socket().receive(asio::buffer(&byte, 1),
                                                             tcp::socket::message_peek, peeked);
        if (n > 0 && !peeked) return;
        if (peeked == asio::error::would_block || peeked == asio::error::try_again) {
          self->watch_departure();
          return;
        }
        // The client is gone: its holder hears of it now (the answer is over),
        // not at its next write.
        std::lock_guard lock(self->reply_mutex_);
        if (self->reply_) self->reply_->close();
        self->signal_.cancel();
      });
}

void Connection::arm_finish() {
  const std::uint64_t armed = ++finish_armed_;
  finish_.expires_after(front_->read_timeout());
  finish_.async_wait([weak = weak_from_this(), armed](const error_code& ec) {
    auto self = weak.lock();
    // Not a later write's: each arming has its number.
    if (ec || !self || !self->writing_ || self->finish_armed_ != armed) return;
    self->reset_ = true;
    error_code ignored;
    self->stream_.socket().cancel(ignored);
  });
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
  if (held_) {
    error_code ec;
    stream_.socket().set_option(asio::socket_base::send_buffer_size(kHeldSendBuffer), ec);
  }
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
  if (held_) watch_departure();
  const bool whole = co_await stream_body(std::move(taken), framing == Framing::kChunked);
  held_ = false;
  co_return whole && !close;
}

asio::awaitable<bool> Connection::stream_body(Reply::Taken taken, bool chunked) {
  static constexpr std::string_view kLineEnd = "\r\n";
  static constexpr std::string_view kLastChunk = "0\r\n\r\n";
  while (true) {
    // An answer over (a held one its holder ended) writes its last bytes
    // within the read timeout, like any answer.
    if (taken.ended) held_ = false;
    if (!taken.bytes.empty()) {
      const std::string size_line = chunked ? chunk_size_line(taken.bytes.size()) : "";
      std::vector<asio::const_buffer> pieces =
          pieces_of(size_line, taken.bytes, chunked ? kLineEnd : "");
      const bool sent = co_await write(std::move(pieces), reply_.get());
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

asio::awaitable<bool> Connection::write(std::vector<asio::const_buffer> pieces, Reply* progress) {
  beast::buffers_suffix<std::vector<asio::const_buffer>> rest(std::move(pieces));
  // The deadline is the connection's own timer, not the stream's: the
  // stream closes its socket when its timer expires (gracefully, leaving
  // the unsent bytes to the kernel), where this one resets it.
  stream_.expires_never();
  while (asio::buffer_size(rest) > 0) {
    if (!held_) arm_finish();
    error_code ec;
    const auto slice = beast::buffers_prefix(kWriteSlice, rest);
    writing_ = true;
    const std::size_t n = co_await asio::async_write(stream_, slice, with(ec));
    writing_ = false;
    ++finish_armed_;
    finish_.cancel();
    // No progress in time (the timer reset it), or stopped because its
    // client stopped reading: the connection is reset, not closed
    // gracefully.
    if (ec) co_return false;
    rest.consume(n);
    if (progress != nullptr) progress->sent_some(n);
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
