// The XRPC API and the operators' endpoints: one handler for every request
// the HTTP server receives. Queries are public; procedures need a bearer
// token for the repo they write (local mode).
//
// admit() decides what the front may do before a body is read: the route
// and HTTP method, the body limit of the method, the credentials of a
// procedure (none: 401 unread; a token that is not valid: 401, counted
// against the client's address), and the client's rate limits. handle()
// then answers with the body.
//
// Thread-safe: each thread uses its own SQLite connection; writes to one
// sibling group are serialized by the group locks.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "appview/config.hpp"
#include "appview/http/client_address.hpp"
#include "appview/http/cors.hpp"
#include "appview/http/server.hpp"
#include "appview/imports/import_jobs.hpp"
#include "appview/live/change_streams.hpp"
#include "appview/signin/service_auth.hpp"
#include "appview/signin/tokens.hpp"
#include "appview/write/pds_sink.hpp"
#include "appview/write/placement.hpp"
#include "appview/xrpc/database_probe.hpp"
#include "appview/xrpc/rate_limiter.hpp"
#include "appview/xrpc/request_metrics.hpp"
#include "appview/xrpc/write_services.hpp"
#include "firehose/identity/identity.hpp"
#include "firehose/metrics.hpp"
#include "ordering/tid.hpp"
#include "schema/store.hpp"

namespace bulleted::appview {

inline constexpr std::string_view kVersion = "0.1.0";

// Request bodies the front reads without credentials, and for queries.
inline constexpr std::size_t kSignInBodyBytes = 8 * 1024;
inline constexpr std::size_t kQueryBodyBytes = 8 * 1024;
// What every query costs before its answer's bytes (limits.queryBytesPerMinute).
inline constexpr double kQueryBaseCost = 1024;
// The largest budgetBytes a getSubtree may ask for.
inline constexpr std::size_t kMaxSubtreeBudget = 8 * 1024 * 1024;

// What a mode or the process adds to the context. Each is null when this
// process does not have it: the method table's Needs say which a method
// cannot go without (501 before its handler is reached), and the routes
// that use one check it.
struct AppServices {
  const firehose::FirehoseMetrics* firehose = nullptr;  // following a firehose
  PdsServices* pds = nullptr;                           // pds mode (config.mode)
  ImportRunner* imports = nullptr;                      // imports are run here
  // Handles to DIDs (com.atproto.identity.resolveHandle).
  identity::IdentityResolver* identity = nullptr;
  // The places for requests waiting on other hosts (identity, sign-in,
  // service-auth keys): every request is served in a RequestScope of it.
  // Null: fetches are not gated (tests without a network).
  identity::FetchGate* outbound = nullptr;
  // The database as a thread of its own last read it: health and readiness
  // answer from it at once. Null: they read the database themselves, on the
  // operators' thread.
  const DatabaseProbe* database = nullptr;
  ServiceAuth* service_auth = nullptr;  // service-auth JWTs (service.did set)
  OAuthClient* oauth = nullptr;         // pds mode with service.publicUrl; else /oauth/ is 404
  // How writes reach their repo; null: PlainWrites (write_services.hpp).
  // serve installs the fault-injecting one behind BULLETED_FAULT_INJECTION.
  WriteServices* writes = nullptr;
  ChangeStreams* streams = nullptr;  // change streams (streamChanges)
};

// What every request may use, in every mode: the configuration, client
// addresses, the limits and gates, the write locks and clocks, the
// metrics; and the services a mode adds.
struct AppContext {
  explicit AppContext(const Config& c)
      : config(c),
        proxies(TrustedProxies::parse(c.trusted_proxies).value_or(TrustedProxies())),
        procedure_limits(c.procedure_rate_per_minute),
        query_limits(static_cast<double>(c.query_bytes_per_minute)),
        sign_in_limits(c.sign_in_per_minute),
        sign_in_account_limits(c.sign_in_per_account_per_minute),
        exports(c.max_concurrent_exports),
        searches(search_places(c), search_places(c)),
        plain_writes(clock, services) {}
  const Config& config;
  TrustedProxies proxies;
  RateLimiter procedure_limits;        // per valid token, else per address
  RateLimiter query_limits;            // bytes per address
  RateLimiter sign_in_limits;          // createSession per address
  RateLimiter sign_in_account_limits;  // createSession per identifier
  LongRequestGate exports;
  WorkGate searches;  // limits.maxConcurrentSearches
  GroupLocks locks;
  CreateQueues creates;  // local mode's createNode batches
  ordering::TidClock clock;
  RequestMetrics metrics;
  std::function<std::size_t()> in_flight = [] { return std::size_t{0}; };
  // The front's connections and refusals (for /metrics); unset: none.
  std::function<HttpFrontCounters()> front;
  // A search's pause for other requests, at most the allowance given (the
  // HTTP front's give_way); it returns what it took. Unset: no pause.
  std::function<std::chrono::microseconds(std::chrono::microseconds)> give_way;
  // Told of each commit the requests make (change streams).
  std::function<void(const schema::CommitNotice&)> on_commit;
  AppServices services;

  // How this request's writes reach their repo.
  WriteServices& writes() { return services.writes != nullptr ? *services.writes : plain_writes; }

 private:
  PlainWrites plain_writes;
};

// Who a request speaks for: a bearer token of the app view's own (a local
// token, or a pds-mode session's), or a service-auth JWT from the caller's
// PDS.
struct Caller {
  enum class Via { kToken, kCookie, kServiceAuth };
  std::string did;
  Via via = Via::kToken;
};

// The web client's session cookie (pds mode, after an OAuth sign-in), and
// the cookie that binds a sign-in to the browser that began it. Both are
// named with the __Host- prefix unless secure_cookies() says otherwise.
inline constexpr std::string_view kSessionCookie = "bulleted_session";
inline constexpr std::string_view kSignInCookie = "bulleted_signin";

// Whether the app view's cookies are Secure with the __Host- prefix: unless
// service.publicUrl is http on a loopback host (a developer's machine).
bool secure_cookies(const Config& config);
// The name a cookie of the app view's goes by ("__Host-" + name, or name).
std::string cookie_name(const Config& config, std::string_view name);
// The value of the cookie `name` a request carries; nullopt when it carries
// none, or more than one (an ambiguous cookie is no cookie).
std::optional<std::string> cookie_value(const HttpRequestHead& request, std::string_view name);

// The app view's own credential a request carries: its bearer token, else
// (pds mode) its session cookie.
struct Credential {
  std::string token;
  bool cookie = false;
};
std::optional<Credential> credential_of(const HttpRequestHead& request, const Config& config);
// The Set-Cookie value that gives (or, with `clear`, removes) the session
// cookie: HttpOnly, SameSite=Lax, Path=/, Secure and __Host- as above.
std::string session_cookie(const Config& config, const std::string& token, bool clear);
// The same for the sign-in's binding (valid for kSignInSeconds).
std::string sign_in_cookie(const Config& config, const std::string& binding, bool clear);

struct ApiMethod;

class Api {
 public:
  explicit Api(AppContext& context);
  // Runs on a connection's thread before the body is read (see above).
  Admission admit(const HttpRequestHead& head);
  HttpResponse handle(const HttpRequest& request);
  // The headers every answer carries (CORS on the XRPC routes).
  void decorate(const HttpRequestHead& head, HttpResponse& response) const {
    cors_.decorate(head, response);
  }

 private:
  friend struct ApiMethods;
  schema::Store& store();
  // The caller of a request to `nsid`, verified (a JWT's key read when
  // needed, its jti recorded); nullopt without an Authorization header;
  // kAuthRequired for a token that is not valid.
  Result<std::optional<Caller>> caller(const HttpRequestHead& request, std::string_view nsid);
  // The DID a bearer token speaks for in this mode, or nullopt.
  Result<std::optional<std::string>> bearer_did(std::string_view token);
  // Admission's look at a service-auth JWT: every check but a signature
  // whose key is not cached (no network on a connection's thread).
  Result<ServiceCaller> precheck_jwt(std::string_view token, std::string_view nsid);
  // Admission of a method under its row (api_methods.hpp).
  Admission admit_method(const HttpRequestHead& head, const ApiMethod& method);
  // Who a procedure's caller is for its rate limit (a proven DID or token,
  // else its address), and why its credentials fail, if they do.
  struct Identified;
  Result<Identified> identify(const HttpRequestHead& head, const ApiMethod& method,
                              const ClientKey& address);
  // A method's answer with its row applied: the query budget granted
  // before it runs, a query's JWT verified, the method's stream gate.
  HttpResponse call(const HttpRequest& request, const ApiMethod& method, const ClientKey& client,
                    double& granted);
  // Queries pay for the bytes they produce (RateBucket::kQueryBytes).
  void settle_query_bytes(HttpResponse& response, const ClientKey& client, double granted);
  // The request's metrics and debug log, at its answer's end.
  void timed(const HttpRequest& request, const std::string& label,
             std::chrono::steady_clock::time_point started, HttpResponse& response);
  HttpResponse refused(std::string_view label, HttpResponse response);
  // The /oauth/ routes (pds mode with service.publicUrl).
  HttpResponse oauth_route(const HttpRequest& request);
  // A cookie may carry a procedure only from the app view's own origin.
  std::optional<Error> cross_origin(const HttpRequestHead& request) const;
  HttpResponse health();
  HttpResponse ready();
  HttpResponse metrics();

  AppContext& context_;
  CorsPolicy cors_;
};

// The 429 of a spent rate limit, naming its setting.
Error rate_limited(int wait, std::string_view setting);

// The token of an `Authorization: Bearer <token>` header, or nullopt.
std::optional<std::string> bearer_token(const HttpRequestHead& request);

}  // namespace bulleted::appview
