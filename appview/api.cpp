#include "appview/api.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <map>

#include "appview/api_methods.hpp"
#include "appview/secret_box.hpp"
#include "appview/xrpc.hpp"
#include "firehose/cid.hpp"

namespace bulleted::appview {
namespace {

std::string hex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

}  // namespace

std::string new_token() { return random_id("bt_", 32); }

std::string token_digest(std::string_view token) { return hex(firehose::sha256(token)); }

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

Result<std::string> Api::authorize(const HttpRequest& request, const std::string& repo) {
  const std::string header = request.header("authorization");
  if (header.rfind("Bearer ", 0) != 0 || header.size() <= 7) {
    return fail(ErrorCode::kAuthRequired, "procedures need an Authorization: Bearer token");
  }
  const std::string digest = token_digest(std::string_view(header).substr(7));
  auto did = store().token_did(digest);
  if (!did) return std::unexpected(did.error());
  if (!*did) return fail(ErrorCode::kAuthRequired, "the token is not valid");
  if (**did != repo) return fail(ErrorCode::kForbidden, "the token may only write its own repo");
  return **did;
}

HttpResponse Api::health() {
  try {
    auto count = store().node_count();
    if (!count) throw std::runtime_error(count.error().message);
  } catch (const std::exception& e) {
    spdlog::error("health: the database is unusable: {}", e.what());
    return json_response(
        {{"version", kVersion}, {"error", "Unavailable"}, {"message", "the database is unusable"}},
        503);
  }
  return json_response({{"version", kVersion}});
}

HttpResponse Api::ready() {
  nlohmann::json problems = nlohmann::json::array();
  try {
    if (auto r = store().check_writable(); !r)
      problems.push_back("database not writable: " + r.error().message);
  } catch (const std::exception& e) {
    problems.push_back(std::string("database unusable: ") + e.what());
  }
  if (context_.firehose != nullptr) {
    if (context_.firehose->connection != static_cast<int>(firehose::ConnectionState::kConnected)) {
      problems.push_back("firehose not connected");
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
  try {
    nodes = store().node_count().value_or(-1);
  } catch (...) {
  }
  return HttpResponse{200,
                      "text/plain; version=0.0.4",
                      context_.metrics.render(context_.firehose, nodes, context_.in_flight()),
                      {}};
}

HttpResponse Api::handle(const HttpRequest& request) {
  const auto started = std::chrono::steady_clock::now();
  std::string label = "other";
  HttpResponse response;
  try {
    if (request.path == "/healthz") {
      label = "_healthz";
      response = HttpResponse{200, "text/plain", "ok\n", {}};
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
        response = error_response(501, "MethodNotImplemented", "no method " + nsid);
      } else {
        label = nsid;
        std::optional<int> wait;
        if (method->kind == MethodKind::kProcedure) {
          // A client is its bearer token (digested) when it sends one, else its address.
          const std::string bearer = request.header("authorization");
          wait = context_.procedure_limits.take(bearer.empty() ? "addr " + request.remote
                                                               : "token " + token_digest(bearer));
        }
        if (wait) {
          Error limited{ErrorCode::kRateLimited, "too many requests from this client; retry in " +
                                                     std::to_string(*wait) +
                                                     " s (limits.procedureRatePerMinute)"};
          limited.retry_after_seconds = *wait;
          response = error_response(limited);
        } else {
          response = call_method(*this, *method, request);
        }
      }
    } else {
      response = error_response(404, "NotFound", "no such path; the API lives under /xrpc/");
    }
  } catch (const std::exception& e) {
    spdlog::error("{} {} failed: {}", request.method, request.path, e.what());
    response = error_response(Error{ErrorCode::kInternal, e.what()});
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  context_.metrics.record(label, response.status, seconds);
  spdlog::debug("{} {} {} {:.3f} ms", request.method, request.path, response.status,
                seconds * 1000);
  return response;
}

}  // namespace bulleted::appview
