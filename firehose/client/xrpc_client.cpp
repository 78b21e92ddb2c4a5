#define _TURN_OFF_PLATFORM_STRING
#include "firehose/client/xrpc_client.hpp"

#include <cpprest/containerstream.h>
#include <cpprest/http_client.h>
#include <pplx/threadpool.h>

#include <algorithm>
#include <limits>
#include <list>
#include <mutex>
#include <optional>
#include <thread>

namespace bulleted::firehose {

namespace {

class HttpXrpcClient final : public XrpcClient {
 public:
  HttpXrpcClient(std::chrono::seconds timeout, std::size_t max_body_bytes, std::size_t max_hosts)
      : timeout_(timeout),
        max_body_bytes_(max_body_bytes),
        max_hosts_(std::max<std::size_t>(1, max_hosts)) {}

  Result<XrpcReply> call(const XrpcRequest& request) override {
    const std::string where = request.method + " " + request.base_url + request.path;
    try {
      auto client = client_for(request.base_url);
      web::uri_builder target(request.path);
      for (const auto& [name, value] : request.query) target.append_query(name, value);
      web::http::http_request http(request.method == "POST" ? web::http::methods::POST
                                                            : web::http::methods::GET);
      http.set_request_uri(target.to_string());
      if (request.bearer) http.headers().add("Authorization", "Bearer " + *request.bearer);
      for (const auto& [name, value] : request.headers) {
        http.headers().remove(name);
        http.headers().add(name, value);
      }
      if (request.body) {
        http.set_body(request.body->dump(), "application/json");
      } else if (!request.form.empty()) {
        http.set_body(form_encode(request.form), "application/x-www-form-urlencoded");
      }
      // Cancelling closes the connection: how an answer over the cap stops
      // arriving (left alone, the client would go on reading it into memory).
      pplx::cancellation_token_source cancel;
      web::http::http_response response = client->request(http, cancel.get_token()).get();
      std::optional<std::string> body = read_capped(response);
      if (!body) {
        cancel.cancel();
        let_go(std::move(response));
        return fail(ErrorCode::kPayloadTooLarge, where + ": answer larger than the limit");
      }
      // The read ends as soon as the body's stream is closed for writing;
      // cpprest finishes that close in a task of its own pool. Wait for it,
      // so that no task of this answer is left behind (a command that exits
      // right after its last answer would leave it unrun).
      response.content_ready().wait();
      XrpcReply reply;
      reply.status = response.status_code();
      reply.body = std::move(*body);
      for (const auto& [name, value] : response.headers()) {
        std::string lower = name;
        std::transform(lower.begin(), lower.end(), lower.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        reply.headers[lower] = value;
      }
      return reply;
    } catch (const std::exception& e) {
      return fail(ErrorCode::kUpstreamFailure, where + ": " + e.what());
    }
  }

 private:
  static constexpr std::size_t kPieceBytes = 64 * 1024;

  // The answer's body, read piece by piece and no further than the cap;
  // nothing when it is larger. An answer without a Content-Length (chunked)
  // is cut off as soon as it passes the cap, so what the far side sends
  // never costs more than the cap.
  std::optional<std::string> read_capped(web::http::http_response& response) const {
    auto length = response.headers().content_length();
    if (length != std::numeric_limits<decltype(length)>::max() && length > max_body_bytes_) {
      return std::nullopt;
    }
    std::string body;
    auto in = response.body();
    while (true) {
      concurrency::streams::container_buffer<std::string> piece;
      const std::size_t got = in.read(piece, kPieceBytes).get();
      if (got == 0) return body;
      if (body.size() + got > max_body_bytes_) return std::nullopt;
      // The piece's string may have been grown past what arrived.
      if (body.empty()) {
        body = std::move(piece.collection());
        body.resize(got);
      } else {
        body.append(piece.collection(), 0, got);
      }
    }
  }

  // A cancelled answer ends in a chain of cpprest's own tasks (the
  // connection's error, the body buffer's close, the answer's completion),
  // each holding the answer or its body buffer, and none of them a task
  // one can wait on. Give the answer up and wait, a second at most, until
  // they have let go of both: then none is left unrun behind the call (a
  // command exiting right after it would leave them, leaked).
  static void let_go(web::http::http_response response) {
    std::weak_ptr<const void> answer = response._get_impl();
    std::weak_ptr<const void> buffer = response._get_impl()->instream().streambuf().get_base();
    response = web::http::http_response();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while ((!answer.expired() || !buffer.expired()) &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  // The client of `base_url`, made when first needed. At most max_hosts_
  // are kept: the host used longest ago is dropped first (a call still
  // running on it keeps its own reference), so hosts named by the network
  // cannot grow the pool without bound.
  std::shared_ptr<web::http::client::http_client> client_for(const std::string& base_url) {
    std::lock_guard lock(mutex_);
    auto found = clients_.find(base_url);
    if (found != clients_.end()) {
      recent_.splice(recent_.begin(), recent_, found->second.second);
      return found->second.first;
    }
    web::http::client::http_client_config config;
    config.set_timeout(timeout_);
    auto client = std::make_shared<web::http::client::http_client>(web::uri(base_url), config);
    while (clients_.size() >= max_hosts_ && !recent_.empty()) {
      clients_.erase(recent_.back());
      recent_.pop_back();
    }
    recent_.push_front(base_url);
    clients_.emplace(base_url, std::pair{client, recent_.begin()});
    return client;
  }

 public:
  std::size_t pooled_hosts() const override {
    std::lock_guard lock(mutex_);
    return clients_.size();
  }

 private:
  std::chrono::seconds timeout_;
  std::size_t max_body_bytes_;
  std::size_t max_hosts_;
  mutable std::mutex mutex_;
  std::list<std::string> recent_;  // base URLs, most recently used first
  std::map<std::string, std::pair<std::shared_ptr<web::http::client::http_client>,
                                  std::list<std::string>::iterator>>
      clients_;
};

}  // namespace

std::shared_ptr<XrpcClient> make_http_xrpc_client(std::chrono::seconds timeout,
                                                  std::size_t max_body_bytes,
                                                  std::size_t max_hosts) {
  return std::make_shared<HttpXrpcClient>(timeout, max_body_bytes, max_hosts);
}

void init_cpprest_threads(int threads) { crossplat::threadpool::initialize_with_threads(threads); }

}  // namespace bulleted::firehose
