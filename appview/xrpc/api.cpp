#include "appview/xrpc/api.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <map>
#include <variant>

#include "appview/signin/jwt.hpp"
#include "appview/web/web_assets.hpp"
#include "appview/xrpc/api_methods.hpp"
#include "appview/xrpc/xrpc.hpp"
#include "firehose/client/network_policy.hpp"

namespace bulleted::appview {

schema::Store& Api::store() {
  // One connection per worker thread and database.
  thread_local std::map<std::string, std::unique_ptr<schema::Store>> stores;
  auto& slot = stores[context_.config.db_path];
  if (!slot) {
    auto opened = schema::Store::open(context_.config.db_path,
                                      {.busy_timeout_ms = context_.config.busy_timeout_ms});
    if (!opened) throw std::runtime_error("cannot open the database: " + opened.error().message);
    slot = std::move(*opened);
  }
  return *slot;
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

namespace {

Error invalid_token(std::string message) {
  Error error{ErrorCode::kAuthRequired, std::move(message)};
  error.invalid_token = true;
  return error;
}

Error service_auth_off() {
  return invalid_token(
      "service auth is off: this app view has no DID (set service.publicUrl or service.did)");
}

}  // namespace

Result<ServiceCaller> Api::precheck_jwt(std::string_view token, std::string_view nsid) {
  if (context_.service_auth == nullptr) return std::unexpected(service_auth_off());
  return context_.service_auth->check(token, nsid, KeyAccess::kCachedOnly);
}

Result<std::optional<Caller>> Api::caller(const HttpRequestHead& request, std::string_view nsid) {
  auto credential = credential_of(request, context_.config);
  if (!credential) return std::optional<Caller>();
  if (!credential->cookie && looks_like_jwt(credential->token)) {
    if (context_.service_auth == nullptr) return std::unexpected(service_auth_off());
    auto checked = context_.service_auth->check(credential->token, nsid, KeyAccess::kFetch);
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

HttpResponse Api::health() {
  std::string problem;
  if (context_.database != nullptr) {
    const DatabaseReading reading = context_.database->reading();
    if (!reading.usable) problem = reading.problem;
  } else {
    try {
      auto count = store().read().node_count();
      if (!count) problem = count.error().message;
    } catch (const std::exception& e) {
      problem = e.what();
    }
  }
  if (!problem.empty()) {
    spdlog::error("health: the database is unusable: {}", problem);
    return json_response(
        {{"version", kVersion}, {"error", "Unavailable"}, {"message", "the database is unusable"}},
        503);
  }
  // How people sign in here, for frontends choosing their sign-in form.
  const char* sign_in = context_.oauth != nullptr                 ? "oauth"
                        : context_.pds == nullptr                 ? "token"
                        : context_.config.allow_password_sessions ? "password"
                                                                  : "none";
  return json_response({{"version", kVersion}, {"signIn", sign_in}});
}

HttpResponse Api::ready() {
  nlohmann::json problems = nlohmann::json::array();
  if (context_.database != nullptr) {
    const DatabaseReading reading = context_.database->reading();
    if (!reading.writable) problems.push_back(reading.problem);
  } else {
    try {
      if (auto r = store().check_writable(); !r)
        problems.push_back("database not writable: " + r.error().message);
    } catch (const std::exception& e) {
      problems.push_back(std::string("database unusable: ") + e.what());
    }
  }
  if (context_.firehose != nullptr) {
    if (context_.firehose->connection != static_cast<int>(firehose::ConnectionState::kConnected)) {
      problems.push_back("firehose not connected");
    }
    if (context_.firehose->backfilling && context_.config.backfill_blocks_readiness) {
      problems.push_back("backfilling: " +
                         std::to_string(context_.firehose->repos_pending.load() +
                                        context_.firehose->repos_in_flight.load()) +
                         " repos to fetch");
    }
    const auto lag = context_.firehose->lag_ms.load();
    if (lag > static_cast<std::int64_t>(context_.config.firehose_ready_max_lag_seconds) * 1000) {
      problems.push_back("firehose lag " + std::to_string(lag) + " ms");
    }
  }
  if (!problems.empty()) {
    return json_response({{"ready", false},
                          {"error", "Unavailable"},
                          {"message", problems[0]},
                          {"problems", problems}},
                         503);
  }
  return json_response({{"ready", true}});
}

HttpResponse Api::metrics() {
  std::int64_t nodes = -1;
  schema::CheckpointCounts checkpoints;
  try {
    nodes = context_.database != nullptr ? context_.database->reading().nodes
                                         : store().read().node_count().value_or(-1);
    checkpoints = store().checkpoints();
  } catch (...) {
  }
  return HttpResponse{
      200,
      "text/plain; version=0.0.4",
      context_.metrics.render(context_.firehose, nodes, context_.in_flight(), checkpoints),
      {}};
}

namespace {

// The reference web outliner's files (appview/web/, built in): / is its
// page. Served with a policy that runs only these files' scripts (nothing
// inline, nothing from elsewhere) and calls only this origin.
std::optional<HttpResponse> web_page(const HttpRequest& request) {
  if (request.method != "GET" && request.method != "HEAD") return std::nullopt;
  std::string_view path = request.path;
  if (path == "/") path = "/index.html";
  for (const auto& asset : web_assets()) {
    if (asset.path != path) continue;
    HttpResponse response{200, std::string(asset.content_type), std::string(asset.bytes), {}, {}};
    response.headers = {
        {"Content-Security-Policy",
         "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
         "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"},
        {"X-Content-Type-Options", "nosniff"},
        {"Referrer-Policy", "no-referrer"},
        {"Cache-Control", "no-cache"}};
    return response;
  }
  return std::nullopt;
}

// The app view's own DID document (did:web), naming the service frontends
// and PDSes proxy to: #bulleted_appview at service.publicUrl.
HttpResponse did_document(const Config& config) {
  if (!config.public_url || !config.service_did || !config.service_did->starts_with("did:web:")) {
    return error_response(Error{ErrorCode::kNotFound,
                                "no DID document here: service.publicUrl is not set, or "
                                "service.did is not a did:web"});
  }
  HttpResponse response = json_response({{"@context", {"https://www.w3.org/ns/did/v1"}},
                                         {"id", *config.service_did},
                                         {"service",
                                          {{{"id", "#bulleted_appview"},
                                            {"type", "BulletedAppView"},
                                            {"serviceEndpoint", *config.public_url}}}}});
  // A public document: any page may read it (resolvers in browsers do).
  response.headers.emplace_back("Access-Control-Allow-Origin", "*");
  return response;
}

bool operators_path(std::string_view path) {
  return path == "/healthz" || path == "/readyz" || path == "/metrics" || path == "/xrpc/_health";
}

// Counts a streamed answer's bytes against the client's query budget: out
// of what was granted before it ran first, then charged as they are
// written; what is left of the grant goes back at the end.
class ChargedStream final : public ResponseStream {
 public:
  ChargedStream(ResponseStream& inner, RateLimiter& limits, std::string client, double granted)
      : inner_(inner), limits_(limits), client_(std::move(client)), left_(granted) {}
  ~ChargedStream() override { limits_.give_back(client_, left_); }
  bool write(std::string_view bytes) override {
    const double size = static_cast<double>(bytes.size());
    const double from_grant = std::min(left_, size);
    left_ -= from_grant;
    limits_.charge(client_, size - from_grant);
    return inner_.write(bytes);
  }

 private:
  ResponseStream& inner_;
  RateLimiter& limits_;
  std::string client_;
  double left_;
};

}  // namespace

Error rate_limited(int wait, std::string_view setting) {
  Error limited{ErrorCode::kRateLimited, "too many requests from this client; retry in " +
                                             std::to_string(wait) + " s (" + std::string(setting) +
                                             ")"};
  limited.retry_after_seconds = wait;
  return limited;
}

HttpResponse Api::refused(const std::string& label, HttpResponse response) {
  context_.metrics.record(label, response.status, 0.0);
  return response;
}

Api::Api(AppContext& context) : context_(context), cors_(context.config.cors_origins) {}

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
  if (operators_path(head.path)) {
    // Health and readiness are reads of kept state when the probe keeps it:
    // answered on the listener's thread, behind nothing. Metrics render on
    // the operators' thread.
    admission.lane =
        context_.database != nullptr && head.path != "/metrics" ? Lane::kAtOnce : Lane::kOperators;
    return admission;
  }
  if (head.path == "/oauth/login" || head.path == "/oauth/callback") {
    // Sign-ins reach other hosts: limited per address like createSession.
    const std::string address = "addr " + context_.proxies.client_key(head);
    if (auto wait = context_.sign_in_limits.take(address)) {
      admission.refusal =
          refused("_oauth", error_response(rate_limited(*wait, "limits.signInPerMinute")));
    }
    return admission;
  }
  if (head.path.rfind("/xrpc/", 0) != 0) return admission;  // handle() answers 404
  const std::string nsid = head.path.substr(6);
  const ApiMethod* method = find_method(nsid);
  if (method == nullptr) {
    admission.refusal = refused(
        "unknown", error_response(Error{ErrorCode::kMethodNotImplemented, "no method " + nsid}));
    return admission;
  }
  if (auto wrong = wrong_http_method(*method, head.method)) {
    admission.refusal = refused(nsid, std::move(*wrong));
    return admission;
  }
  if (auto missing = unavailable(context_, *method)) {
    admission.refusal = refused(nsid, std::move(*missing));
    return admission;
  }
  const std::string address = "addr " + context_.proxies.client_key(head);
  auto credential = credential_of(head, context_.config);
  const bool jwt = credential && !credential->cookie && looks_like_jwt(credential->token);
  const std::optional<std::string> token =
      credential ? std::optional<std::string>(credential->token) : std::nullopt;
  if (method->kind == MethodKind::kQuery) {
    if (auto wait = context_.query_limits.take(address, kQueryBaseCost)) {
      admission.refusal =
          refused(nsid, error_response(rate_limited(*wait, "limits.queryBytesPerMinute")));
      return admission;
    }
    // Queries are public; a service-auth JWT sent with one must still be valid.
    if (jwt) {
      if (auto checked = precheck_jwt(*token, nsid); !checked) {
        admission.refusal = refused(nsid, error_response(checked.error()));
      }
    }
    return admission;
  }
  if (nsid == "app.bulleted.createSession") {
    admission.body_limit = kSignInBodyBytes;
    if (auto wait = context_.sign_in_limits.take(address)) {
      admission.refusal =
          refused(nsid, error_response(rate_limited(*wait, "limits.signInPerMinute")));
    }
    return admission;
  }
  // Every other procedure needs valid credentials before its body is read.
  if (!token) {
    if (auto wait = context_.procedure_limits.take(address)) {
      admission.refusal =
          refused(nsid, error_response(rate_limited(*wait, "limits.procedureRatePerMinute")));
      return admission;
    }
    admission.refusal =
        refused(nsid, error_response(Error{ErrorCode::kAuthRequired,
                                           "procedures need an Authorization: Bearer token"}));
    return admission;
  }
  // A client is its identity once proven, else its address: a random token
  // (or a forged JWT) per request changes nothing.
  std::string client = address;
  std::optional<Error> invalid;
  if (jwt) {
    auto checked = precheck_jwt(*token, nsid);
    if (!checked) {
      invalid = checked.error();
    } else {
      if (checked->verified) client = "did " + checked->did;
      if (context_.config.mode == Mode::kLocal &&
          !local_service_auth_allows(context_.config, checked->did)) {
        invalid = Error{ErrorCode::kForbidden,
                        "service-auth writes are off on this app view, which stores records "
                        "itself (auth.localServiceAuth); use a token from `token create`"};
      }
    }
  } else {
    auto did = bearer_did(*token);
    if (!did) {
      admission.refusal = refused(nsid, error_response(did.error()));
      return admission;
    }
    if (*did) {
      client = "token " + token_digest(*token);
      if (credential->cookie) invalid = cross_origin(head);
    } else {
      invalid = invalid_token(credential->cookie ? "the session has ended; sign in again"
                                                 : "the token is not valid");
    }
  }
  if (auto wait = context_.procedure_limits.take(client)) {
    admission.refusal =
        refused(nsid, error_response(rate_limited(*wait, "limits.procedureRatePerMinute")));
    return admission;
  }
  if (invalid) {
    admission.refusal = refused(nsid, error_response(*invalid));
    return admission;
  }
  admission.body_limit = nsid == "app.bulleted.importOutline" ? context_.config.max_import_bytes
                                                              : context_.config.max_body_bytes;
  return admission;
}

HttpResponse Api::handle(const HttpRequest& request) {
  const auto started = std::chrono::steady_clock::now();
  std::string label = "other";
  HttpResponse response;
  bool query = false;
  const std::string client = "addr " + context_.proxies.client_key(request);
  // What the client's query budget granted this call before it ran (the
  // part its answer does not use goes back), and what the answer spent.
  double granted = 0;
  AnswerBound bound = AnswerBound::kPage;
  // Whatever this request fetches from other hosts takes a place of the
  // outbound gate, as this client's.
  std::optional<identity::RequestScope> scope;
  if (context_.outbound != nullptr) {
    scope.emplace(*context_.outbound, client);
  }
  try {
    if (request.path == "/healthz") {
      label = "_healthz";
      response = HttpResponse{200, "text/plain", "ok\n", {}, {}};
    } else if (request.path == "/readyz") {
      label = "_readyz";
      response = ready();
    } else if (request.path == "/metrics") {
      label = "_metrics";
      response = metrics();
    } else if (request.path == "/xrpc/_health") {
      label = "_health";
      response = health();
    } else if (request.path.rfind("/xrpc/", 0) == 0) {
      const std::string nsid = request.path.substr(6);
      const ApiMethod* method = find_method(nsid);
      if (method == nullptr) {
        label = "unknown";
        response = error_response(Error{ErrorCode::kMethodNotImplemented, "no method " + nsid});
      } else {
        label = nsid;
        query = method->kind == MethodKind::kQuery;
        bound = method->answer;
        XrpcCall call{request};
        std::optional<Error> refusal;
        if (query && bound != AnswerBound::kStream) {
          // The answer's bound, and no more than the client's budget holds
          // now: decided before the answer is produced.
          const double most = bound == AnswerBound::kBudget
                                  ? static_cast<double>(kMaxSubtreeBudget)
                                  : static_cast<double>(context_.config.max_answer_bytes);
          const auto grant = context_.query_limits.take_up_to(client, most);
          if (grant.wait) {
            refusal = rate_limited(*grant.wait, "limits.queryBytesPerMinute");
          } else {
            granted = context_.query_limits.enabled() ? grant.units : 0;
            call.answer_bytes = static_cast<std::size_t>(grant.units);
          }
        }
        // A query's service-auth JWT is verified here (procedures verify
        // theirs when they ask who is calling).
        auto token = query ? bearer_token(request) : std::nullopt;
        auto verified = token && looks_like_jwt(*token) && !unavailable(context_, *method) &&
                                nsid != "app.bulleted.getSession"
                            ? caller(request, nsid)
                            : Result<std::optional<Caller>>();
        if (!verified) refusal = verified.error();
        response = refusal ? error_response(*refusal) : call_method(*this, *method, call);
      }
    } else if (request.path.rfind("/oauth/", 0) == 0) {
      label = "_oauth";
      response = oauth_route(request);
    } else if (request.path == "/.well-known/did.json") {
      label = "_did";
      response = did_document(context_.config);
    } else if (auto page = web_page(request)) {
      label = "_web";
      response = std::move(*page);
    } else {
      response =
          error_response(Error{ErrorCode::kNotFound, "no such path; the API lives under /xrpc/"});
    }
  } catch (const std::exception& e) {
    spdlog::error("{} {} failed: {}", request.method, request.path, e.what());
    response = error_response(Error{ErrorCode::kInternal, e.what()});
  }
  if (query && context_.query_limits.enabled()) {
    // Queries pay for what they produce: what was granted and not written
    // goes back; an export, granted nothing, is charged as it goes.
    if (response.stream) {
      response.stream = [inner = std::move(response.stream), &limits = context_.query_limits,
                         client, granted](ResponseStream& out) {
        ChargedStream charged(out, limits, client, granted);
        inner(charged);
      };
    } else {
      const double spent = static_cast<double>(response.body.size());
      if (spent > granted) {
        context_.query_limits.charge(client, spent - granted);
      } else {
        context_.query_limits.give_back(client, granted - spent);
      }
    }
  }
  auto done = [&metrics = context_.metrics, label, method = request.method, path = request.path,
               started](int status) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    metrics.record(label, status, seconds);
    spdlog::debug("{} {} {} {:.3f} ms", method, path, status, seconds * 1000);
  };
  if (response.stream && request.method != "HEAD") {
    // A streamed answer is timed to its end (HEAD sends none of it); one cut
    // short counts as a 500.
    response.stream = [inner = std::move(response.stream), done,
                       status = response.status](ResponseStream& out) {
      try {
        inner(out);
      } catch (...) {
        done(500);
        throw;
      }
      done(status);
    };
  } else {
    done(response.status);
  }
  return response;
}

}  // namespace bulleted::appview
