// The operators' endpoints (liveness, readiness, metrics, the XRPC health
// check), the app view's did:web document, and the web outliner's files.
#include <spdlog/spdlog.h>

#include "appview/web/web_assets.hpp"
#include "appview/xrpc/api.hpp"
#include "appview/xrpc/method_handlers.hpp"
#include "appview/xrpc/xrpc.hpp"
#include "firehose/client/name_lookup.hpp"

namespace bulleted::appview {

HttpResponse Api::health() {
  std::string problem;
  if (context_.services.database != nullptr) {
    const DatabaseReading reading = context_.services.database->reading();
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
  const char* sign_in = context_.services.oauth != nullptr        ? "oauth"
                        : context_.services.pds == nullptr        ? "token"
                        : context_.config.allow_password_sessions ? "password"
                                                                  : "none";
  return json_response({{"version", kVersion}, {"signIn", sign_in}});
}

HttpResponse Api::ready() {
  nlohmann::json problems = nlohmann::json::array();
  if (context_.services.database != nullptr) {
    const DatabaseReading reading = context_.services.database->reading();
    if (!reading.writable) problems.push_back(reading.problem);
  } else {
    try {
      if (auto r = store().check_writable(); !r)
        problems.push_back("database not writable: " + r.error().message);
    } catch (const std::exception& e) {
      problems.push_back(std::string("database unusable: ") + e.what());
    }
  }
  if (context_.services.firehose != nullptr) {
    if (context_.services.firehose->connection !=
        static_cast<int>(firehose::ConnectionState::kConnected)) {
      problems.push_back("firehose not connected");
    }
    if (context_.services.firehose->backfilling && context_.config.backfill_blocks_readiness) {
      problems.push_back("backfilling: " +
                         std::to_string(context_.services.firehose->repos_pending.load() +
                                        context_.services.firehose->repos_in_flight.load()) +
                         " repos to fetch");
    }
    const auto lag = context_.services.firehose->lag_ms.load();
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
    nodes = context_.services.database != nullptr ? context_.services.database->reading().nodes
                                                  : store().read().node_count().value_or(-1);
    checkpoints = store().checkpoints();
  } catch (...) {
  }
  std::string text =
      context_.metrics.render(context_.services.firehose, nodes, context_.in_flight(), checkpoints);
  if (context_.services.streams != nullptr) context_.services.streams->counters().render(text);
  if (context_.front) {
    const HttpFrontCounters front = context_.front();
    text +=
        "# HELP bulleted_http_connections Connections open to the HTTP front.\n"
        "# TYPE bulleted_http_connections gauge\nbulleted_http_connections " +
        std::to_string(front.open) + "\n";
    text +=
        "# HELP bulleted_http_refused_total Connections and heads the front refused: "
        "address (past limits.connectionsPerAddress), total (past limits.maxConnections), "
        "large_head (the large heads' budget spent).\n"
        "# TYPE bulleted_http_refused_total counter\n";
    text += "bulleted_http_refused_total{reason=\"address\"} " +
            std::to_string(front.refused_address) + "\n";
    text += "bulleted_http_refused_total{reason=\"total\"} " + std::to_string(front.refused_total) +
            "\n";
    text += "bulleted_http_refused_total{reason=\"large_head\"} " +
            std::to_string(front.refused_large_head) + "\n";
  }
  const auto lookups = firehose::NameLookups::shared().counts();
  text +=
      "# HELP bulleted_name_lookups_running Name lookups waiting on name servers (those their "
      "callers left behind included), by share: requests (names a request was given) or process "
      "(the operator's hosts, the firehose's).\n"
      "# TYPE bulleted_name_lookups_running gauge\n"
      "bulleted_name_lookups_running{share=\"requests\"} " +
      std::to_string(lookups.requests) + "\nbulleted_name_lookups_running{share=\"process\"} " +
      std::to_string(lookups.running - lookups.requests) + "\n";
  text +=
      "# HELP bulleted_name_lookups_refused_total Name lookups refused: their share's places "
      "were all taken.\n"
      "# TYPE bulleted_name_lookups_refused_total counter\n"
      "bulleted_name_lookups_refused_total " +
      std::to_string(lookups.refused) + "\n";
  return HttpResponse{200, "text/plain; version=0.0.4", std::move(text), {}};
}

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

}  // namespace bulleted::appview
