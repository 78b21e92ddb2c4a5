#include "appview/cli/serve_command.hpp"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <ostream>
#include <variant>

#include "appview/cli/args.hpp"
#include "appview/cli/common.hpp"
#include "appview/config.hpp"
#include "appview/http/server.hpp"
#include "appview/imports/job_sinks.hpp"
#include "appview/logging.hpp"
#include "appview/xrpc/api.hpp"
#include "appview/xrpc/faults.hpp"
#include "appview/xrpc/views.hpp"
#include "appview/xrpc/xrpc.hpp"
#include "firehose/cid.hpp"
#include "firehose/client/xrpc_client.hpp"
#include "firehose/consumer/consumer.hpp"
#include "firehose/consumer/http_fetcher.hpp"
#include "schema/store.hpp"

namespace bulleted::cli {
namespace {

identity::IdentityOptions identity_options(const appview::Config& config) {
  identity::IdentityOptions options;
  options.plc_url = config.plc_url;
  options.handle_resolver = config.handle_resolver;
  options.cache_ttl = std::chrono::seconds(config.identity_cache_seconds);
  options.allow_private_addresses = config.allow_private_addresses;
  return options;
}

firehose::ConsumerOptions consumer_options(const appview::Config& config) {
  firehose::ConsumerOptions options;
  options.url = *config.firehose_url;
  options.db_path = config.db_path;
  options.store.busy_timeout_ms = config.busy_timeout_ms;
  options.ingest.max_batch_ops = static_cast<std::size_t>(config.firehose_max_batch_ops);
  options.ingest.max_batch_events = static_cast<std::size_t>(config.firehose_max_batch_events);
  options.queue_frames = static_cast<std::size_t>(config.firehose_queue_frames);
  options.max_batch_latency = std::chrono::milliseconds(config.firehose_max_batch_latency_ms);
  options.reconnect_min = std::chrono::milliseconds(config.firehose_reconnect_min_ms);
  options.reconnect_max = std::chrono::milliseconds(config.firehose_reconnect_max_ms);
  options.session.idle_timeout = std::chrono::seconds(config.firehose_idle_timeout_seconds);
  options.repo_service_url = config.repo_service_url.value_or("");
  options.fetch_timeout = std::chrono::seconds(config.fetch_timeout_seconds);
  options.identity = identity_options(config);
  options.fetch_concurrency = config.fetch_concurrency;
  options.host_requests_per_second = config.host_requests_per_second;
  options.max_repo_bytes = static_cast<std::size_t>(config.max_repo_bytes);
  options.ingest.max_repo_records = static_cast<std::size_t>(config.max_repo_records);
  options.backfill_on_start = config.backfill_on_start;
  return options;
}

// Before any thread exists: SIGINT/SIGTERM are waited for with sigwait on
// this thread, and a closed socket never kills the process.
sigset_t prepare_process() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  // A file-size limit reached (RLIMIT_FSIZE) is a write error SQLite reports
  // as a full disk, not the end of the process.
  signal(SIGXFSZ, SIG_IGN);
  // Every connection is a descriptor: take all the process may have (the
  // soft limit is often 1,024; running out makes the accept loop spin).
  if (rlimit files{}; getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    (void)setrlimit(RLIMIT_NOFILE, &files);
  }
  return signals;
}

// The change streams' limits, their total fitted to the open-files limit
// (raised to the hard limit at start): each stream is a descriptor, and the
// rest of the server keeps kOtherFiles. nullopt when limits.maxStreams was
// set explicitly and cannot fit.
std::optional<appview::StreamLimits> stream_limits(const appview::Config& config) {
  constexpr std::size_t kOtherFiles = 1024;
  appview::StreamLimits limits;
  limits.per_client = static_cast<std::size_t>(config.streams_per_client);
  limits.total = static_cast<std::size_t>(config.max_streams);
  limits.buffer_bytes = config.stream_buffer_bytes;
  limits.stall = std::chrono::seconds(config.stream_stall_seconds);
  limits.total_buffer_bytes = config.stream_buffer_total_bytes;
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_cur == RLIM_INFINITY) return limits;
  const auto fits = files.rlim_cur > kOtherFiles ? files.rlim_cur - kOtherFiles : 1;
  if (limits.total <= fits) return limits;
  if (config.max_streams_set) {
    spdlog::error(
        "limits.maxStreams is {}, but the open-files limit ({}) leaves room for {} streams: raise "
        "it (LimitNOFILE, ulimit -n) or lower limits.maxStreams",
        limits.total, files.rlim_cur, fits);
    return std::nullopt;
  }
  spdlog::warn(
      "the open-files limit ({}) leaves room for {} change streams, not {}: limits.maxStreams "
      "lowered to fit (raise LimitNOFILE for more)",
      files.rlim_cur, fits, limits.total);
  limits.total = fits;
  return limits;
}

// Change streams, following every commit of this process (and, by
// polling, of others on the same file); null when they cannot start.
std::unique_ptr<appview::ChangeStreams> start_streams(const appview::Config& config) {
  auto limits = stream_limits(config);
  if (!limits) return nullptr;
  auto streams = std::make_unique<appview::ChangeStreams>(config.db_path, config.busy_timeout_ms,
                                                          *limits, appview::write_change);
  if (auto r = streams->start(); !r) {
    spdlog::error("cannot follow the index for change streams: {}", r.error().message);
    return nullptr;
  }
  return streams;
}

// The configuration, the log it asks for, and the index opened (its
// migrations applied before anything else uses the file).
struct Setup {
  std::optional<appview::Config> config;
  std::unique_ptr<schema::Store> store;
};
std::variant<Setup, int> set_up(const std::vector<std::string>& argv, std::ostream& err) {
  auto args = parse_args(argv, config_arg_spec());
  if (!args) {
    err << "error: " << args.error() << "\n";
    return 2;
  }
  Setup setup;
  setup.config = load_config_or_report(*args, err);
  if (!setup.config) return 2;
  const appview::Config& config = *setup.config;
  appview::configure_logging(config.log_level, config.log_format);
  spdlog::info("bulleted-appview {} starting with {}", appview::kVersion,
               appview::to_json(config, true).dump());
  // OpenSSL initialises itself on first use and leaves that state with the
  // thread that did it: let it be this one, which ends cleanly, rather than a
  // pool thread that never does.
  (void)firehose::sha256("");
  // Before any other cpprest use: a small pool serves the websocket sessions.
  firehose::init_cpprest_threads(2);
  setup.store = open_store_or_report(config, err);
  if (!setup.store) return 1;
  spdlog::info("database {} at schema version {}", config.db_path, schema::Store::schema_version());
  return setup;
}

// What pds mode adds: sessions on users' PDSes (and the client that reaches
// them) and, with a public URL, the OAuth client that signs users in.
struct PdsParts {
  std::shared_ptr<firehose::XrpcClient> client;
  std::unique_ptr<appview::PdsServices> pds;
  std::unique_ptr<appview::OAuthClient> oauth;
};

// pds mode's parts (none in local mode), or the exit status of a refusal.
std::variant<PdsParts, int> start_pds_mode(const appview::Config& config, schema::Store& store,
                                           identity::IdentityResolver& identity,
                                           std::shared_ptr<identity::Fetcher> fetcher,
                                           firehose::WrittenRevs& written, std::ostream& err) {
  PdsParts parts;
  if (config.mode != appview::Mode::kPds) return parts;
  if (!config.session_key || config.session_key->size() < 32) {
    err << "error: pds mode needs auth.sessionKey (BULLETED_SESSION_KEY), a secret of at least "
           "32 characters that encrypts PDS sessions at rest\n";
    return 2;
  }
  // Users' own PDSes: writes, and a whole repo when a write finds it changed.
  parts.client = firehose::make_http_xrpc_client(std::chrono::seconds(config.fetch_timeout_seconds),
                                                 static_cast<std::size_t>(config.max_repo_bytes));
  parts.pds = std::make_unique<appview::PdsServices>(
      parts.client, identity, appview::SecretBox(*config.session_key), written);
  if (!config.public_url) {
    spdlog::info("oauth: off (set service.publicUrl to sign users in with OAuth)");
    return parts;
  }
  // The app view signs users in as a confidential client and writes with
  // their grants.
  auto keys = appview::load_client_keys(config.oauth_key_file, store,
                                        appview::SecretBox(*config.session_key));
  if (!keys) {
    err << "error: " << keys.error().message << "\n";
    return 2;
  }
  parts.oauth = std::make_unique<appview::OAuthClient>(
      appview::OAuthClientOptions{.public_url = *config.public_url,
                                  .allow_private_addresses = config.allow_private_addresses},
      std::move(*keys), std::move(fetcher), parts.client, identity,
      appview::SecretBox(*config.session_key));
  parts.pds->sessions.use_oauth(parts.oauth.get());
  spdlog::info("oauth: client {}", parts.oauth->client_id());
  return parts;
}

// The firehose consumer, started (null when it cannot start).
std::unique_ptr<firehose::FirehoseConsumer> start_consumer(const appview::Config& config,
                                                           firehose::WrittenRevs& written,
                                                           firehose::FirehoseMetrics& metrics,
                                                           appview::ChangeStreams& streams) {
  auto options = consumer_options(config);
  options.ingest.written = &written;
  options.store.on_commit = [&streams](const schema::CommitNotice& notice) {
    streams.committed(notice);
  };
  auto consumer = std::make_unique<firehose::FirehoseConsumer>(options, metrics);
  if (auto r = consumer->start(); !r) {
    spdlog::error("cannot start the firehose consumer: {}", r.error().message);
    return nullptr;
  }
  return consumer;
}

// The end-to-end tests' fault injection (appview/xrpc/faults.hpp), behind
// its one switch: it decorates the writes' services here and the handler
// where the server is made. Null when off.
std::unique_ptr<appview::InjectedFaults> fault_injection(appview::AppContext& context,
                                                         const PdsParts& parts) {
  const char* on = std::getenv("BULLETED_FAULT_INJECTION");
  if (on == nullptr || std::string(on) != "1") return nullptr;
  spdlog::warn("fault injection is on (BULLETED_FAULT_INJECTION=1): never in production");
  auto faults = std::make_unique<appview::InjectedFaults>(
      context.writes(), parts.pds ? &parts.pds->sessions : nullptr);
  context.services.writes = faults.get();
  return faults;
}

// The HTTP front's options, calling `api` (and counting waits in `metrics`).
appview::HttpServerOptions http_options(const appview::Config& config, appview::Api& api,
                                        appview::RequestMetrics& metrics,
                                        const appview::TrustedProxies& proxies) {
  appview::HttpServerOptions http;
  http.bind = config.bind;
  http.port = config.port;
  http.workers = config.threads;
  http.default_body_limit = config.max_body_bytes;
  http.admit = [&api](const appview::HttpRequestHead& head) { return api.admit(head); };
  http.refusal = [](const Error& error) { return appview::error_response(error); };
  http.decorate = [&api](const appview::HttpRequestHead& head, appview::HttpResponse& response) {
    api.decorate(head, response);
  };
  http.waited = [&metrics](appview::Lane lane, double seconds) {
    metrics.record_wait(lane == appview::Lane::kOperators  ? "operators"
                        : lane == appview::Lane::kStreams  ? "streams"
                        : lane == appview::Lane::kSearches ? "searches"
                                                           : "requests",
                        seconds);
  };
  // Searches run in their own lane, as many at once as they may, four
  // waiting each (a client's next search arrives before the worker that
  // answered its last has taken up the one queued behind it); the rest are
  // refused at once (429), counted as the searches' own refusals are.
  http.search_workers = appview::search_places(config);
  http.max_searches_queued = 4 * static_cast<std::size_t>(appview::search_places(config));
  // Of those, one client address may hold two (one running, the next
  // waiting: a typing user's): one address cannot take the lane.
  http.searches_per_client = 2;
  http.overflowed = [&metrics](appview::Lane lane) {
    if (lane == appview::Lane::kSearches) ++metrics.search_refused;
  };
  http.connections_per_address = static_cast<std::size_t>(config.connections_per_address);
  http.max_connections = static_cast<std::size_t>(config.max_connections);
  // The operator's own proxies carry everyone's connections.
  http.uncapped = [&proxies](const std::string& remote) { return proxies.contains(remote); };
  return http;
}

}  // namespace

int run_serve_command(const std::vector<std::string>& argv, std::ostream& /*out*/,
                      std::ostream& err) {
  sigset_t signals = prepare_process();
  auto set = set_up(argv, err);
  if (auto* status = std::get_if<int>(&set)) return *status;
  auto& [config, store] = std::get<Setup>(set);
  auto started_streams = start_streams(*config);
  if (!started_streams) return 1;
  appview::ChangeStreams& streams = *started_streams;
  auto told = [&streams](const schema::CommitNotice& notice) { streams.committed(notice); };

  // Every fetch a request makes to a host the network (or a caller) names
  // goes through one fetcher: caps and timeouts per kind, the network
  // policy, failures remembered, and a gate that never lets waits on other
  // hosts take more than half of the request workers.
  identity::FetchGate outbound(appview::outbound_fetch_places(*config));
  auto fetcher =
      firehose::make_http_fetcher({.allow_private_addresses = config->allow_private_addresses});
  identity::IdentityResolver identity(fetcher, identity_options(*config));

  // pds mode: the revs written through users' sessions (the consumer skips
  // their firehose echoes).
  firehose::WrittenRevs written;
  auto started = start_pds_mode(*config, *store, identity, fetcher, written, err);
  if (auto* status = std::get_if<int>(&started)) return *status;
  PdsParts parts = std::move(std::get<PdsParts>(started));

  firehose::FirehoseMetrics metrics;
  std::unique_ptr<firehose::FirehoseConsumer> consumer;
  if (config->firehose_url) {
    consumer = start_consumer(*config, written, metrics, streams);
    if (!consumer) return 1;
  } else {
    spdlog::info("no firehose configured (firehose.url, --firehose): not following the network");
  }

  appview::AppContext context(*config);
  context.on_commit = told;
  // Health and readiness answer from what this thread last read, at once.
  appview::DatabaseProbe database(config->db_path, config->busy_timeout_ms);
  database.start();
  // Imports run on a thread of their own, resuming unfinished jobs.
  appview::ImportRunner imports(config->db_path, config->busy_timeout_ms,
                                [&](schema::Store& store, const schema::ImportJobRow& job) {
                                  return appview::job_sink_for(store, job, parts.pds.get(),
                                                               context.clock);
                                });
  imports.use_locks(&context.locks);
  imports.on_commit(told);
  imports.start();
  // Service auth: JWTs for this app view's DID, keys from the same resolver.
  std::unique_ptr<appview::ServiceAuth> service_auth;
  if (config->service_did) {
    service_auth = std::make_unique<appview::ServiceAuth>(
        appview::ServiceAuthOptions{.service_did = *config->service_did}, identity);
    spdlog::info("service auth: accepting JWTs for {}", *config->service_did);
  }
  // com.atproto.identity.resolveHandle, sign-ins and service auth share the
  // resolver (one cache) and its fetcher's gate.
  context.services = {.firehose = consumer ? &metrics : nullptr,
                      .pds = parts.pds.get(),
                      .imports = &imports,
                      .identity = &identity,
                      .outbound = &outbound,
                      .database = &database,
                      .service_auth = service_auth.get(),
                      .oauth = parts.oauth.get(),
                      .streams = &streams};
  // What a client reads through change streams counts against its query
  // bytes (limits.queryBytesPerMinute), as getChanges' pages do: history
  // whole (a page past what is left is owed, so its streams read no further
  // until the budget has refilled past the debt), live changes from what is
  // left.
  streams.set_charge([&context](const std::string& client, std::size_t bytes,
                                bool history) -> std::size_t {
    constexpr std::string_view kAddress = "address ";
    const auto key = appview::ClientKey::address(
        client.starts_with(kAddress) ? client.substr(kAddress.size()) : client);
    if (history) {
      return static_cast<std::size_t>(context.query_limits.spend(key, static_cast<double>(bytes)));
    }
    const auto grant = context.query_limits.take_up_to(key, static_cast<double>(bytes));
    return grant.wait ? 0 : static_cast<std::size_t>(grant.units);
  });
  auto faults = fault_injection(context, parts);
  appview::Api api(context);
  appview::HttpHandler handler = [&api](const appview::HttpRequest& request) {
    return api.handle(request);
  };
  if (faults) handler = faults->decorate(std::move(handler));
  appview::HttpServer server(http_options(*config, api, context.metrics, context.proxies),
                             std::move(handler));
  context.in_flight = [&server] { return server.in_flight(); };
  context.front = [&server] { return server.counters(); };
  context.give_way = [&server](std::chrono::microseconds allowance) {
    return server.give_way(allowance);
  };
  if (auto r = server.start(); !r) {
    spdlog::error("{}", r.error().message);
    if (consumer) consumer->stop();
    return 1;
  }
  spdlog::info("listening on http://{}:{} ({} mode)", config->bind, config->port,
               appview::to_string(config->mode));
  // A newcomer's first outline, told where they look first.
  if (config->mode == appview::Mode::kLocal && store->read().node_count().value_or(1) == 0) {
    spdlog::info(
        "getting started: this index holds no outline yet. Make a token for the DID you write "
        "as: bulleted-appview token create --did did:plc:... --db {}; open http://{}:{}/, paste "
        "the token into the token field and press Sign in; then open your DID and press New "
        "bullet, or Import… a WorkFlowy OPML export",
        config->db_path, config->bind == "0.0.0.0" ? "127.0.0.1" : config->bind, config->port);
  }

  int received = 0;
  sigwait(&signals, &received);
  spdlog::info("received {}, shutting down", received == SIGTERM ? "SIGTERM" : "SIGINT");
  // Streams end first (each told ServerShutdown), then requests stop
  // coming and in-flight writes finish, then the firehose (which commits
  // its cursor).
  streams.stop();
  server.stop(std::chrono::seconds(config->shutdown_grace_seconds));
  imports.stop();
  if (consumer) consumer->stop();
  database.stop();
  spdlog::info("stopped");
  return 0;
}

}  // namespace bulleted::cli
