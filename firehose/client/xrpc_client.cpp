#define _TURN_OFF_PLATFORM_STRING
#include "firehose/client/xrpc_client.hpp"

#include <pplx/threadpool.h>

#include <algorithm>
#include <cctype>

#include "firehose/client/http_exchange.hpp"

namespace bulleted::firehose {

namespace {

class HttpXrpcClient final : public XrpcClient {
 public:
  HttpXrpcClient(std::chrono::seconds timeout, std::size_t max_body_bytes, std::size_t max_hosts)
      : connections_({.timeout = timeout,
                      .max_body_bytes = max_body_bytes,
                      .max_hosts = std::max<std::size_t>(1, max_hosts)}) {}

  Result<XrpcReply> call(const XrpcRequest& request) override {
    const std::string where = request.method + " " + request.base_url + request.path;
    HttpExchange exchange{.method = request.method == "POST" ? "POST" : "GET",
                          .target = request.path,
                          .public_only = request.public_only};
    if (!request.query.empty()) {
      exchange.target += exchange.target.find('?') == std::string::npos ? '?' : '&';
      exchange.target += form_encode(request.query);
    }
    if (request.bearer) exchange.headers.emplace_back("Authorization", "Bearer " + *request.bearer);
    for (const auto& [name, value] : request.headers) {
      std::erase_if(exchange.headers,
                    [&](const auto& header) { return same_name(header.first, name); });
      exchange.headers.emplace_back(name, value);
    }
    if (request.body) {
      exchange.body = request.body->dump();
      exchange.headers.emplace_back("Content-Type", "application/json");
    } else if (!request.form.empty()) {
      exchange.body = form_encode(request.form);
      exchange.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
    }
    auto answer = connections_.exchange(request.base_url, exchange);
    if (!answer) return fail(answer.error().code, where + ": " + answer.error().message);
    XrpcReply reply;
    reply.status = answer->status;
    reply.body = std::move(answer->body);
    reply.headers = std::move(answer->headers);
    return reply;
  }

  std::size_t pooled_hosts() const override { return connections_.pooled_hosts(); }

 private:
  static bool same_name(const std::string& a, const std::string& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](unsigned char x, unsigned char y) {
      return std::tolower(x) == std::tolower(y);
    });
  }

  HttpConnections connections_;
};

}  // namespace

std::shared_ptr<XrpcClient> make_http_xrpc_client(std::chrono::seconds timeout,
                                                  std::size_t max_body_bytes,
                                                  std::size_t max_hosts) {
  return std::make_shared<HttpXrpcClient>(timeout, max_body_bytes, max_hosts);
}

void init_cpprest_threads(int threads) { crossplat::threadpool::initialize_with_threads(threads); }

}  // namespace bulleted::firehose
