// The /oauth/ routes of the API (pds mode with service.publicUrl): the
// client's metadata and keys, and the two steps of a browser's sign-in,
// answered with redirects or a small page saying what failed.
#include <spdlog/spdlog.h>

#include <variant>

#include "appview/xrpc/api.hpp"
#include "appview/xrpc/xrpc.hpp"
#include "firehose/client/network_policy.hpp"

namespace bulleted::appview {

namespace {

std::string html_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

// What a person sees when signing in fails: the reason, and the way back.
HttpResponse sign_in_page(const Error& error) {
  const ErrorStatus& status = error_status(error.code);
  const std::string message = status.status == 500 ? "the request failed" : error.message;
  HttpResponse response{
      status.status,
      "text/html; charset=utf-8",
      "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Sign-in failed "
      "- Bulleted</title></head><body><h1>Sign-in failed</h1><p id=\"reason\">" +
          html_escape(message) + "</p><p><a href=\"/\">Back to Bulleted</a></p></body></html>",
      {},
      {}};
  response.headers = {{"Content-Security-Policy", "default-src 'none'"},
                      {"Cache-Control", "no-store"},
                      {"Referrer-Policy", "no-referrer"}};
  if (error.code == ErrorCode::kRateLimited && error.retry_after_seconds > 0) {
    response.headers.emplace_back("Retry-After", std::to_string(error.retry_after_seconds));
  }
  return response;
}

HttpResponse redirect(const std::string& location) {
  HttpResponse response{302, "text/plain", "", {}, {}};
  response.headers = {
      {"Location", location}, {"Cache-Control", "no-store"}, {"Referrer-Policy", "no-referrer"}};
  return response;
}

// Secure unless the app view is served over http on a loopback host (a
// developer's machine).
bool secure_cookie(const std::string& public_url) {
  if (!public_url.starts_with("http://")) return true;
  auto host = firehose::split_url(public_url);
  if (!host) return true;
  std::string name = host->first.substr(7);
  if (name.starts_with("["))
    name = name.substr(0, name.find(']') + 1);
  else
    name = name.substr(0, name.find(':'));
  return name != "localhost" && name != "127.0.0.1" && name != "[::1]";
}

}  // namespace

std::string session_cookie(const Config& config, const std::string& token, bool clear) {
  std::string cookie = std::string(kSessionCookie) + "=" + (clear ? "" : token) +
                       "; Path=/; HttpOnly; SameSite=Lax; Max-Age=" +
                       (clear ? "0" : std::to_string(180 * 24 * 3600));
  if (!config.public_url || secure_cookie(*config.public_url)) cookie += "; Secure";
  return cookie;
}

HttpResponse Api::oauth_route(const HttpRequest& request) {
  if (context_.oauth == nullptr || context_.pds == nullptr) {
    return error_response(Error{ErrorCode::kNotFound,
                                "OAuth sign-in is off: it needs pds mode and service.publicUrl"});
  }
  if (request.method != "GET" && request.method != "HEAD") {
    HttpResponse response =
        error_response(Error{ErrorCode::kMethodNotAllowed, "the /oauth/ routes take GET"});
    response.headers.emplace_back("Allow", "GET");
    return response;
  }
  if (request.path == "/oauth/client-metadata.json" || request.path == "/oauth/jwks.json") {
    HttpResponse response =
        json_response(request.path == "/oauth/jwks.json" ? context_.oauth->jwks()
                                                         : context_.oauth->client_metadata());
    response.headers.emplace_back("Cache-Control", "max-age=600");
    return response;
  }
  auto params = XrpcParams::parse(request.query);
  if (!params) return sign_in_page(params.error());
  if (request.path != "/oauth/login" && request.path != "/oauth/callback") {
    return error_response(Error{ErrorCode::kNotFound, "no such path under /oauth/"});
  }
  // Each sign-in step waits on other hosts: a few at once, one per client.
  auto entered = context_.handle_lookups.enter("addr " + context_.proxies.client_address(request));
  if (std::holds_alternative<LongRequestGate::Refusal>(entered)) {
    Error busy{ErrorCode::kRateLimited, "too many sign-ins are under way; retry soon"};
    busy.retry_after_seconds = 1;
    return sign_in_page(busy);
  }
  if (request.path == "/oauth/login") {
    const auto handle = params->text("handle");
    const std::string return_to = params->text("returnTo").value_or("/");
    if (!handle || handle->empty() || handle->size() > 253) {
      return sign_in_page(Error{ErrorCode::kInvalidRequest, "handle (or DID) is required"});
    }
    if (!same_origin_path(return_to)) {
      return sign_in_page(
          Error{ErrorCode::kInvalidRequest, "returnTo must be a path of this site"});
    }
    std::string account = *handle;
    for (auto& c : account) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (auto wait = context_.sign_in_account_limits.take("account " + account)) {
      return sign_in_page(rate_limited(*wait, "limits.signInPerAccountPerMinute"));
    }
    auto target = context_.oauth->begin(store(), *handle, return_to);
    if (!target) {
      spdlog::info("oauth: a sign-in of {} could not start: {}", *handle, target.error().message);
      return sign_in_page(target.error());
    }
    return redirect(*target);
  }
  {
    const std::string state = params->text("state").value_or("");
    if (state.empty()) {
      return sign_in_page(Error{ErrorCode::kInvalidRequest, "the callback has no state"});
    }
    if (params->text("error")) {
      // Refused at the authorization server: back where the user was.
      auto back = context_.oauth->abandon(store(), state);
      if (!back) {
        return sign_in_page(
            Error{ErrorCode::kAuthRequired,
                  "the sign-in was not completed: " + params->text("error").value_or("")});
      }
      return redirect(back->empty() ? "/" : *back);
    }
    const auto code = params->text("code");
    const auto iss = params->text("iss");
    if (!code || !iss) {
      return sign_in_page(Error{ErrorCode::kInvalidRequest, "the callback lacks code or iss"});
    }
    auto signed_in = context_.oauth->complete(store(), *code, state, *iss);
    if (!signed_in) {
      spdlog::info("oauth: a sign-in did not complete: {}", signed_in.error().message);
      return sign_in_page(signed_in.error());
    }
    auto created = context_.pds->sessions.create(store(), *signed_in);
    if (!created) return sign_in_page(created.error());
    HttpResponse response = redirect(signed_in->return_to.empty() ? "/" : signed_in->return_to);
    response.headers.emplace_back("Set-Cookie",
                                  session_cookie(context_.config, created->token, false));
    return response;
  }
}

}  // namespace bulleted::appview
