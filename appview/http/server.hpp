// The HTTP front: cpprestsdk's http_listener behind a small interface of
// plain request/response values. The handler runs on the server's own worker
// threads (never on cpprest's), so it may block on SQLite.
//
// Guarantees: one catch-all route (every path and method reaches the
// handler); bodies over `max_body_bytes` are refused with 413 before they
// are buffered; a full work queue is 503; every request gets exactly one
// reply; stop() answers new requests 503 and waits for in-flight ones.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "schema/error.hpp"

namespace bulleted::appview {

struct HttpRequest {
  std::string method;
  std::string path;                            // decoded path, no query
  std::string query;                           // raw query string, without '?'
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string remote;  // client address
  std::string header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

struct HttpServerOptions {
  std::string bind = "127.0.0.1";
  int port = 2584;
  int workers = 4;
  std::size_t max_body_bytes = 1024 * 1024;
  std::size_t max_queued = 1024;
  // Bodies up to this size are accepted for these paths (imports).
  std::map<std::string, std::size_t> large_body_paths;
  // Produces the body of a refusal (413, 503, ...) in the API's error format.
  std::function<HttpResponse(int status, const std::string& error, const std::string& message)>
      refusal;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

// Sets cpprest's thread pool size; must run before any other cpprest use
// (the HTTP listener and the firehose client share the pool).
void init_cpprest_threads(int threads);

class HttpServer {
 public:
  HttpServer(HttpServerOptions options, HttpHandler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  Result<void> start();
  // Stops accepting work (new requests get 503 and Connection: close), waits
  // up to `grace` for in-flight requests, then closes the listener.
  void stop(std::chrono::milliseconds grace);
  std::size_t in_flight() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace bulleted::appview
