// Fetches a whole repo (com.atproto.sync.getRepo) for resyncs and backfill.
// The interface keeps HTTP out of the ingest logic; the implementation calls
// through the outbound XRPC client (firehose/client/xrpc_client.hpp).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "schema/error.hpp"

namespace bulleted::firehose {

class RepoFetcher {
 public:
  virtual ~RepoFetcher() = default;
  // The CAR bytes of `did`'s repo. kUpstreamFailure when the host cannot be
  // reached or answers an error; kNotFound for RepoNotFound.
  virtual Result<std::string> get_repo(const std::string& did) = 0;
};

struct RepoFetchOptions {
  // The operator's service (http:// or https://), trusted as given: a relay
  // or a PDS.
  std::string source;
  std::chrono::seconds timeout{60};
  std::size_t max_repo_bytes = 512ull * 1024 * 1024;
  // Where a repo lives when the source does not serve it: its PDS origin
  // from its DID document (identity/). Unset: the source only.
  std::function<Result<std::string>(const std::string& did)> pds_of;
  // network.allowPrivateAddresses: http and private addresses for URLs the
  // network gives (redirects, PDS endpoints).
  bool allow_private_addresses = false;
  int max_redirects = 3;
  // Requests a second to any one host, the source's redirects and each PDS
  // counted by their own host (HostBudget); 0: no limit.
  double host_requests_per_second = 10;
};

// Fetches from the source, following its redirects (a relay answers 302 to
// the repo's PDS), each one checked by check_network_url; when the source
// cannot give the repo, from the repo's own PDS.
std::unique_ptr<RepoFetcher> make_http_repo_fetcher(RepoFetchOptions options);

// The HTTP(S) origin of a websocket URL: ws://h:p/x -> http://h:p.
std::string http_origin_of(const std::string& websocket_url);

}  // namespace bulleted::firehose
