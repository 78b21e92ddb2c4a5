// Api::admit: what the front may do with a request before its body is read,
// from the route table (routes.hpp) and a method's row (api_methods.hpp).
#include "appview/signin/jwt.hpp"
#include "appview/signin/tokens.hpp"
#include "appview/xrpc/api.hpp"
#include "appview/xrpc/api_methods.hpp"
#include "appview/xrpc/method_handlers.hpp"
#include "appview/xrpc/routes.hpp"
#include "appview/xrpc/xrpc.hpp"

namespace bulleted::appview {
namespace {

// Each rate bucket: its limiter, what admission takes from it, its setting.
struct BucketRow {
  RateLimiter AppContext::*limiter;
  double cost;
  std::string_view setting;
};
constexpr BucketRow kBuckets[] = {
    {&AppContext::query_limits, kQueryBaseCost, "limits.queryBytesPerMinute"},  // kQueryBytes
    {&AppContext::sign_in_limits, 1.0, "limits.signInPerMinute"},               // kSignIns
    {&AppContext::procedure_limits, 1.0, "limits.procedureRatePerMinute"},      // kProcedures
};
static_assert(std::size(kBuckets) == static_cast<std::size_t>(RateBucket::kProcedures) + 1);

std::size_t body_limit(const Config& config, BodyLimit limit) {
  switch (limit) {
    case BodyLimit::kSmall:
      return kQueryBodyBytes;
    case BodyLimit::kMaxBody:
      return config.max_body_bytes;
    case BodyLimit::kMaxImport:
      return config.max_import_bytes;
  }
  return kQueryBodyBytes;
}

}  // namespace

struct Api::Identified {
  ClientKey client;
  std::optional<Error> invalid;  // why its credentials fail, if they do
};

Admission Api::admit(const HttpRequestHead& head) {
  Admission admission;
  admission.body_limit = kQueryBodyBytes;
  if (auto preflight = cors_.preflight(head)) {
    admission.refusal = refused("preflight", std::move(*preflight));
    return admission;
  }
  if (head.method == "TRACE") {
    HttpResponse response =
        error_response(Error{ErrorCode::kMethodNotAllowed, "TRACE is not supported"});
    response.headers.emplace_back("Allow", "GET, HEAD, POST");
    admission.refusal = refused("other", std::move(response));
    return admission;
  }
  const RouteRow& route = route_of(head.path);
  if (route.operators) {
    // Health and readiness are reads of kept state when the probe keeps it:
    // answered on the connection's own thread, behind nothing.
    admission.lane = route.from_kept_state && context_.services.database != nullptr
                         ? Lane::kAtOnce
                         : Lane::kOperators;
    return admission;
  }
  if (route.route == Route::kOAuthSignIn) {
    // Sign-ins reach other hosts: limited per address like createSession.
    const ClientKey address = ClientKey::address(context_.proxies.client_key(head));
    if (auto wait = context_.sign_in_limits.take(address)) {
      admission.refusal =
          refused("_oauth", error_response(rate_limited(*wait, "limits.signInPerMinute")));
    }
    return admission;
  }
  if (route.route != Route::kXrpc) return admission;  // handle() answers
  const std::string nsid = head.path.substr(6);
  const ApiMethod* method = find_method(nsid);
  if (method == nullptr) {
    admission.refusal = refused(
        "unknown", error_response(Error{ErrorCode::kMethodNotImplemented, "no method " + nsid}));
    return admission;
  }
  return admit_method(head, *method);
}

Admission Api::admit_method(const HttpRequestHead& head, const ApiMethod& method) {
  Admission admission;
  admission.body_limit = kQueryBodyBytes;
  auto refuse = [&](HttpResponse response) {
    admission.refusal = refused(method.nsid, std::move(response));
    return admission;
  };
  if (auto wrong = wrong_http_method(method, head.method)) return refuse(std::move(*wrong));
  if (auto missing = unavailable(context_, method)) return refuse(std::move(*missing));
  const ClientKey address = ClientKey::address(context_.proxies.client_key(head));
  const BucketRow& bucket = kBuckets[static_cast<std::size_t>(method.bucket)];
  RateLimiter& limiter = context_.*bucket.limiter;
  if (method.auth == Auth::kCaller) {
    // Valid credentials before the body. A client is its identity once
    // proven, else its address: a random token (or a forged JWT) per
    // request changes nothing.
    auto who = identify(head, method, address);
    if (!who) return refuse(error_response(who.error()));
    if (auto wait = limiter.take(who->client, bucket.cost)) {
      return refuse(error_response(rate_limited(*wait, bucket.setting)));
    }
    if (who->invalid) return refuse(error_response(*who->invalid));
  } else {
    if (auto wait = limiter.take(address, bucket.cost)) {
      return refuse(error_response(rate_limited(*wait, bucket.setting)));
    }
    // A service-auth JWT sent with a public method must still be valid.
    auto credential = credential_of(head, context_.config);
    if (method.auth != Auth::kSignIn && credential && !credential->cookie &&
        looks_like_jwt(credential->token)) {
      if (auto checked = precheck_jwt(credential->token, method.nsid); !checked) {
        return refuse(error_response(checked.error()));
      }
    }
  }
  admission.body_limit = body_limit(context_.config, method.body);
  // A held answer only opens in its handler: the streams' lane, where a
  // crowd reconnecting after a restart waits without filling the requests'.
  if (method.answer == AnswerBound::kHeld) admission.lane = Lane::kStreams;
  // Searches in theirs: their cost is not the other requests' to feel; and
  // a place a client there (by address), so one cannot hold the lane.
  if (method.lane == MethodLane::kSearches) {
    admission.lane = Lane::kSearches;
    admission.client = context_.proxies.client_key(head);
  }
  return admission;
}

Result<Api::Identified> Api::identify(const HttpRequestHead& head, const ApiMethod& method,
                                      const ClientKey& address) {
  Identified who{address, std::nullopt};
  auto credential = credential_of(head, context_.config);
  if (!credential) {
    who.invalid = Error{ErrorCode::kAuthRequired, "procedures need an Authorization: Bearer token"};
    return who;
  }
  if (!credential->cookie && looks_like_jwt(credential->token)) {
    auto checked = precheck_jwt(credential->token, method.nsid);
    if (!checked) {
      who.invalid = checked.error();
      return who;
    }
    if (checked->verified) who.client = ClientKey::did(checked->did);
    if (context_.config.mode == Mode::kLocal &&
        !local_service_auth_allows(context_.config, checked->did)) {
      who.invalid = Error{ErrorCode::kForbidden,
                          "service-auth writes are off on this app view, which stores records "
                          "itself (auth.localServiceAuth); use a token from `token create`"};
    }
    return who;
  }
  auto did = bearer_did(credential->token);
  if (!did) return std::unexpected(did.error());
  if (!*did) {
    who.invalid = invalid_token(credential->cookie ? "the session has ended; sign in again"
                                                   : "the token is not valid");
    return who;
  }
  who.client = ClientKey::token(token_digest(credential->token));
  if (credential->cookie) who.invalid = cross_origin(head);
  return who;
}

}  // namespace bulleted::appview
