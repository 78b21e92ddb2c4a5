#include "appview/http/cors.hpp"

#include <algorithm>

namespace bulleted::appview {
namespace {

constexpr const char* kMethods = "GET, HEAD, POST, OPTIONS";
// What a client is asked to send or may send: the XRPC ones and the
// AT Protocol's own (proxying, labelers, DPoP-bound tokens).
constexpr const char* kDefaultHeaders =
    "Authorization, Content-Type, Atproto-Proxy, Atproto-Accept-Labelers, DPoP";
// What a client needs to read from an answer.
constexpr const char* kExposed =
    "RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, Retry-After, "
    "Atproto-Repo-Rev, Atproto-Content-Labelers, WWW-Authenticate, DPoP-Nonce";
// The longest Access-Control-Request-Headers echoed back.
constexpr std::size_t kMaxRequestedHeaders = 1024;

bool xrpc_route(const HttpRequestHead& head) { return head.path.rfind("/xrpc/", 0) == 0; }

// A comma-separated list of header names (tokens), as sent; nullopt when it
// is anything else, or too long to echo.
std::optional<std::string> header_names(const std::string& requested) {
  if (requested.empty() || requested.size() > kMaxRequestedHeaders) return std::nullopt;
  const bool names_only = std::all_of(requested.begin(), requested.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_' || c == ',' || c == ' ' || c == '\t';
  });
  if (!names_only) return std::nullopt;
  return requested;
}

}  // namespace

CorsPolicy::CorsPolicy(std::vector<std::string> origins) {
  for (auto& origin : origins) {
    if (origin == "*") {
      any_ = true;
    } else {
      while (!origin.empty() && origin.back() == '/') origin.pop_back();
      origins_.push_back(std::move(origin));
    }
  }
}

std::optional<std::string> CorsPolicy::allowed_origin(const HttpRequestHead& head) const {
  if (any_) return std::string("*");
  const std::string origin = head.header("origin");
  if (origin.empty() || std::find(origins_.begin(), origins_.end(), origin) == origins_.end()) {
    return std::nullopt;
  }
  return origin;
}

void CorsPolicy::decorate(const HttpRequestHead& head, HttpResponse& response) const {
  if (!xrpc_route(head)) return;
  // With a list the answer depends on the Origin: caches must know.
  if (!any_) response.headers.emplace_back("Vary", "Origin");
  auto origin = allowed_origin(head);
  if (!origin) return;
  response.headers.emplace_back("Access-Control-Allow-Origin", *origin);
  response.headers.emplace_back("Access-Control-Expose-Headers", kExposed);
}

std::optional<HttpResponse> CorsPolicy::preflight(const HttpRequestHead& head) const {
  if (head.method != "OPTIONS" || !xrpc_route(head)) return std::nullopt;
  HttpResponse response;
  response.status = 204;
  response.content_type.clear();
  response.headers.emplace_back("Allow", kMethods);
  if (allowed_origin(head)) {
    response.headers.emplace_back("Access-Control-Allow-Methods", kMethods);
    response.headers.emplace_back(
        "Access-Control-Allow-Headers",
        header_names(head.header("access-control-request-headers")).value_or(kDefaultHeaders));
    response.headers.emplace_back("Access-Control-Max-Age", "86400");
  }
  return response;
}

}  // namespace bulleted::appview
