#include "firehose/consumer/repo_fetcher.hpp"

#include "firehose/client/xrpc_client.hpp"

namespace bulleted::firehose {
namespace {

constexpr std::size_t kMaxRepoBytes = 512ull * 1024 * 1024;

class HttpRepoFetcher final : public RepoFetcher {
 public:
  HttpRepoFetcher(const std::string& base_url, std::chrono::seconds timeout)
      : base_url_(base_url), client_(make_http_xrpc_client(timeout, kMaxRepoBytes)) {}

  Result<std::string> get_repo(const std::string& did) override {
    auto reply = client_->call(
        {.base_url = base_url_, .path = "/xrpc/com.atproto.sync.getRepo", .query = {{"did", did}}});
    if (!reply) return std::unexpected(reply.error());
    if (reply->status != 200) {
      std::string error = reply->error_name();
      if (error.empty()) error = "HTTP " + std::to_string(reply->status);
      const bool missing = error == "RepoNotFound";
      return fail(missing ? ErrorCode::kNotFound : ErrorCode::kUpstreamFailure,
                  "getRepo " + did + ": " + error);
    }
    return std::move(reply->body);
  }

 private:
  std::string base_url_;
  std::shared_ptr<XrpcClient> client_;
};

}  // namespace

std::unique_ptr<RepoFetcher> make_http_repo_fetcher(const std::string& base_url,
                                                    std::chrono::seconds timeout) {
  return std::make_unique<HttpRepoFetcher>(base_url, timeout);
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
