// The XRPC API and the operators' endpoints: one handler for every request
// the HTTP server receives. Queries are public; procedures need a bearer
// token for the repo they write (local mode).
//
// Thread-safe: each worker thread uses its own SQLite connection; writes to
// one sibling group are serialized by the group locks.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <string_view>

#include "appview/config.hpp"
#include "appview/http/server.hpp"
#include "appview/import_jobs.hpp"
#include "appview/pds_sink.hpp"
#include "appview/placement.hpp"
#include "appview/rate_limiter.hpp"
#include "appview/request_metrics.hpp"
#include "firehose/metrics.hpp"
#include "ordering/tid.hpp"
#include "schema/store.hpp"

namespace bulleted::appview {

inline constexpr std::string_view kVersion = "0.1.0";

// What pds mode adds: identity, sessions, and the repo heads and revs this
// app view wrote (shared with the firehose consumer).
struct PdsServices {
  PdsServices(std::shared_ptr<firehose::XrpcClient> client, IdentityOptions identity_options,
              SecretBox box, firehose::WrittenRevs& written_revs)
      : identity(client, std::move(identity_options)),
        sessions(client, identity, std::move(box)),
        written(written_revs) {}
  IdentityResolver identity;
  PdsSessions sessions;
  RepoHeads heads;
  firehose::WrittenRevs& written;
};

struct AppContext {
  explicit AppContext(const Config& c) : config(c), procedure_limits(c.procedure_rate_per_minute) {}
  const Config& config;
  RateLimiter procedure_limits;  // per client, on procedures
  GroupLocks locks;
  ordering::TidClock clock;
  RequestMetrics metrics;
  const firehose::FirehoseMetrics* firehose = nullptr;  // null without a firehose
  PdsServices* pds = nullptr;                           // null in local mode
  ImportRunner* imports = nullptr;                      // null when imports are not run
  // Honours the X-Bulleted-Inject-Stale request header (tests only; from the
  // environment variable BULLETED_FAULT_INJECTION=1).
  bool fault_injection = false;
  std::function<std::size_t()> in_flight = [] { return std::size_t{0}; };
};

class Api {
 public:
  explicit Api(AppContext& context) : context_(context) {}
  HttpResponse handle(const HttpRequest& request);

 private:
  friend struct ApiMethods;
  schema::Store& store();
  Result<std::string> authorize(const HttpRequest& request, const std::string& repo);
  HttpResponse health();
  HttpResponse ready();
  HttpResponse metrics();

  AppContext& context_;
};

// A new bearer token (random, 256 bits) and the digest stored for it.
std::string new_token();
std::string token_digest(std::string_view token);

}  // namespace bulleted::appview
