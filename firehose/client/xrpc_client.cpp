#define _TURN_OFF_PLATFORM_STRING
#include "firehose/client/xrpc_client.hpp"

#include <cpprest/containerstream.h>
#include <cpprest/http_client.h>

#include <algorithm>
#include <limits>
#include <mutex>

namespace bulleted::firehose {

namespace {

class HttpXrpcClient final : public XrpcClient {
 public:
  HttpXrpcClient(std::chrono::seconds timeout, std::size_t max_body_bytes)
      : timeout_(timeout), max_body_bytes_(max_body_bytes) {}

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
      web::http::http_response response = client->request(http).get();
      auto length = response.headers().content_length();
      if (length != std::numeric_limits<decltype(length)>::max() && length > max_body_bytes_) {
        return fail(ErrorCode::kPayloadTooLarge, where + ": answer larger than the limit");
      }
      // Read straight into the reply's string (the answer is held once).
      // An answer without a Content-Length is checked once it has arrived.
      concurrency::streams::container_buffer<std::string> sink;
      response.body().read_to_end(sink).get();
      // The read ends as soon as the body's stream is closed for writing;
      // cpprest finishes that close in a task of its own pool. Wait for it,
      // so that no task of this answer is left behind (a command that exits
      // right after its last answer would leave it unrun).
      response.content_ready().wait();
      if (sink.collection().size() > max_body_bytes_) {
        return fail(ErrorCode::kPayloadTooLarge, where + ": answer larger than the limit");
      }
      XrpcReply reply;
      reply.status = response.status_code();
      reply.body = std::move(sink.collection());
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
  std::shared_ptr<web::http::client::http_client> client_for(const std::string& base_url) {
    std::lock_guard lock(mutex_);
    auto& slot = clients_[base_url];
    if (!slot) {
      web::http::client::http_client_config config;
      config.set_timeout(timeout_);
      slot = std::make_shared<web::http::client::http_client>(web::uri(base_url), config);
    }
    return slot;
  }

  std::chrono::seconds timeout_;
  std::size_t max_body_bytes_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<web::http::client::http_client>> clients_;
};

}  // namespace

std::shared_ptr<XrpcClient> make_http_xrpc_client(std::chrono::seconds timeout,
                                                  std::size_t max_body_bytes) {
  return std::make_shared<HttpXrpcClient>(timeout, max_body_bytes);
}

}  // namespace bulleted::firehose
