#include "firehose/consumer/repo_fetcher.hpp"

#include "firehose/client/host_budget.hpp"
#include "firehose/client/network_policy.hpp"
#include "firehose/client/xrpc_client.hpp"

namespace bulleted::firehose {
namespace {

class HttpRepoFetcher final : public RepoFetcher {
 public:
  explicit HttpRepoFetcher(RepoFetchOptions options)
      : options_(std::move(options)),
        client_(make_http_xrpc_client(options_.timeout, options_.max_repo_bytes)),
        budget_(options_.host_requests_per_second) {}

  Result<std::string> get_repo(const std::string& did) override {
    auto from_source = fetch(options_.source, did, true);
    if (from_source || !options_.pds_of) return from_source;
    auto pds = options_.pds_of(did);
    if (!pds || *pds == options_.source) return from_source;
    auto from_pds = fetch(*pds, did, false);
    if (from_pds) return from_pds;
    return fail(from_pds.error().code,
                from_source.error().message + "; from its PDS: " + from_pds.error().message);
  }

 private:
  // getRepo at `base`, following redirects; `trusted` when `base` is the
  // operator's (every later hop comes from the network).
  Result<std::string> fetch(const std::string& base, const std::string& did, bool trusted) {
    XrpcRequest request{
        .base_url = base, .path = "/xrpc/com.atproto.sync.getRepo", .query = {{"did", did}}};
    for (int hop = 0;; ++hop) {
      if (!trusted || hop > 0) {
        if (auto allowed = check_network_url(request.base_url + request.path,
                                             options_.allow_private_addresses);
            !allowed) {
          return fail(ErrorCode::kUpstreamFailure, "getRepo " + did + " at " + request.base_url +
                                                       ": " + allowed.error().message);
        }
      }
      budget_.acquire(request.base_url);
      // The network's host is checked again on the addresses connected to.
      request.public_only = (!trusted || hop > 0) && !options_.allow_private_addresses;
      auto reply = client_->call(request);
      if (!reply) return std::unexpected(reply.error());
      const bool redirect = reply->status == 301 || reply->status == 302 || reply->status == 303 ||
                            reply->status == 307 || reply->status == 308;
      if (redirect) {
        auto location = reply->header("location");
        if (!location || hop >= options_.max_redirects) {
          return fail(ErrorCode::kUpstreamFailure,
                      "getRepo " + did + ": too many redirects, or one without a Location");
        }
        auto target = split_url(*location);
        if (!target) {
          return fail(ErrorCode::kUpstreamFailure, "getRepo " + did + ": a redirect to " +
                                                       *location + ": " + target.error().message);
        }
        // The query travels in the path from here on.
        request = XrpcRequest{.base_url = target->first, .path = target->second};
        continue;
      }
      if (reply->status != 200) {
        std::string error = reply->error_name();
        if (error.empty()) error = "HTTP " + std::to_string(reply->status);
        const bool missing = error == "RepoNotFound";
        return fail(missing ? ErrorCode::kNotFound : ErrorCode::kUpstreamFailure,
                    "getRepo " + did + " at " + request.base_url + ": " + error);
      }
      return std::move(reply->body);
    }
  }

  RepoFetchOptions options_;
  std::shared_ptr<XrpcClient> client_;
  HostBudget budget_;
};

}  // namespace

std::unique_ptr<RepoFetcher> make_http_repo_fetcher(RepoFetchOptions options) {
  return std::make_unique<HttpRepoFetcher>(std::move(options));
}

std::string http_origin_of(const std::string& websocket_url) {
  std::string url = websocket_url;
  if (url.rfind("wss://", 0) == 0) {
    url = "https://" + url.substr(6);
  } else if (url.rfind("ws://", 0) == 0) {
    url = "http://" + url.substr(5);
  }
  const std::size_t scheme_end = url.find("://");
  const std::size_t path = url.find('/', scheme_end == std::string::npos ? 0 : scheme_end + 3);
  return path == std::string::npos ? url : url.substr(0, path);
}

}  // namespace bulleted::firehose
