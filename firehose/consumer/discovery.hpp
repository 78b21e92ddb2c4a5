// Which repos hold records the index keeps (app.bulleted.node, and notes)
// at a source: the first step of the initial backfill (and of
// `bulleted-appview backfill --all`).
//
// com.atproto.sync.listReposByCollection where the source serves it (a
// relay), once per collection, each repo named once; else
// com.atproto.sync.listRepos (a PDS: every active repo, since a PDS cannot
// say which hold what). Pages of 1,000; a cursor that does not move ends a
// listing.
#pragma once

#include <functional>
#include <string>
#include <unordered_set>
#include <vector>

#include "firehose/client/xrpc_client.hpp"
#include "schema/error.hpp"

namespace bulleted::firehose {

struct DiscoveryOptions {
  std::string source;  // scheme://host[:port], the operator's
  std::vector<std::string> collections = {"app.bulleted.node",    "app.bulleted.note",
                                          "app.bulleted.outline", "app.bulleted.mirror",
                                          "app.bulleted.comment", "app.bulleted.commentPolicy"};
  std::size_t max_repos = 50'000'000;
  // Called with each page's DIDs as they arrive.
  std::function<void(const std::vector<std::string>&)> on_page;
  // Polled between pages: true stops the listing early (kUnavailable).
  std::function<bool()> stopping;
};

struct DiscoveryResult {
  std::size_t repos = 0;  // each once
  std::string method;     // the listing method that answered
};

Result<DiscoveryResult> discover_repos(XrpcClient& client, const DiscoveryOptions& options);

}  // namespace bulleted::firehose
