// The /oauth/ routes as a browser meets them, through Api::handle, over a
// scripted network (a PLC directory, a PDS and its authorization server on
// public addresses): the sign-in is bound to its browser by a __Host-
// cookie, the failure page says only fixed words, an account cannot be
// locked out by others signing it in, and the app view's own DID document
// is readable from any page.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "appview/xrpc/api.hpp"
#include "tests/support/fake_xrpc_client.hpp"
#include "tests/support/temp_dir.hpp"

namespace bulleted::appview {
namespace {

using nlohmann::json;
using testing::FakeXrpcClient;
using testing::reply_of;

constexpr const char* kDid = "did:plc:aliceaaaaaaaaaaaaaaaaaaaa";
constexpr const char* kPlc = "https://93.184.216.40";
constexpr const char* kPds = "https://93.184.216.41";
constexpr const char* kIssuer = "https://93.184.216.42";

std::string header(const HttpResponse& response, const std::string& name) {
  std::string out;
  for (const auto& [key, value] : response.headers) {
    if (key == name) out += (out.empty() ? "" : "\n") + value;
  }
  return out;
}

class OAuthRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_.db_path = dir_.file("index.db");
    config_.mode = Mode::kPds;
    config_.public_url = "https://appview.example.com";
    config_.service_did = "did:web:appview.example.com";
    config_.plc_url = kPlc;
    config_.sign_in_per_minute = 1000;
    network_ = std::make_shared<FakeXrpcClient>(
        [](const firehose::XrpcRequest& request) { return answer(request); });
    identity_ = std::make_unique<identity::IdentityResolver>(identity::Fetcher::over(network_),
                                                             identity::IdentityOptions{kPlc});
    store_ = std::move(*schema::Store::open(config_.db_path));
    auto keys = load_client_keys(std::nullopt, *store_, box_);
    ASSERT_TRUE(keys.has_value());
    oauth_ = std::make_unique<OAuthClient>(OAuthClientOptions{.public_url = *config_.public_url},
                                           *keys, identity::Fetcher::over(network_), network_,
                                           *identity_, box_);
    pds_ = std::make_unique<PdsServices>(network_, *identity_, box_, written_);
    pds_->sessions.use_oauth(oauth_.get());
    context_ = std::make_unique<AppContext>(config_);
    context_->services.pds = pds_.get();
    context_->services.oauth = oauth_.get();
    api_ = std::make_unique<Api>(*context_);
  }

  static Result<firehose::XrpcReply> answer(const firehose::XrpcRequest& request) {
    const std::string url = request.base_url + request.path;
    if (url == std::string(kPlc) + "/" + kDid) {
      return reply_of(200, json{{"id", kDid},
                                {"service",
                                 {{{"id", "#atproto_pds"},
                                   {"type", "AtprotoPersonalDataServer"},
                                   {"serviceEndpoint", kPds}}}}}
                               .dump());
    }
    if (url == std::string(kPds) + "/.well-known/oauth-protected-resource") {
      return reply_of(200, json{{"authorization_servers", {kIssuer}}}.dump());
    }
    if (url == std::string(kIssuer) + "/.well-known/oauth-authorization-server") {
      return reply_of(200,
                      json{{"issuer", kIssuer},
                           {"pushed_authorization_request_endpoint", std::string(kIssuer) + "/par"},
                           {"authorization_endpoint", std::string(kIssuer) + "/authorize"},
                           {"token_endpoint", std::string(kIssuer) + "/token"}}
                          .dump());
    }
    if (url == std::string(kIssuer) + "/par") {
      return reply_of(201, json{{"request_uri", "urn:request:1"}}.dump());
    }
    if (url == std::string(kIssuer) + "/token") {
      return reply_of(200, json{{"access_token", "at"},
                                {"refresh_token", "rt"},
                                {"sub", kDid},
                                {"token_type", "DPoP"},
                                {"scope", "atproto repo:app.bulleted.node"},
                                {"expires_in", 300}}
                               .dump());
    }
    return reply_of(404, "{}");
  }

  HttpResponse get(const std::string& path, const std::string& query, const std::string& from,
                   const std::string& cookie = "") {
    HttpRequest request;
    request.method = "GET";
    request.path = path;
    request.query = query;
    request.remote = from;
    if (!cookie.empty()) request.headers["cookie"] = cookie;
    return api_->handle(request);
  }
  // The state of the latest PAR request.
  std::string par_state() const {
    std::string state;
    for (const auto& request : network_->sent()) {
      if (request.path != "/par") continue;
      for (const auto& [name, value] : request.form) {
        if (name == "state") state = value;
      }
    }
    return state;
  }
  std::size_t token_calls() const {
    std::size_t n = 0;
    for (const auto& request : network_->sent()) n += request.path == "/token";
    return n;
  }

  testing::TempDir dir_;
  Config config_;
  SecretBox box_{"a key of at least thirty-two characters"};
  firehose::WrittenRevs written_;
  std::shared_ptr<FakeXrpcClient> network_;
  std::unique_ptr<identity::IdentityResolver> identity_;
  std::unique_ptr<schema::Store> store_;
  std::unique_ptr<OAuthClient> oauth_;
  std::unique_ptr<PdsServices> pds_;
  std::unique_ptr<AppContext> context_;
  std::unique_ptr<Api> api_;
};

TEST_F(OAuthRoutesTest, TheCallbackSignsInOnlyTheBrowserThatBeganTheSignIn) {
  const HttpResponse login = get("/oauth/login", std::string("handle=") + kDid, "198.51.100.1");
  ASSERT_EQ(login.status, 302) << login.body;
  const std::string set = header(login, "Set-Cookie");
  ASSERT_TRUE(set.starts_with("__Host-bulleted_signin=")) << set;
  EXPECT_NE(set.find("; Secure"), std::string::npos);
  EXPECT_NE(set.find("; HttpOnly"), std::string::npos);
  const std::string binding = set.substr(23, set.find(';') - 23);
  const std::string state = par_state();
  const std::string callback = "state=" + state + "&code=c&iss=" + std::string(kIssuer);

  // The attacker's callback opened in a victim's browser: no binding.
  const HttpResponse victim = get("/oauth/callback", callback, "203.0.113.5");
  EXPECT_EQ(victim.status, 401);
  EXPECT_EQ(header(victim, "Set-Cookie").find("__Host-bulleted_session=bt"), std::string::npos)
      << "no session cookie";
  EXPECT_EQ(token_calls(), 0u) << "the code was not exchanged";

  // Begun again, completed in the browser that holds its binding.
  const HttpResponse again = get("/oauth/login", std::string("handle=") + kDid, "198.51.100.1");
  const std::string set_again = header(again, "Set-Cookie");
  const std::string own = set_again.substr(23, set_again.find(';') - 23);
  EXPECT_NE(own, binding);
  const HttpResponse done =
      get("/oauth/callback", "state=" + par_state() + "&code=c&iss=" + std::string(kIssuer),
          "198.51.100.1", "__Host-bulleted_signin=" + own);
  ASSERT_EQ(done.status, 302) << done.body;
  const std::string cookies = header(done, "Set-Cookie");
  EXPECT_NE(cookies.find("__Host-bulleted_session="), std::string::npos) << cookies;
  EXPECT_EQ(cookies.find('\n'), std::string::npos) << "one Set-Cookie (cpprest joins repeats)";
  // The binding is single use: the same callback again is refused.
  EXPECT_EQ(get("/oauth/callback", "state=" + par_state() + "&code=c&iss=" + std::string(kIssuer),
                "198.51.100.1", "__Host-bulleted_signin=" + own)
                .status,
            401);
  EXPECT_EQ(token_calls(), 1u);
}

TEST_F(OAuthRoutesTest, TheFailurePageSaysOnlyItsOwnWords) {
  const std::string spoof = "Your account is suspended. Call 555-0100";
  for (const std::string& query :
       std::vector<std::string>{"state=unknown&error=access_denied&error_description=" + spoof,
                                "state=unknown&error=" + spoof, "state=&code=x&iss=y",
                                "state=unknown&code=x&iss=" + spoof, "handle=" + spoof}) {
    const std::string path = query.starts_with("handle") ? "/oauth/login" : "/oauth/callback";
    const HttpResponse page = get(path, query, "198.51.100.2");
    EXPECT_GE(page.status, 400) << query;
    EXPECT_EQ(page.body.find("555-0100"), std::string::npos) << query << ": " << page.body;
    EXPECT_EQ(page.body.find("suspended"), std::string::npos) << query << ": " << page.body;
    EXPECT_NE(page.body.find("<p id=\"reason\">"), std::string::npos);
  }
}

TEST_F(OAuthRoutesTest, OthersSigningAnAccountInCannotLockItOut) {
  // More than limits.signInPerAccountPerMinute (10) from as many addresses:
  // OAuth has no password to guess, so nothing is limited per account.
  for (int i = 0; i < 15; ++i) {
    const HttpResponse login =
        get("/oauth/login", std::string("handle=") + kDid, "198.51.100." + std::to_string(100 + i));
    EXPECT_EQ(login.status, 302) << i << ": " << login.body;
  }
}

TEST_F(OAuthRoutesTest, TheAppViewsDidDocumentIsReadableFromAnyPage) {
  const HttpResponse document = get("/.well-known/did.json", "", "198.51.100.3");
  ASSERT_EQ(document.status, 200);
  EXPECT_EQ(header(document, "Access-Control-Allow-Origin"), "*");
}

}  // namespace
}  // namespace bulleted::appview
