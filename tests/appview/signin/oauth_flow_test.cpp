// The OAuth client's sign-in against a scripted network: a PLC directory, a
// PDS and its authorization server on public addresses (IP literals, so the
// network policy checks them without a resolver). What reaches which host
// is read back from the fake client.
#include <gtest/gtest.h>

#include "appview/signin/jwt.hpp"
#include "appview/signin/oauth_client.hpp"
#include "tests/support/fake_xrpc_client.hpp"
#include "tests/support/temp_dir.hpp"

namespace bulleted::appview {
namespace {

using nlohmann::json;
using testing::FakeXrpcClient;
using testing::reply_of;

constexpr const char* kDid = "did:plc:aliceaaaaaaaaaaaaaaaaaaaa";
constexpr const char* kPlc = "https://93.184.216.30";
constexpr const char* kPds = "https://93.184.216.31";
constexpr const char* kIssuer = "https://93.184.216.32";

class OAuthFlowTest : public ::testing::Test {
 protected:
  OAuthFlowTest()
      : network_(std::make_shared<FakeXrpcClient>(
            [this](const firehose::XrpcRequest& request) { return answer(request); })),
        identity_(identity::Fetcher::over(network_), {.plc_url = kPlc}),
        box_("a key of at least thirty-two characters") {
    store_ = std::move(*schema::Store::open(dir_.file("index.db")));
    keys_ = std::move(*load_client_keys(std::nullopt, *store_, box_));
    client_ = std::make_unique<OAuthClient>(
        OAuthClientOptions{.public_url = "https://appview.example.com"}, keys_,
        identity::Fetcher::over(network_), network_, identity_, box_);
  }

  // The network as the test sets it up.
  Result<firehose::XrpcReply> answer(const firehose::XrpcRequest& request) {
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
      return reply_of(200, metadata_.dump());
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
  std::size_t sent_to(const std::string& url) const {
    std::size_t n = 0;
    for (const auto& request : network_->sent()) n += request.base_url + request.path == url;
    return n;
  }
  testing::TempDir dir_;
  json metadata_ = {{"issuer", kIssuer},
                    {"pushed_authorization_request_endpoint", std::string(kIssuer) + "/par"},
                    {"authorization_endpoint", std::string(kIssuer) + "/authorize"},
                    {"token_endpoint", std::string(kIssuer) + "/token"},
                    {"revocation_endpoint", std::string(kIssuer) + "/revoke"}};
  std::shared_ptr<FakeXrpcClient> network_;
  identity::IdentityResolver identity_;
  SecretBox box_;
  std::unique_ptr<schema::Store> store_;
  std::vector<OAuthSigningKey> keys_;
  std::unique_ptr<OAuthClient> client_;
};

// The state the latest PAR request carried.
std::string par_state(const FakeXrpcClient& network) {
  std::string state;
  for (const auto& request : network.sent()) {
    if (request.path != "/par") continue;
    for (const auto& [name, value] : request.form) {
      if (name == "state") state = value;
    }
  }
  return state;
}

TEST_F(OAuthFlowTest, ASignInCompletesOnlyInTheBrowserThatBeganIt) {
  auto started = client_->begin(*store_, kDid, "/");
  ASSERT_TRUE(started.has_value()) << started.error().message;
  EXPECT_GE(started->binding.size(), 32u);
  const std::string state = par_state(*network_);
  ASSERT_FALSE(state.empty());

  // The attacker's callback URL opened in the victim's browser: the state
  // is real, the binding cookie is not there (or is the victim's own).
  for (const std::string& binding : {std::string(), std::string("another browser's binding")}) {
    auto forged = client_->complete(*store_, "code", state, kIssuer, binding);
    ASSERT_FALSE(forged.has_value());
    EXPECT_EQ(forged.error().code, ErrorCode::kAuthRequired);
    EXPECT_EQ(sent_to(std::string(kIssuer) + "/token"), 0u) << "no code is exchanged";
    // The state is single use either way: begin again.
    started = client_->begin(*store_, kDid, "/");
    ASSERT_TRUE(started.has_value());
  }
  auto signed_in =
      client_->complete(*store_, "code", par_state(*network_), kIssuer, started->binding);
  ASSERT_TRUE(signed_in.has_value()) << signed_in.error().message;
  EXPECT_EQ(signed_in->did, kDid);
  EXPECT_EQ(sent_to(std::string(kIssuer) + "/token"), 1u);
}

TEST_F(OAuthFlowTest, ARevocationEndpointThatThePolicyRefusesIsNeverCalled) {
  // An authorization server naming an address inside the app view's network
  // for its revocation endpoint: the sign-in does not start.
  metadata_["revocation_endpoint"] = "http://127.0.0.1:2584/internal/wipe";
  auto refused = client_->begin(*store_, kDid, "/");
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kUpstreamFailure);
  EXPECT_EQ(sent_to(std::string(kIssuer) + "/par"), 0u);
  // And a grant that names one (stored before this check existed): signing
  // out sends nothing there, nor anywhere else.
  OAuthGrant grant{kIssuer, std::string(kIssuer) + "/token", "https://10.0.0.7/internal/revoke",
                   std::string(firehose::PrivateKey::generate(firehose::KeyCurve::kP256).bytes()),
                   0};
  const std::size_t before = network_->calls();
  client_->revoke(grant, "rt");
  EXPECT_EQ(network_->calls(), before);
  // A public one is called.
  grant.revocation_endpoint = std::string(kIssuer) + "/revoke";
  client_->revoke(grant, "rt");
  EXPECT_EQ(sent_to(std::string(kIssuer) + "/revoke"), 1u);
}

}  // namespace
}  // namespace bulleted::appview
