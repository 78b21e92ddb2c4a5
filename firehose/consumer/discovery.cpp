#include "firehose/consumer/discovery.hpp"

#include "schema/syntax.hpp"

namespace bulleted::firehose {
namespace {

// One listing method, page by page. nullopt when the source does not serve
// the method at all (so that the caller tries the other).
// `collection` when listing by collection; `seen` the repos named so far.
Result<std::optional<DiscoveryResult>> list(XrpcClient& client, const DiscoveryOptions& options,
                                            const std::string& method,
                                            const std::string* collection,
                                            std::unordered_set<std::string>& seen) {
  const bool by_collection = collection != nullptr;
  DiscoveryResult result{0, method};
  std::string cursor;
  for (bool first = true;; first = false) {
    if (options.stopping && options.stopping()) {
      return fail(ErrorCode::kUnavailable, "stopped while listing repos");
    }
    XrpcRequest request{.base_url = options.source, .path = "/xrpc/" + method};
    request.query.emplace_back("limit", "1000");
    if (by_collection) request.query.emplace_back("collection", *collection);
    if (!cursor.empty()) request.query.emplace_back("cursor", cursor);
    auto reply = client.call(request);
    if (!reply) return std::unexpected(reply.error());
    if (reply->status != 200) {
      const std::string error = reply->error_name();
      // A source without the method: 501 MethodNotImplemented, or (a PDS
      // that routes no such method) 404 or 400 on the first page.
      if (first && (reply->status == 404 || reply->status == 501 || reply->status == 400 ||
                    error == "MethodNotImplemented")) {
        return std::optional<DiscoveryResult>();
      }
      return fail(ErrorCode::kUpstreamFailure, method + " answered HTTP " +
                                                   std::to_string(reply->status) +
                                                   (error.empty() ? "" : " " + error));
    }
    const auto json = reply->json();
    const auto repos = json.is_object() ? json.find("repos") : json.end();
    if (repos == json.end() || !repos->is_array()) {
      return fail(ErrorCode::kUpstreamFailure, method + " answered no repos array");
    }
    std::vector<std::string> page;
    for (const auto& repo : *repos) {
      if (!repo.is_object()) continue;
      const std::string did = json_text(repo, {"did"});
      if (!schema::Did::parse(did)) continue;
      // listRepos names inactive repos too (taken down, deactivated).
      if (auto active = repo.find("active");
          active != repo.end() && active->is_boolean() && !active->get<bool>()) {
        continue;
      }
      if (seen.insert(did).second) page.push_back(did);
    }
    result.repos += page.size();
    if (seen.size() > options.max_repos) {
      return fail(ErrorCode::kUpstreamFailure, method + " lists more repos than allowed");
    }
    if (!page.empty() && options.on_page) options.on_page(page);
    const std::string next = json_text(json, {"cursor"});
    if (next.empty() || next == cursor || repos->empty()) return std::optional(result);
    cursor = next;
  }
}

}  // namespace

Result<DiscoveryResult> discover_repos(XrpcClient& client, const DiscoveryOptions& options) {
  std::unordered_set<std::string> seen;
  DiscoveryResult listed{0, "com.atproto.sync.listReposByCollection"};
  for (const auto& collection : options.collections) {
    auto by_collection =
        list(client, options, "com.atproto.sync.listReposByCollection", &collection, seen);
    if (!by_collection) return std::unexpected(by_collection.error());
    if (!*by_collection) {
      if (!seen.empty()) {
        return fail(ErrorCode::kUpstreamFailure,
                    "the source stopped serving listReposByCollection between collections");
      }
      auto all = list(client, options, "com.atproto.sync.listRepos", nullptr, seen);
      if (!all) return std::unexpected(all.error());
      if (!*all) return fail(ErrorCode::kUpstreamFailure, "the source lists no repos");
      return **all;
    }
    listed.repos += (*by_collection)->repos;
  }
  return listed;
}

}  // namespace bulleted::firehose
