// Fetches a whole repo (com.atproto.sync.getRepo) for resyncs and backfill.
// The interface keeps HTTP out of the ingest logic; the implementation uses
// cpprestsdk's http_client, one per host.
#pragma once

#include <chrono>
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

// Fetches from the XRPC service at `base_url` (http:// or https://).
std::unique_ptr<RepoFetcher> make_http_repo_fetcher(const std::string& base_url,
                                                    std::chrono::seconds timeout);

// The HTTP(S) origin of a websocket URL: ws://h:p/x -> http://h:p.
std::string http_origin_of(const std::string& websocket_url);

}  // namespace bulleted::firehose
