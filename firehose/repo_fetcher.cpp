#define _TURN_OFF_PLATFORM_STRING
#include "firehose/repo_fetcher.hpp"

#include <cpprest/http_client.h>

#include <nlohmann/json.hpp>

namespace bulleted::firehose {
namespace {

constexpr std::size_t kMaxRepoBytes = 512ull * 1024 * 1024;

class HttpRepoFetcher final : public RepoFetcher {
 public:
  HttpRepoFetcher(const std::string& base_url, std::chrono::seconds timeout)
      : client_(web::uri(base_url), config(timeout)) {}

  Result<std::string> get_repo(const std::string& did) override {
    try {
      web::uri_builder path("/xrpc/com.atproto.sync.getRepo");
      path.append_query("did", did);
      web::http::http_response response =
          client_.request(web::http::methods::GET, path.to_string()).get();
      std::vector<unsigned char> body = response.extract_vector().get();
      if (response.status_code() != web::http::status_codes::OK) {
        std::string error = "HTTP " + std::to_string(response.status_code());
        auto json = nlohmann::json::parse(body.begin(), body.end(), nullptr, false);
        if (json.is_object() && json.contains("error") && json["error"].is_string()) {
          error = json["error"].get<std::string>();
        }
        const bool missing = error == "RepoNotFound";
        return fail(missing ? ErrorCode::kNotFound : ErrorCode::kUpstreamFailure,
                    "getRepo " + did + ": " + error);
      }
      if (body.size() > kMaxRepoBytes)
        return fail(ErrorCode::kUpstreamFailure, "repo larger than 512 MiB");
      return std::string(body.begin(), body.end());
    } catch (const std::exception& e) {
      return fail(ErrorCode::kUpstreamFailure, "getRepo " + did + ": " + e.what());
    }
  }

 private:
  static web::http::client::http_client_config config(std::chrono::seconds timeout) {
    web::http::client::http_client_config config;
    config.set_timeout(timeout);
    return config;
  }
  web::http::client::http_client client_;
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
