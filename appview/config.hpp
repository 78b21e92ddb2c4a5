// The app view's configuration: defaults, then a JSON file, then environment
// variables, then command-line flags (each overrides the one before).
// config/appview.example.json documents every key.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "schema/error.hpp"

namespace bulleted::appview {

// Where records are written: kLocal, the app view is the record store (the
// embedded default); kPds, the owners' PDSes through their sessions.
enum class Mode { kLocal, kPds };
std::string_view to_string(Mode mode);

struct Config {
  // server
  std::string bind = "127.0.0.1";
  int port = 2584;
  int threads = 4;
  int shutdown_grace_seconds = 10;
  // peers whose X-Forwarded-For / X-Real-IP name the client (addresses or CIDR)
  std::vector<std::string> trusted_proxies;
  // database
  std::string db_path = "data/bulleted.db";
  int busy_timeout_ms = 5000;
  Mode mode = Mode::kLocal;
  // firehose
  std::optional<std::string> firehose_url;
  int firehose_queue_frames = 1000;
  int firehose_max_batch_ops = 5000;
  int firehose_max_batch_events = 1000;
  int firehose_max_batch_latency_ms = 200;
  int firehose_reconnect_min_ms = 500;
  int firehose_reconnect_max_ms = 60'000;
  int firehose_idle_timeout_seconds = 120;
  int firehose_ready_max_lag_seconds = 60;
  // the app view's own identity: where the network reaches it, and its DID
  // (default did:web:<host of public_url>), served at /.well-known/did.json
  std::optional<std::string> public_url;
  std::optional<std::string> service_did;
  // the XRPC service getRepo is fetched from for resyncs and backfill
  std::optional<std::string> repo_service_url;
  int fetch_timeout_seconds = 60;
  // identity
  std::string plc_url = "https://plc.directory";
  std::optional<std::string> handle_resolver;
  // Addresses from the network (PDS endpoints, redirects) may be http and
  // private (test networks on 127.0.0.1); off in production.
  bool allow_private_addresses = false;
  int identity_cache_seconds = 3600;
  // Origins whose pages may call the XRPC routes ("*": any, without
  // credentials)
  std::vector<std::string> cors_origins = {"*"};
  int fetch_concurrency = 4;
  // getRepo requests a second to any one host (0: no limit)
  int host_requests_per_second = 10;
  std::int64_t max_repo_bytes = 512LL * 1024 * 1024;
  std::int64_t max_repo_records = 1'000'000;
  bool backfill_on_start = true;
  bool backfill_blocks_readiness = true;
  // limits
  std::size_t max_body_bytes = 1024 * 1024;
  std::size_t max_import_bytes = 50 * 1024 * 1024;
  int procedure_rate_per_minute = 600;
  std::int64_t query_bytes_per_minute = 64LL * 1024 * 1024;
  int sign_in_per_minute = 30;
  int sign_in_per_account_per_minute = 10;
  int max_concurrent_exports = 2;
  // Searches (searchNodes) running at once; as many more may wait briefly
  // for a place, the rest are 429. 0 is a quarter of the workers, and no
  // setting gives them more (running and waiting, at most half).
  int max_concurrent_searches = 0;
  // The candidate rows one search request may examine (index rows, nodes,
  // steps up to ancestors): a page stops there, short, with a cursor.
  int search_rows_per_request = 20'000;
  // Requests waiting on other hosts at once (identity, sign-in, service-auth
  // keys): 0 is half the workers, and no setting may give them more.
  int outbound_fetches = 0;
  // Change streams (streamChanges): per client (past it, the client's
  // oldest ends), in total (the open-files limit is raised to fit; set
  // explicitly, a total that cannot fit refuses to start, else it is lowered
  // with a warning), the bytes a stream may keep queued, and how long past
  // them before it is closed.
  int streams_per_client = 8;
  int max_streams = 10'000;
  bool max_streams_set = false;
  std::size_t stream_buffer_bytes = 256 * 1024;
  int stream_stall_seconds = 30;
  // What every stream together may keep queued: past it, the streams
  // keeping the most past their own bound are closed first.
  std::size_t stream_buffer_total_bytes = 64 * 1024 * 1024;
  // Connections to the HTTP front: from one address (an IPv6 /64; the
  // trusted proxies are exempt), and in all (0: what the open-files limit
  // leaves); the last few of all only answer health and the operators.
  int connections_per_address = 256;
  int max_connections = 0;
  // The largest answer of a page (getChildren, getWindow, getChanges,
  // getAncestors): a page stops short of it, with a cursor where it has one.
  std::size_t max_answer_bytes = 1024 * 1024;
  // logging: level trace|debug|info|warn|error, format text|json
  std::string log_level = "info";
  std::string log_format = "text";
  // auth: key that encrypts PDS sessions at rest (pds mode); a secret
  std::optional<std::string> session_key;
  // Service-auth writes in local mode: "off" (empty, the default), "any", or
  // the DIDs allowed, so that the network cannot fill a local instance.
  std::vector<std::string> local_service_auth;
  // app.bulleted.createSession with an app password (pds mode; bots, CLI)
  bool allow_password_sessions = false;
  // The OAuth client's signing keys (a JWKS of private P-256 JWKs); unset:
  // one generated at first start, kept sealed in the database.
  std::optional<std::string> oauth_key_file;
};

// The places of the outbound gate (limits.outboundFetches): at least one,
// at most half of server.threads.
int outbound_fetch_places(const Config& config);
// The searches that may run at once (limits.maxConcurrentSearches, bounded
// by a quarter of server.threads, at least 1).
int search_places(const Config& config);

// Whether a caller proven by service auth may write `did`'s repo in local
// mode (auth.localServiceAuth).
bool local_service_auth_allows(const Config& config, const std::string& did);

// The value of `--NAME` when the command line gives it.
using FlagLookup = std::function<std::optional<std::string>(const std::string& name)>;

// The flags (names without "--") that set a configuration key; every
// subcommand that reads the configuration accepts them and `--config FILE`.
std::vector<std::string> config_flags();

// Builds the configuration from `file` (or BULLETED_CONFIG), the
// environment and the flags. Errors name the key and the problem.
Result<Config> load_config(const std::optional<std::string>& file, const FlagLookup& flag);

// The configuration as JSON, secrets replaced by "<redacted>" when `redact`.
nlohmann::json to_json(const Config& config, bool redact);

}  // namespace bulleted::appview
