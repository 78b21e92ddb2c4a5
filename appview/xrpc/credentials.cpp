// Who a request speaks for: the app view's own credentials (a bearer
// token, or pds mode's session cookie, only from this origin for a
// procedure), service-auth JWTs, and the cookies the app view sets.
#include "appview/signin/jwt.hpp"
#include "appview/xrpc/api.hpp"
#include "appview/xrpc/api_methods.hpp"
#include "appview/xrpc/method_handlers.hpp"
#include "firehose/client/network_policy.hpp"

namespace bulleted::appview {

namespace {

// A cookie of the app view's: HttpOnly, Path=/, no Domain; Secure with the
// __Host- prefix (so no sibling host can set or shadow it) unless the app
// view is served over http on a loopback host (a developer's machine).
std::string app_cookie(const Config& config, std::string_view name, const std::string& value,
                       std::string_view same_site, std::int64_t max_age) {
  return cookie_name(config, name) + "=" + value +
         "; Path=/; HttpOnly; SameSite=" + std::string(same_site) +
         "; Max-Age=" + std::to_string(max_age) + (secure_cookies(config) ? "; Secure" : "");
}

}  // namespace

bool secure_cookies(const Config& config) {
  if (!config.public_url || !config.public_url->starts_with("http://")) return true;
  auto host = firehose::split_url(*config.public_url);
  if (!host) return true;
  std::string name = host->first.substr(7);
  if (name.starts_with("["))
    name = name.substr(0, name.find(']') + 1);
  else
    name = name.substr(0, name.find(':'));
  return name != "localhost" && name != "127.0.0.1" && name != "[::1]";
}

std::string cookie_name(const Config& config, std::string_view name) {
  return (secure_cookies(config) ? "__Host-" : "") + std::string(name);
}

std::string session_cookie(const Config& config, const std::string& token, bool clear) {
  return app_cookie(config, kSessionCookie, clear ? "" : token, "Lax", clear ? 0 : 180 * 24 * 3600);
}

// The binding of a sign-in to the browser that began it: SameSite=Lax, so
// that the authorization server's redirect back (a top-level GET from
// another site) carries it.
std::string sign_in_cookie(const Config& config, const std::string& binding, bool clear) {
  return app_cookie(config, kSignInCookie, clear ? "" : binding, "Lax", clear ? 0 : kSignInSeconds);
}

std::optional<std::string> bearer_token(const HttpRequestHead& request) {
  const std::string header = request.header("authorization");
  if (header.rfind("Bearer ", 0) != 0 || header.size() <= 7) return std::nullopt;
  return header.substr(7);
}

std::optional<std::string> cookie_value(const HttpRequestHead& request, std::string_view name) {
  const std::string cookies = request.header("cookie");
  std::optional<std::string> found;
  std::size_t at = 0;
  while (at < cookies.size()) {
    std::size_t end = cookies.find(';', at);
    if (end == std::string::npos) end = cookies.size();
    std::string_view pair = std::string_view(cookies).substr(at, end - at);
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    if (pair.starts_with(name) && pair.size() > name.size() + 1 && pair[name.size()] == '=') {
      if (found) return std::nullopt;
      found = std::string(pair.substr(name.size() + 1));
    }
    at = end + 1;
  }
  return found;
}

std::optional<Credential> credential_of(const HttpRequestHead& request, const Config& config) {
  if (auto token = bearer_token(request)) return Credential{std::move(*token), false};
  if (config.mode != Mode::kPds) return std::nullopt;
  if (auto token = cookie_value(request, cookie_name(config, kSessionCookie))) {
    return Credential{std::move(*token), true};
  }
  return std::nullopt;
}

std::optional<Error> Api::cross_origin(const HttpRequestHead& request) const {
  const std::string origin = request.header("origin");
  if (context_.config.public_url && origin == *context_.config.public_url) return std::nullopt;
  return Error{ErrorCode::kForbidden,
               "a procedure called with the session cookie must come from this app view's own "
               "pages (Origin " +
                   (origin.empty() ? std::string("missing") : origin) + ")"};
}

Result<std::optional<std::string>> Api::bearer_did(std::string_view token) {
  const std::string digest = token_digest(token);
  if (context_.config.mode == Mode::kLocal) return store().tokens().did_of(digest);
  auto session = store().sessions().find(digest);
  if (!session) return std::unexpected(session.error());
  if (!*session) return std::optional<std::string>();
  return std::optional<std::string>((*session)->did);
}

Error invalid_token(std::string message) {
  Error error{ErrorCode::kAuthRequired, std::move(message)};
  error.invalid_token = true;
  return error;
}

namespace {

Error service_auth_off() {
  return invalid_token(
      "service auth is off: this app view has no DID (set service.publicUrl or service.did)");
}

}  // namespace

Result<ServiceCaller> Api::precheck_jwt(std::string_view token, std::string_view nsid) {
  if (context_.services.service_auth == nullptr) return std::unexpected(service_auth_off());
  return context_.services.service_auth->check(token, nsid, KeyAccess::kCachedOnly);
}

Result<std::optional<Caller>> Api::caller(const HttpRequestHead& request, std::string_view nsid) {
  auto credential = credential_of(request, context_.config);
  if (!credential) return std::optional<Caller>();
  if (!credential->cookie && looks_like_jwt(credential->token)) {
    if (context_.services.service_auth == nullptr) return std::unexpected(service_auth_off());
    auto checked =
        context_.services.service_auth->check(credential->token, nsid, KeyAccess::kFetch);
    if (!checked) return std::unexpected(checked.error());
    return std::optional<Caller>(Caller{checked->did, Caller::Via::kServiceAuth});
  }
  if (credential->cookie) {
    const ApiMethod* method = find_method(nsid);
    if (method != nullptr && method->kind == MethodKind::kProcedure) {
      if (auto refused = cross_origin(request)) return std::unexpected(*refused);
    }
  }
  auto did = bearer_did(credential->token);
  if (!did) return std::unexpected(did.error());
  if (!*did) {
    return std::unexpected(invalid_token(credential->cookie ? "the session has ended; sign in again"
                                                            : "the token is not valid"));
  }
  return std::optional<Caller>(
      Caller{**did, credential->cookie ? Caller::Via::kCookie : Caller::Via::kToken});
}

}  // namespace bulleted::appview
