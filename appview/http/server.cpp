#define _TURN_OFF_PLATFORM_STRING
#include "appview/http/server.hpp"

#include <cpprest/containerstream.h>
#include <cpprest/http_listener.h>
#include <cpprest/producerconsumerstream.h>
#include <pplx/threadpool.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "appview/http/answers.hpp"
#include "appview/http/work_queue.hpp"

namespace bulleted::appview {

using namespace http_detail;

std::optional<Error> framing_problem(
    const std::vector<std::pair<std::string, std::string>>& headers) {
  std::optional<std::string> length;
  std::optional<std::string> coding;
  int lengths = 0;
  for (const auto& [raw_name, raw_value] : headers) {
    const std::string name = lower_trimmed(raw_name);
    if (name == "content-length") {
      ++lengths;
      length = lower_trimmed(raw_value);
    } else if (name == "transfer-encoding") {
      coding = coding ? *coding + "," + lower_trimmed(raw_value) : lower_trimmed(raw_value);
    }
  }
  if (coding && length) {
    return Error{ErrorCode::kInvalidRequest,
                 "a request may not carry both Transfer-Encoding and Content-Length"};
  }
  if (coding) {
    if (*coding != "chunked") {
      return Error{ErrorCode::kInvalidRequest, "unsupported Transfer-Encoding \"" + *coding + "\""};
    }
    return Error{ErrorCode::kLengthRequired, "send the body with a Content-Length"};
  }
  if (length) {
    // Repeated headers arrive joined by commas; only one plain number is a length.
    if (lengths > 1 || length->empty() || length->size() > 18 ||
        length->find_first_not_of("0123456789") != std::string::npos) {
      return Error{ErrorCode::kInvalidRequest, "malformed, repeated or conflicting Content-Length"};
    }
  }
  return std::nullopt;
}

struct HttpServer::State : std::enable_shared_from_this<HttpServer::State> {
  HttpServerOptions options;
  HttpHandler handler;
  std::unique_ptr<web::http::experimental::listener::http_listener> listener;
  std::atomic<bool> draining{false};
  std::atomic<std::size_t> in_flight{0};
  std::mutex idle_mutex;
  std::condition_variable idle;
  std::unique_ptr<WorkQueue> requests;
  std::unique_ptr<WorkQueue> operators;
  std::unique_ptr<WorkQueue> streams;
  std::unique_ptr<WorkQueue> searches;

  // An answer to `head` as it goes out: decorated (options.decorate).
  http_response finish(const HttpRequestHead& head, HttpResponse out, bool head_only,
                       bool close) const {
    if (options.decorate) options.decorate(head, out);
    return to_cpprest(std::move(out), head_only, close);
  }

  HttpResponse refuse(ErrorCode code, std::string message) const {
    return refuse(Error{code, std::move(message)});
  }
  HttpResponse refuse(const Error& error) const {
    if (options.refusal) return options.refusal(error);
    // Messages may quote the request (a transfer coding): escaped as JSON.
    const ErrorStatus& status = error_status(error.code);
    HttpResponse response;
    response.status = status.status;
    response.body = nlohmann::json{{"error", status.name}, {"message", error.message}}.dump(
        -1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (error.retry_after_seconds > 0) {
      response.headers.emplace_back("Retry-After", std::to_string(error.retry_after_seconds));
    }
    return response;
  }

  void finished() {
    if (--in_flight == 0) {
      std::lock_guard lock(idle_mutex);
      idle.notify_all();
    }
  }

  // Answers without reading the body; the connection is closed when a body
  // was announced, since its bytes would otherwise be read as the next request.
  void answer_unread(http_request request, const HttpRequestHead& head, HttpResponse out,
                     bool body_pending) {
    if (body_pending) refuse_body(request);
    send(request, finish(head, std::move(out), head.method == "HEAD", body_pending));
  }

  // Runs the handler on a worker and replies (streaming when asked).
  void serve(http_request request, HttpRequest in) {
    HttpResponse out;
    try {
      out = handler(in);
    } catch (const std::exception& e) {
      spdlog::error("http: handler failed: {}", e.what());
      out = refuse(ErrorCode::kInternal, "the request failed");
    }
    const bool head_only = in.method == "HEAD";
    if (out.hold && !head_only) {
      hold(request, in, std::move(out));
      finished();
      return;
    }
    if (!out.stream || head_only) {
      send(request, finish(in, std::move(out), head_only, false));
      finished();
      return;
    }
    auto failed = std::make_shared<std::atomic<bool>>(false);
    BufferStream stream(failed, out.stream_waits);
    auto produce = std::move(out.stream);
    out.stream = [](ResponseStream&) {};  // still a streamed answer: no body set
    http_response response = finish(in, out, false, false);
    response.set_body(concurrency::streams::istream(stream.buffer()), out.content_type);
    send(request, response, [failed](bool ok) {
      if (!ok) *failed = true;
    });
    try {
      produce(stream);
    } catch (const std::exception& e) {
      spdlog::error("http: a streamed answer failed: {}", e.what());
      *failed = true;
    }
    stream.finish();
    finished();
  }

  // Sends a held answer's head and hands the answer to its holder: the
  // worker does not wait for it.
  void hold(http_request request, const HttpRequestHead& head, HttpResponse out) {
    auto held = std::make_shared<HeldBuffer>();
    auto take = out.hold;  // left in `out`: it says the answer is chunked
    const std::string content_type = out.content_type;
    http_response response = finish(head, std::move(out), false, false);
    response.set_body(concurrency::streams::istream(held->buffer()), content_type);
    send(request, response, [held](bool) { held->settled(); });
    try {
      take(held);
    } catch (const std::exception& e) {
      spdlog::error("http: a held answer could not be taken up: {}", e.what());
      held->end(true);
    }
  }

  WorkQueue& queue_of(Lane lane) const {
    if (lane == Lane::kOperators) return *operators;
    if (lane == Lane::kStreams) return *streams;
    if (lane == Lane::kSearches) return *searches;
    return *requests;
  }

  std::chrono::steady_clock::time_point now() const {
    return options.clock ? options.clock() : std::chrono::steady_clock::now();
  }

  void dispatch(http_request request, HttpRequest in, Lane lane) {
    const HttpRequestHead head = in;
    auto job = [self = shared_from_this(), request, in = std::move(in), lane,
                queued = now()]() mutable {
      if (self->options.waited) {
        self->options.waited(lane, std::chrono::duration<double>(self->now() - queued).count());
      }
      self->serve(request, std::move(in));
    };
    if (!queue_of(lane).push(std::move(job))) {
      Error busy{ErrorCode::kUnavailable, "too many requests in progress"};
      if (lane == Lane::kSearches) {
        busy = Error{ErrorCode::kRateLimited,
                     "too many searches are running (limits.maxConcurrentSearches); retry soon"};
        busy.retry_after_seconds = 1;
      }
      if (options.overflowed) options.overflowed(lane);
      send(request, finish(head, refuse(busy), false, false));
      finished();
    }
  }

  void on_request(http_request request) {
    HttpRequest in;
    std::vector<std::pair<std::string, std::string>> raw;
    for (const auto& [name, value] : request.headers()) {
      raw.emplace_back(name, value);
      in.headers[lower_trimmed(name)] = value;
    }
    in.method = request.method();
    in.path = web::uri::decode(request.relative_uri().path());
    in.query = request.relative_uri().query();
    in.remote = request.remote_address();
    // A target of the form //host/path parses as an authority and an empty
    // path: it names no path of this server (and must not read as "/").
    const bool network_path =
        request.request_uri().scheme().empty() && !request.request_uri().host().empty();
    if (draining) {
      send(request,
           finish(in, refuse(ErrorCode::kUnavailable, "the server is shutting down"), false, true));
      return;
    }
    ++in_flight;
    const auto& headers = request.headers();
    const bool body_pending = headers.has("Transfer-Encoding") ||
                              (headers.has("Content-Length") && headers.content_length() > 0) ||
                              in.headers.contains("transfer-encoding");
    if (auto problem = framing_problem(raw)) {
      answer_unread(request, in, refuse(problem->code, problem->message), true);
      finished();
      return;
    }
    if (network_path) {
      answer_unread(request, in,
                    refuse(ErrorCode::kInvalidRequest, "the request target must be a path"),
                    body_pending);
      finished();
      return;
    }
    Admission admission;
    admission.body_limit = options.default_body_limit;
    if (options.admit) {
      try {
        admission = options.admit(in);
      } catch (const std::exception& e) {
        spdlog::error("http: admission failed: {}", e.what());
        admission.refusal = refuse(ErrorCode::kInternal, "the request failed");
      }
    }
    if (admission.refusal) {
      answer_unread(request, in, std::move(*admission.refusal), body_pending);
      finished();
      return;
    }
    const std::size_t length = headers.has("Content-Length") ? headers.content_length() : 0;
    if (length > admission.body_limit) {
      answer_unread(
          request, in,
          refuse(ErrorCode::kPayloadTooLarge,
                 "the body is larger than " + std::to_string(admission.body_limit) + " bytes"),
          true);
      finished();
      return;
    }
    if (length == 0 && admission.lane == Lane::kAtOnce) {
      // Answered here, on the listener's thread: no queue to wait in.
      serve(request, std::move(in));
      return;
    }
    if (length == 0) {
      dispatch(request, std::move(in), admission.lane);
      return;
    }
    read_body(request, std::move(in), length,
              admission.lane == Lane::kAtOnce ? Lane::kOperators : admission.lane);
  }

  // Reads an admitted body into the request, then dispatches it. Memory
  // follows what has arrived, never what was announced: a client that
  // announces 50 MiB and sends nothing holds a piece, not 50 MiB.
  void read_body(http_request request, HttpRequest in, std::size_t length, Lane lane) {
    struct Reading {
      HttpRequest in;
      std::size_t length;
      Lane lane;
      std::string body;
    };
    auto reading = std::make_shared<Reading>(Reading{std::move(in), length, lane, {}});
    read_piece(request, reading);
  }

  template <class Reading>
  void read_piece(http_request request, std::shared_ptr<Reading> reading) {
    constexpr std::size_t kPiece = 64 * 1024;
    auto piece = std::make_shared<concurrency::streams::container_buffer<std::string>>();
    request.body()
        .read(*piece, std::min(kPiece, reading->length - reading->body.size()))
        .then([self = shared_from_this(), request, reading,
               piece](pplx::task<std::size_t> read) mutable {
          try {
            const std::size_t got = read.get();
            std::string& body = reading->body;
            if (got > 0 && body.size() + got <= reading->length) {
              // Grown by doubling, never past the announced length.
              if (body.size() + got > body.capacity()) {
                body.reserve(
                    std::min(reading->length, std::max(body.capacity() * 2, body.size() + got)));
              }
              body.append(piece->collection(), 0, got);
            }
            if (got == 0 || body.size() >= reading->length) {
              if (body.size() != reading->length) throw BodyRefused();
              reading->in.body = std::move(body);
              self->dispatch(request, std::move(reading->in), reading->lane);
              return;
            }
            self->read_piece(request, reading);
          } catch (...) {
            send(request, self->finish(reading->in,
                                       self->refuse(ErrorCode::kInvalidRequest,
                                                    "the request body could not be read"),
                                       false, true));
            self->finished();
          }
        });
  }
};

void init_cpprest_threads(int threads) { crossplat::threadpool::initialize_with_threads(threads); }

HttpServer::HttpServer(HttpServerOptions options, HttpHandler handler)
    : state_(std::make_shared<State>()) {
  state_->options = std::move(options);
  state_->handler = std::move(handler);
}

HttpServer::~HttpServer() { stop(std::chrono::milliseconds(0)); }

std::size_t HttpServer::in_flight() const { return state_->in_flight.load(); }

std::size_t HttpServer::queued(Lane lane) const {
  return state_->requests ? state_->queue_of(lane).size() : 0;
}

Result<void> HttpServer::start() {
  auto state = state_;
  state->requests = std::make_unique<WorkQueue>(state->options.max_queued, state->options.workers);
  state->operators = std::make_unique<WorkQueue>(64, 1);
  state->streams = std::make_unique<WorkQueue>(state->options.max_streams_queued, 1);
  state->searches = std::make_unique<WorkQueue>(state->options.max_searches_queued,
                                                state->options.search_workers);
  state->requests->start();
  state->operators->start();
  state->streams->start();
  // Nice values are per thread on Linux; raising one needs no privilege.
  state->searches->start([nice = state->options.search_nice] {
    if (nice > 0 && ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()),
                                  ::getpriority(PRIO_PROCESS, 0) + nice) != 0) {
      spdlog::warn("http: the searches' lane keeps the process's priority");
    }
  });
  const std::string address =
      "http://" + state->options.bind + ":" + std::to_string(state->options.port);
  try {
    state->listener =
        std::make_unique<web::http::experimental::listener::http_listener>(web::uri(address));
    auto handle = [state](http_request request) {
      try {
        state->on_request(request);
      } catch (...) {
        send(request,
             to_cpprest(state->refuse(ErrorCode::kInternal, "the request failed"), false, true));
        state->finished();
      }
    };
    // One catch-all handler for every method and path, so unknown ones still
    // get an XRPC error body; TRACE named as well, since cpprest answers it
    // itself otherwise, echoing the request's headers (Authorization too).
    state->listener->support(handle);
    state->listener->support(web::http::methods::TRCE, handle);
    // ...and OPTIONS, which cpprest also answers itself (an empty Allow).
    state->listener->support(web::http::methods::OPTIONS, handle);
    state->listener->open().wait();
  } catch (const std::exception& e) {
    return fail(ErrorCode::kUnavailable, "cannot listen on " + address + ": " + e.what());
  }
  return {};
}

void HttpServer::stop(std::chrono::milliseconds grace) {
  auto state = state_;
  if (!state->listener) {
    if (state->requests) state->requests->stop();
    if (state->operators) state->operators->stop();
    if (state->streams) state->streams->stop();
    if (state->searches) state->searches->stop();
    return;
  }
  state->draining = true;
  {
    std::unique_lock lock(state->idle_mutex);
    state->idle.wait_for(lock, grace, [&] { return state->in_flight.load() == 0; });
  }
  if (state->in_flight.load() != 0) {
    spdlog::warn("http: {} requests still in flight after the grace period",
                 state->in_flight.load());
  }
  try {
    state->listener->close().wait();
  } catch (...) {
  }
  state->listener.reset();
  state->requests->stop();
  state->operators->stop();
  state->streams->stop();
  state->searches->stop();
  if (!pending_replies().wait(std::chrono::seconds(2))) {
    spdlog::warn("http: replies still unsettled two seconds after the listener closed");
  }
}

}  // namespace bulleted::appview
