#define _TURN_OFF_PLATFORM_STRING
#include "appview/http/server.hpp"

#include <cpprest/http_listener.h>
#include <pplx/threadpool.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace bulleted::appview {
namespace {

using web::http::http_request;
using web::http::http_response;
using web::http::status_code;

class BodyTooLarge : public std::exception {
 public:
  const char* what() const noexcept override { return "request body too large"; }
};

// Replies once and observes the reply task (an unobserved failure would kill
// the process).
void send(http_request request, const HttpResponse& out, bool close = false) {
  http_response response(static_cast<status_code>(out.status));
  for (const auto& [name, value] : out.headers) response.headers().add(name, value);
  if (close) response.headers().add("Connection", "close");
  response.set_body(out.body, out.content_type);
  try {
    request.reply(response).then([](pplx::task<void> sent) {
      try {
        sent.get();
      } catch (...) {
      }
    });
  } catch (...) {
  }
}

}  // namespace

struct HttpServer::State {
  HttpServerOptions options;
  HttpHandler handler;
  std::unique_ptr<web::http::experimental::listener::http_listener> listener;
  std::atomic<bool> draining{false};
  std::atomic<std::size_t> in_flight{0};
  std::mutex mutex;
  std::condition_variable work_ready;
  std::condition_variable idle;
  std::deque<std::function<void()>> work;
  bool stopping_workers = false;
  std::vector<std::thread> workers;

  HttpResponse refuse(int status, const std::string& error, const std::string& message) const {
    if (options.refusal) return options.refusal(status, error, message);
    return HttpResponse{status,
                        "application/json",
                        "{\"error\":\"" + error + "\",\"message\":\"" + message + "\"}",
                        {}};
  }

  void finished() {
    if (--in_flight == 0) {
      std::lock_guard lock(mutex);
      idle.notify_all();
    }
  }

  bool enqueue(std::function<void()> job) {
    std::lock_guard lock(mutex);
    if (work.size() >= options.max_queued) return false;
    work.push_back(std::move(job));
    work_ready.notify_one();
    return true;
  }

  void worker_loop() {
    while (true) {
      std::function<void()> job;
      {
        std::unique_lock lock(mutex);
        work_ready.wait(lock, [&] { return stopping_workers || !work.empty(); });
        if (work.empty()) return;
        job = std::move(work.front());
        work.pop_front();
      }
      job();
    }
  }

  std::size_t body_limit(const std::string& path) const {
    auto it = options.large_body_paths.find(path);
    return it == options.large_body_paths.end() ? options.max_body_bytes : it->second;
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

Result<void> HttpServer::start() {
  auto state = state_;
  for (int i = 0; i < std::max(1, state->options.workers); ++i) {
    state->workers.emplace_back([state] { state->worker_loop(); });
  }
  const std::string address =
      "http://" + state->options.bind + ":" + std::to_string(state->options.port);
  try {
    state->listener =
        std::make_unique<web::http::experimental::listener::http_listener>(web::uri(address));
    // One catch-all handler: every method and path, so unknown ones still get
    // an XRPC error body.
    state->listener->support([state](http_request request) {
      try {
        if (state->draining) {
          send(request, state->refuse(503, "Unavailable", "the server is shutting down"), true);
          return;
        }
        ++state->in_flight;
        const std::string path = web::uri::decode(request.relative_uri().path());
        const auto& headers = request.headers();
        const std::size_t limit = state->body_limit(path);
        if (headers.has("Transfer-Encoding") && !headers.has("Content-Length")) {
          // Chunked bodies have no length to check up front: refuse them.
          request.body().streambuf().close(std::ios_base::in,
                                           std::make_exception_ptr(BodyTooLarge()));
          send(request, state->refuse(411, "InvalidRequest", "send the body with a Content-Length"),
               true);
          state->finished();
          return;
        }
        if (request.headers().content_length() > limit) {
          // Close the stream with an error first, so the body is not read.
          request.body().streambuf().close(std::ios_base::in,
                                           std::make_exception_ptr(BodyTooLarge()));
          send(request,
               state->refuse(413, "PayloadTooLarge",
                             "the body is larger than " + std::to_string(limit) + " bytes"),
               true);
          state->finished();
          return;
        }
        request.extract_vector().then([state, request,
                                       path](pplx::task<std::vector<unsigned char>> body) {
          try {
            HttpRequest in;
            auto bytes = body.get();
            in.body.assign(bytes.begin(), bytes.end());
            in.method = request.method();
            in.path = path;
            in.query = request.relative_uri().query();
            in.remote = request.remote_address();
            for (const auto& [name, value] : request.headers()) {
              std::string lower = name;
              for (auto& c : lower)
                c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
              in.headers[lower] = value;
            }
            const bool queued = state->enqueue([state, request, in = std::move(in)]() mutable {
              HttpResponse out;
              try {
                out = state->handler(in);
              } catch (const std::exception& e) {
                spdlog::error("http: handler failed: {}", e.what());
                out = state->refuse(500, "InternalServerError", "the request failed");
              }
              send(request, out);
              state->finished();
            });
            if (!queued) {
              send(request, state->refuse(503, "Unavailable", "too many requests in progress"));
              state->finished();
            }
          } catch (...) {
            send(request,
                 state->refuse(400, "InvalidRequest", "the request body could not be read"), true);
            state->finished();
          }
        });
      } catch (...) {
        send(request, state->refuse(500, "InternalServerError", "the request failed"), true);
        state->finished();
      }
    });
    state->listener->open().wait();
  } catch (const std::exception& e) {
    return fail(ErrorCode::kUnavailable, "cannot listen on " + address + ": " + e.what());
  }
  return {};
}

void HttpServer::stop(std::chrono::milliseconds grace) {
  auto state = state_;
  if (!state->listener) return;
  state->draining = true;
  {
    std::unique_lock lock(state->mutex);
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
  {
    std::lock_guard lock(state->mutex);
    state->stopping_workers = true;
    state->work_ready.notify_all();
  }
  for (auto& worker : state->workers) {
    if (worker.joinable()) worker.join();
  }
  state->workers.clear();
}

}  // namespace bulleted::appview
