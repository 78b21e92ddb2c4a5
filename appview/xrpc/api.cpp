#include "appview/xrpc/api.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <map>
#include <variant>

#include "appview/signin/jwt.hpp"
#include "appview/xrpc/api_methods.hpp"
#include "appview/xrpc/method_handlers.hpp"
#include "appview/xrpc/routes.hpp"
#include "appview/xrpc/xrpc.hpp"

namespace bulleted::appview {

schema::Store& Api::store() {
  // One connection per worker thread and database.
  thread_local std::map<std::string, std::unique_ptr<schema::Store>> stores;
  auto& slot = stores[context_.config.db_path];
  if (!slot) {
    auto opened = schema::Store::open(
        context_.config.db_path,
        {.busy_timeout_ms = context_.config.busy_timeout_ms, .on_commit = context_.on_commit});
    if (!opened) throw std::runtime_error("cannot open the database: " + opened.error().message);
    slot = std::move(*opened);
  }
  return *slot;
}

namespace {

// Counts a streamed answer's bytes against the client's query budget: out
// of what was granted before it ran first, then charged as they are
// written; what is left of the grant goes back at the end.
class ChargedStream final : public ResponseStream {
 public:
  ChargedStream(ResponseStream& inner, RateLimiter& limits, ClientKey client, double granted)
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
  ClientKey client_;
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

HttpResponse Api::refused(std::string_view label, HttpResponse response) {
  context_.metrics.record(std::string(label), response.status, 0.0);
  return response;
}

Api::Api(AppContext& context) : context_(context), cors_(context.config.cors_origins) {}

HttpResponse Api::call(const HttpRequest& request, const ApiMethod& method, const ClientKey& client,
                       double& granted) {
  XrpcCall call{request};
  if (method.bucket == RateBucket::kQueryBytes && method.answer != AnswerBound::kStream &&
      method.answer != AnswerBound::kHeld) {
    // The answer's bound, and no more than the client's budget holds now:
    // decided before the answer is produced.
    const double most = method.answer == AnswerBound::kBudget
                            ? static_cast<double>(kMaxSubtreeBudget)
                            : static_cast<double>(context_.config.max_answer_bytes);
    const auto grant = context_.query_limits.take_up_to(client, most);
    if (grant.wait) {
      return error_response(rate_limited(*grant.wait, "limits.queryBytesPerMinute"));
    }
    granted = context_.query_limits.enabled() ? grant.units : 0;
    call.answer_bytes = static_cast<std::size_t>(grant.units);
  }
  // A public method's service-auth JWT is verified before its handler runs
  // (the handler of a kSelf method verifies it when it asks who calls). A
  // change stream opens in a lane of one worker that never waits on another
  // host: its JWT had admission's checks (all but a signature whose key is
  // not cached), and grants nothing a stream of public data could use.
  if (method.auth == Auth::kPublic && method.answer != AnswerBound::kHeld &&
      !unavailable(context_, method)) {
    if (auto token = bearer_token(request); token && looks_like_jwt(*token)) {
      if (auto verified = caller(request, method.nsid); !verified) {
        return error_response(verified.error());
      }
    }
  }
  HttpResponse response = call_method(*this, method, call);
  if (method.gate == StreamGate::kNone || !response.stream) return response;
  // The method's gate on streams running at once, held for the stream's life.
  auto entered = context_.exports.enter(client);
  if (auto* refusal = std::get_if<LongRequestGate::Refusal>(&entered)) {
    Error busy{ErrorCode::kRateLimited,
               *refusal == LongRequestGate::Refusal::kClientBusy
                   ? "an export for this client is still running; retry when it has finished"
                   : "too many exports are running (limits.maxConcurrentExports); retry soon"};
    busy.retry_after_seconds = 5;
    return error_response(busy);
  }
  std::shared_ptr<LongRequestGate::Pass> pass =
      std::move(std::get<std::unique_ptr<LongRequestGate::Pass>>(entered));
  response.stream = [inner = std::move(response.stream), pass](ResponseStream& out) { inner(out); };
  return response;
}

HttpResponse Api::handle(const HttpRequest& request) {
  const auto started = std::chrono::steady_clock::now();
  const RouteRow& route = route_of(request.path);
  std::string label(route.label);
  const ClientKey client = ClientKey::address(context_.proxies.client_key(request));
  // Whatever this request fetches from other hosts takes a place of the
  // outbound gate, as this client's.
  std::optional<identity::RequestScope> scope;
  if (context_.services.outbound != nullptr)
    scope.emplace(*context_.services.outbound, client.str());
  const ApiMethod* method = nullptr;
  // What the client's query budget granted the call before it ran.
  double granted = 0;
  HttpResponse response;
  try {
    switch (route.route) {
      case Route::kLiveness:
        response = HttpResponse{200, "text/plain", "ok\n", {}, {}};
        break;
      case Route::kReadiness:
        response = ready();
        break;
      case Route::kMetrics:
        response = metrics();
        break;
      case Route::kHealth:
        response = health();
        break;
      case Route::kXrpc:
        label = request.path.substr(6);
        method = find_method(label);
        if (method == nullptr) {
          response = error_response(Error{ErrorCode::kMethodNotImplemented, "no method " + label});
          label = "unknown";
        } else {
          response = call(request, *method, client, granted);
        }
        break;
      case Route::kOAuthSignIn:
      case Route::kOAuth:
        response = oauth_route(request);
        break;
      case Route::kDidDocument:
        response = did_document(context_.config);
        break;
      case Route::kWeb:
        if (auto page = web_page(request)) {
          response = std::move(*page);
        } else {
          label = "other";
          response = error_response(
              Error{ErrorCode::kNotFound, "no such path; the API lives under /xrpc/"});
        }
        break;
    }
  } catch (const std::exception& e) {
    spdlog::error("{} {} failed: {}", request.method, request.path, e.what());
    response = error_response(Error{ErrorCode::kInternal, e.what()});
  }
  if (method != nullptr && method->bucket == RateBucket::kQueryBytes) {
    settle_query_bytes(response, client, granted);
  }
  // A held answer (a change stream) is no request to time: streams have
  // metrics of their own.
  if (!response.hold) timed(request, label, started, response);
  return response;
}

void Api::settle_query_bytes(HttpResponse& response, const ClientKey& client, double granted) {
  if (!context_.query_limits.enabled()) return;
  // Queries pay for what they produce: what was granted and not written
  // goes back; an export, granted nothing, is charged as it goes.
  if (response.stream) {
    response.stream = [inner = std::move(response.stream), &limits = context_.query_limits, client,
                       granted](ResponseStream& out) {
      ChargedStream charged(out, limits, client, granted);
      inner(charged);
    };
    return;
  }
  const double spent = static_cast<double>(response.body.size());
  if (spent > granted) {
    context_.query_limits.charge(client, spent - granted);
  } else {
    context_.query_limits.give_back(client, granted - spent);
  }
}

void Api::timed(const HttpRequest& request, const std::string& label,
                std::chrono::steady_clock::time_point started, HttpResponse& response) {
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
}

}  // namespace bulleted::appview
