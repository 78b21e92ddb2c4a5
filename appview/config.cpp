#include "appview/config.hpp"

#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "appview/http/client_address.hpp"
#include "schema/syntax.hpp"

namespace bulleted::appview {

std::string_view to_string(Mode mode) { return mode == Mode::kPds ? "pds" : "local"; }

namespace {

Error bad(const std::string& message) { return Error{ErrorCode::kInvalidRequest, message}; }

// One setting: where it lives in the file, its environment variable and
// flag (either may be empty), and how to read it from a JSON value.
struct Setting {
  std::string file_key;  // "section.key"
  std::string env;
  std::string flag;
  std::function<std::optional<std::string>(Config&, const nlohmann::json&)> set;
};

template <class T>
std::function<std::optional<std::string>(Config&, const nlohmann::json&)> integer(T Config::*field,
                                                                                  long min,
                                                                                  long max) {
  return
      [field, min, max](Config& config, const nlohmann::json& value) -> std::optional<std::string> {
        long parsed = 0;
        if (value.is_number_integer()) {
          parsed = value.get<long>();
        } else if (value.is_string()) {
          const std::string text = value.get<std::string>();
          std::size_t used = 0;
          try {
            parsed = std::stol(text, &used);
          } catch (...) {
            return "is not an integer";
          }
          if (used != text.size()) return "is not an integer";
        } else {
          return "is not an integer";
        }
        if (parsed < min || parsed > max) {
          return "must be from " + std::to_string(min) + " to " + std::to_string(max);
        }
        config.*field = static_cast<T>(parsed);
        return std::nullopt;
      };
}

std::function<std::optional<std::string>(Config&, const nlohmann::json&)> text(
    std::string Config::*field, std::set<std::string> allowed = {}) {
  return
      [field, allowed](Config& config, const nlohmann::json& value) -> std::optional<std::string> {
        if (!value.is_string()) return "is not a string";
        const std::string v = value.get<std::string>();
        if (!allowed.empty() && !allowed.contains(v)) {
          std::string list;
          for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
          return "must be one of " + list;
        }
        if (v.empty()) return "is empty";
        config.*field = v;
        return std::nullopt;
      };
}

std::function<std::optional<std::string>(Config&, const nlohmann::json&)> optional_url(
    std::optional<std::string> Config::*field, std::vector<std::string> schemes) {
  return
      [field, schemes](Config& config, const nlohmann::json& value) -> std::optional<std::string> {
        if (value.is_null()) {
          config.*field = std::nullopt;
          return std::nullopt;
        }
        if (!value.is_string()) return "is not a string";
        const std::string v = value.get<std::string>();
        if (v.empty()) {
          config.*field = std::nullopt;
          return std::nullopt;
        }
        for (const auto& scheme : schemes) {
          if (v.rfind(scheme + "://", 0) == 0) {
            config.*field = v;
            return std::nullopt;
          }
        }
        std::string list;
        for (const auto& s : schemes) list += (list.empty() ? "" : " or ") + s + "://";
        return "must start with " + list;
      };
}

// true/false in the file; 1/0 (or true/false) from the environment.
std::function<std::optional<std::string>(Config&, const nlohmann::json&)> boolean(
    bool Config::*field) {
  return [field](Config& config, const nlohmann::json& value) -> std::optional<std::string> {
    if (value.is_boolean()) {
      config.*field = value.get<bool>();
    } else if (value == "1" || value == "true") {
      config.*field = true;
    } else if (value == "0" || value == "false" || value == "") {
      config.*field = false;
    } else {
      return "must be true or false (1 or 0)";
    }
    return std::nullopt;
  };
}

// A JSON array of strings, or (from the environment) one string of
// comma-separated entries; `check` says what is wrong with them, if anything.
std::function<std::optional<std::string>(Config&, const nlohmann::json&)> string_list(
    std::vector<std::string> Config::*field, std::string what,
    std::function<std::optional<std::string>(const std::vector<std::string>&)> check) {
  return [field, what = std::move(what), check = std::move(check)](
             Config& config, const nlohmann::json& value) -> std::optional<std::string> {
    std::vector<std::string> entries;
    if (value.is_string()) {
      std::istringstream parts(value.get<std::string>());
      for (std::string part; std::getline(parts, part, ',');) {
        part.erase(0, part.find_first_not_of(' '));
        part.erase(part.find_last_not_of(' ') + 1);
        if (!part.empty()) entries.push_back(part);
      }
    } else if (value.is_array()) {
      for (const auto& entry : value) {
        if (!entry.is_string()) return "must hold strings";
        entries.push_back(entry.get<std::string>());
      }
    } else {
      return "must be an array of " + what;
    }
    if (auto problem = check(entries)) return problem;
    config.*field = std::move(entries);
    return std::nullopt;
  };
}

// Every setting, one row each: its config-file key, its environment
// variable, its CLI flag and how its value is read and checked. The table is
// longer than a function should be because it is the list of settings, one
// line a setting, read top to bottom like docs/OPERATIONS.md's; splitting it
// would only hide some of them.
const std::vector<Setting>& settings() {
  static const std::vector<Setting> kSettings = {
      {"server.bind", "BULLETED_BIND", "bind", text(&Config::bind)},
      {"server.port", "BULLETED_PORT", "port", integer(&Config::port, 1, 65535)},
      {"server.threads", "BULLETED_THREADS", "threads", integer(&Config::threads, 1, 64)},
      {"server.shutdownGraceSeconds", "", "", integer(&Config::shutdown_grace_seconds, 0, 600)},
      {"server.trustedProxies", "BULLETED_TRUSTED_PROXIES", "",
       string_list(&Config::trusted_proxies, "addresses or CIDR ranges",
                   [](const std::vector<std::string>& entries) -> std::optional<std::string> {
                     if (auto parsed = TrustedProxies::parse(entries); !parsed) {
                       return parsed.error().message;
                     }
                     return std::nullopt;
                   })},
      {"cors.allowedOrigins", "BULLETED_CORS_ORIGINS", "",
       string_list(&Config::cors_origins, "origins",
                   [](const std::vector<std::string>& entries) -> std::optional<std::string> {
                     for (const auto& entry : entries) {
                       if (entry != "*" && entry.rfind("https://", 0) != 0 &&
                           entry.rfind("http://", 0) != 0) {
                         return "\"" + entry + "\" is not \"*\" or an http(s) origin";
                       }
                     }
                     return std::nullopt;
                   })},
      {"database.path", "BULLETED_DB", "db", text(&Config::db_path)},
      {"database.busyTimeoutMs", "", "", integer(&Config::busy_timeout_ms, 0, 600'000)},
      {"mode", "BULLETED_MODE", "mode",
       [](Config& config, const nlohmann::json& value) -> std::optional<std::string> {
         if (value == "local") {
           config.mode = Mode::kLocal;
         } else if (value == "pds") {
           config.mode = Mode::kPds;
         } else {
           return "must be one of local, pds";
         }
         return std::nullopt;
       }},
      {"firehose.url", "BULLETED_FIREHOSE", "firehose",
       optional_url(&Config::firehose_url, {"ws", "wss"})},
      {"firehose.queueFrames", "", "", integer(&Config::firehose_queue_frames, 1, 1'000'000)},
      {"firehose.maxBatchOps", "", "", integer(&Config::firehose_max_batch_ops, 1, 1'000'000)},
      {"firehose.maxBatchEvents", "", "",
       integer(&Config::firehose_max_batch_events, 1, 1'000'000)},
      {"firehose.maxBatchLatencyMs", "", "",
       integer(&Config::firehose_max_batch_latency_ms, 1, 60'000)},
      {"firehose.reconnectMinMs", "", "", integer(&Config::firehose_reconnect_min_ms, 10, 600'000)},
      {"firehose.reconnectMaxMs", "", "",
       integer(&Config::firehose_reconnect_max_ms, 10, 3'600'000)},
      {"firehose.idleTimeoutSeconds", "", "",
       integer(&Config::firehose_idle_timeout_seconds, 5, 86'400)},
      {"firehose.readyMaxLagSeconds", "", "",
       integer(&Config::firehose_ready_max_lag_seconds, 1, 86'400)},
      {"firehose.repoServiceUrl", "BULLETED_REPO_SERVICE", "pds",
       optional_url(&Config::repo_service_url, {"http", "https"})},
      {"firehose.fetchTimeoutSeconds", "", "", integer(&Config::fetch_timeout_seconds, 1, 3600)},
      {"firehose.fetchConcurrency", "", "", integer(&Config::fetch_concurrency, 1, 64)},
      {"firehose.hostRequestsPerSecond", "", "",
       integer(&Config::host_requests_per_second, 0, 100'000)},
      {"firehose.maxRepoBytes", "", "", integer(&Config::max_repo_bytes, 1024, 1LL << 40)},
      {"firehose.maxRepoRecords", "", "", integer(&Config::max_repo_records, 1, 1'000'000'000)},
      {"firehose.backfillOnStart", "BULLETED_BACKFILL_ON_START", "",
       boolean(&Config::backfill_on_start)},
      {"firehose.backfillBlocksReadiness", "", "", boolean(&Config::backfill_blocks_readiness)},
      {"service.publicUrl", "BULLETED_PUBLIC_URL", "public-url",
       optional_url(&Config::public_url, {"http", "https"})},
      {"service.did", "BULLETED_SERVICE_DID", "",
       [](Config& config, const nlohmann::json& value) -> std::optional<std::string> {
         if (value.is_null() || value == "") {
           config.service_did = std::nullopt;
           return std::nullopt;
         }
         if (!value.is_string() || !schema::Did::parse(value.get<std::string>())) {
           return "must be a DID";
         }
         config.service_did = value.get<std::string>();
         return std::nullopt;
       }},
      {"identity.plcUrl", "BULLETED_PLC", "plc", text(&Config::plc_url)},
      {"identity.handleResolver", "BULLETED_HANDLE_RESOLVER", "handle-resolver",
       optional_url(&Config::handle_resolver, {"http", "https"})},
      {"identity.cacheSeconds", "", "", integer(&Config::identity_cache_seconds, 0, 86'400 * 7)},
      {"network.allowPrivateAddresses", "BULLETED_ALLOW_PRIVATE_ADDRESSES", "",
       boolean(&Config::allow_private_addresses)},
      {"limits.maxBodyBytes", "", "", integer(&Config::max_body_bytes, 1024, 64L * 1024 * 1024)},
      {"limits.maxImportBytes", "", "",
       integer(&Config::max_import_bytes, 1024, 1024L * 1024 * 1024)},
      {"limits.procedureRatePerMinute", "BULLETED_PROCEDURE_RATE", "",
       integer(&Config::procedure_rate_per_minute, 0, 1'000'000)},
      {"limits.queryBytesPerMinute", "BULLETED_QUERY_BYTES", "",
       integer(&Config::query_bytes_per_minute, 0, 1L << 40)},
      {"limits.signInPerMinute", "", "", integer(&Config::sign_in_per_minute, 0, 1'000'000)},
      {"limits.signInPerAccountPerMinute", "", "",
       integer(&Config::sign_in_per_account_per_minute, 0, 1'000'000)},
      {"limits.maxConcurrentExports", "", "", integer(&Config::max_concurrent_exports, 1, 64)},
      {"limits.maxConcurrentSearches", "", "", integer(&Config::max_concurrent_searches, 0, 64)},
      {"limits.searchRowsPerRequest", "", "",
       integer(&Config::search_rows_per_request, 100, 10'000'000)},
      {"limits.outboundFetches", "", "", integer(&Config::outbound_fetches, 0, 64)},
      {"limits.streamsPerClient", "", "", integer(&Config::streams_per_client, 1, 1024)},
      {"limits.maxStreams", "BULLETED_MAX_STREAMS", "",
       [](Config& config, const nlohmann::json& value) -> std::optional<std::string> {
         if (value.is_null()) {  // the default, fitted to the open-files limit
           config.max_streams = Config{}.max_streams;
           config.max_streams_set = false;
           return std::nullopt;
         }
         auto problem = integer(&Config::max_streams, 1, 1'000'000)(config, value);
         if (!problem) config.max_streams_set = true;
         return problem;
       }},
      {"limits.streamBufferBytes", "", "",
       integer(&Config::stream_buffer_bytes, 4 * 1024, 64L * 1024 * 1024)},
      {"limits.streamStallSeconds", "", "", integer(&Config::stream_stall_seconds, 1, 3600)},
      {"limits.streamBufferTotalBytes", "", "",
       integer(&Config::stream_buffer_total_bytes, 64 * 1024, 64L * 1024 * 1024 * 1024)},
      {"limits.connectionsPerAddress", "", "",
       integer(&Config::connections_per_address, 1, 1'000'000)},
      {"limits.maxConnections", "", "", integer(&Config::max_connections, 0, 10'000'000)},
      {"limits.maxAnswerBytes", "", "",
       integer(&Config::max_answer_bytes, 16 * 1024, 64L * 1024 * 1024)},
      {"log.level", "BULLETED_LOG_LEVEL", "log-level",
       text(&Config::log_level, {"trace", "debug", "info", "warn", "error"})},
      {"log.format", "BULLETED_LOG_FORMAT", "log-format",
       text(&Config::log_format, {"text", "json"})},
      {"auth.sessionKey", "BULLETED_SESSION_KEY", "",
       [](Config& config, const nlohmann::json& value) -> std::optional<std::string> {
         if (value.is_null()) return std::nullopt;
         if (!value.is_string() || value.get<std::string>().size() < 32) {
           return "must be a string of at least 32 characters";
         }
         config.session_key = value.get<std::string>();
         return std::nullopt;
       }},
      {"auth.localServiceAuth", "BULLETED_LOCAL_SERVICE_AUTH", "",
       [](Config& config, const nlohmann::json& value) -> std::optional<std::string> {
         if (value == "off" || value == "") {
           config.local_service_auth.clear();
           return std::nullopt;
         }
         if (value == "any") {
           config.local_service_auth = {"any"};
           return std::nullopt;
         }
         const auto dids =
             string_list(&Config::local_service_auth, "DIDs",
                         [](const std::vector<std::string>& entries) -> std::optional<std::string> {
                           for (const auto& entry : entries) {
                             if (!schema::Did::parse(entry))
                               return "\"" + entry + "\" is not a DID";
                           }
                           return std::nullopt;
                         });
         if (auto problem = dids(config, value)) return "must be off, any or DIDs: " + *problem;
         return std::nullopt;
       }},
      {"auth.allowPasswordSessions", "BULLETED_ALLOW_PASSWORD_SESSIONS", "",
       boolean(&Config::allow_password_sessions)},
      {"auth.oauthKeyFile", "BULLETED_OAUTH_KEY_FILE", "",
       [](Config& config, const nlohmann::json& value) -> std::optional<std::string> {
         if (value.is_null() || value == "") {
           config.oauth_key_file = std::nullopt;
         } else if (value.is_string()) {
           config.oauth_key_file = value.get<std::string>();
         } else {
           return "must be a file path";
         }
         return std::nullopt;
       }},
  };
  return kSettings;
}

const nlohmann::json* lookup(const nlohmann::json& root, const std::string& dotted) {
  const nlohmann::json* node = &root;
  std::istringstream parts(dotted);
  for (std::string part; std::getline(parts, part, '.');) {
    if (!node->is_object() || !node->contains(part)) return nullptr;
    node = &(*node)[part];
  }
  return node;
}

// Keys of the file that no setting reads (comments start with '_').
void unknown_keys(const nlohmann::json& node, const std::string& prefix,
                  std::set<std::string>& known, std::vector<std::string>& out) {
  for (const auto& [key, value] : node.items()) {
    if (!key.empty() && key[0] == '_') continue;
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (known.contains(path)) continue;
    if (value.is_object()) {
      unknown_keys(value, path, known, out);
    } else {
      out.push_back(path);
    }
  }
}

}  // namespace

std::vector<std::string> config_flags() {
  std::vector<std::string> flags;
  for (const auto& setting : settings()) {
    if (!setting.flag.empty()) flags.push_back(setting.flag);
  }
  return flags;
}

Result<Config> load_config(const std::optional<std::string>& config_file, const FlagLookup& flag) {
  Config config;
  std::optional<std::string> file = config_file;
  if (!file) {
    if (const char* env = std::getenv("BULLETED_CONFIG"); env != nullptr && *env != '\0')
      file = env;
  }
  if (file) {
    std::ifstream in(*file);
    if (!in) return std::unexpected(bad("cannot read the configuration file " + *file));
    nlohmann::json root = nlohmann::json::parse(in, nullptr, false);
    if (root.is_discarded() || !root.is_object()) {
      return std::unexpected(bad("the configuration file " + *file + " is not a JSON object"));
    }
    std::set<std::string> known;
    for (const auto& setting : settings()) {
      known.insert(setting.file_key);
      if (const nlohmann::json* value = lookup(root, setting.file_key)) {
        if (auto problem = setting.set(config, *value)) {
          return std::unexpected(bad(*file + ": " + setting.file_key + " " + *problem));
        }
      }
    }
    std::vector<std::string> unknown;
    unknown_keys(root, "", known, unknown);
    if (!unknown.empty()) {
      return std::unexpected(bad(*file + ": unknown key " + unknown.front()));
    }
  }
  for (const auto& setting : settings()) {
    if (setting.env.empty()) continue;
    if (const char* value = std::getenv(setting.env.c_str()); value != nullptr) {
      if (auto problem = setting.set(config, nlohmann::json(value))) {
        return std::unexpected(bad(setting.env + " " + *problem));
      }
    }
  }
  for (const auto& setting : settings()) {
    if (setting.flag.empty()) continue;
    if (auto value = flag(setting.flag)) {
      if (auto problem = setting.set(config, nlohmann::json(*value))) {
        return std::unexpected(bad("--" + setting.flag + " " + *problem));
      }
    }
  }
  if (config.firehose_reconnect_max_ms < config.firehose_reconnect_min_ms) {
    return std::unexpected(bad("firehose.reconnectMaxMs is below firehose.reconnectMinMs"));
  }
  if (config.public_url) {
    // An origin: scheme://host[:port], nothing after it.
    std::string& url = *config.public_url;
    while (!url.empty() && url.back() == '/') url.pop_back();
    const std::size_t host_start = url.find("://") + 3;
    if (url.find('/', host_start) != std::string::npos || host_start >= url.size()) {
      return std::unexpected(bad("service.publicUrl must be an origin (scheme://host[:port])"));
    }
    if (!config.service_did) {
      // did:web names a host only: its document is at https://<host>/.well-known/did.json.
      std::string host = url.substr(host_start);
      if (const std::size_t colon = host.rfind(':');
          colon != std::string::npos && host.find(']') == std::string::npos) {
        host.resize(colon);
      }
      if (!schema::Did::parse("did:web:" + host)) {
        return std::unexpected(
            bad("service.did cannot be derived from service.publicUrl's host; set it"));
      }
      config.service_did = "did:web:" + host;
    }
  }
  return config;
}

int outbound_fetch_places(const Config& config) {
  const int half = std::max(1, config.threads / 2);
  return config.outbound_fetches <= 0 ? half : std::min(config.outbound_fetches, half);
}

int search_places(const Config& config) {
  const int quarter = std::max(1, config.threads / 4);
  return config.max_concurrent_searches <= 0 ? quarter
                                             : std::min(config.max_concurrent_searches, quarter);
}

bool local_service_auth_allows(const Config& config, const std::string& did) {
  for (const auto& entry : config.local_service_auth) {
    if (entry == "any" || entry == did) return true;
  }
  return false;
}

nlohmann::json to_json(const Config& c, bool redact) {
  auto optional = [](const std::optional<std::string>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json();
  };
  nlohmann::json session_key =
      c.session_key ? nlohmann::json(redact ? "<redacted>" : *c.session_key) : nlohmann::json();
  return {
      {"server",
       {{"bind", c.bind},
        {"port", c.port},
        {"threads", c.threads},
        {"shutdownGraceSeconds", c.shutdown_grace_seconds},
        {"trustedProxies", c.trusted_proxies}}},
      {"cors", {{"allowedOrigins", c.cors_origins}}},
      {"service", {{"publicUrl", optional(c.public_url)}, {"did", optional(c.service_did)}}},
      {"database", {{"path", c.db_path}, {"busyTimeoutMs", c.busy_timeout_ms}}},
      {"mode", to_string(c.mode)},
      {"firehose",
       {{"url", optional(c.firehose_url)},
        {"queueFrames", c.firehose_queue_frames},
        {"maxBatchOps", c.firehose_max_batch_ops},
        {"maxBatchEvents", c.firehose_max_batch_events},
        {"maxBatchLatencyMs", c.firehose_max_batch_latency_ms},
        {"reconnectMinMs", c.firehose_reconnect_min_ms},
        {"reconnectMaxMs", c.firehose_reconnect_max_ms},
        {"idleTimeoutSeconds", c.firehose_idle_timeout_seconds},
        {"readyMaxLagSeconds", c.firehose_ready_max_lag_seconds},
        {"repoServiceUrl", optional(c.repo_service_url)},
        {"fetchTimeoutSeconds", c.fetch_timeout_seconds},
        {"fetchConcurrency", c.fetch_concurrency},
        {"hostRequestsPerSecond", c.host_requests_per_second},
        {"maxRepoBytes", c.max_repo_bytes},
        {"maxRepoRecords", c.max_repo_records},
        {"backfillOnStart", c.backfill_on_start},
        {"backfillBlocksReadiness", c.backfill_blocks_readiness}}},
      {"identity",
       {{"plcUrl", c.plc_url},
        {"handleResolver", optional(c.handle_resolver)},
        {"cacheSeconds", c.identity_cache_seconds}}},
      {"network", {{"allowPrivateAddresses", c.allow_private_addresses}}},
      {"limits",
       {{"maxBodyBytes", c.max_body_bytes},
        {"maxImportBytes", c.max_import_bytes},
        {"procedureRatePerMinute", c.procedure_rate_per_minute},
        {"queryBytesPerMinute", c.query_bytes_per_minute},
        {"signInPerMinute", c.sign_in_per_minute},
        {"signInPerAccountPerMinute", c.sign_in_per_account_per_minute},
        {"maxConcurrentExports", c.max_concurrent_exports},
        {"maxConcurrentSearches", c.max_concurrent_searches},
        {"searchRowsPerRequest", c.search_rows_per_request},
        {"outboundFetches", c.outbound_fetches},
        {"streamsPerClient", c.streams_per_client},
        {"maxStreams", c.max_streams},
        {"streamBufferBytes", c.stream_buffer_bytes},
        {"streamStallSeconds", c.stream_stall_seconds},
        {"streamBufferTotalBytes", c.stream_buffer_total_bytes},
        {"connectionsPerAddress", c.connections_per_address},
        {"maxConnections", c.max_connections},
        {"maxAnswerBytes", c.max_answer_bytes}}},
      {"log", {{"level", c.log_level}, {"format", c.log_format}}},
      {"auth",
       {{"sessionKey", session_key},
        {"localServiceAuth", c.local_service_auth.empty()
                                 ? nlohmann::json("off")
                                 : (c.local_service_auth == std::vector<std::string>{"any"}
                                        ? nlohmann::json("any")
                                        : nlohmann::json(c.local_service_auth))},
        {"allowPasswordSessions", c.allow_password_sessions},
        {"oauthKeyFile", optional(c.oauth_key_file)}}},
  };
}

}  // namespace bulleted::appview
