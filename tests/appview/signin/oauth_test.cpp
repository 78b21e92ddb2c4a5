// The OAuth client's parts that need no server: PKCE (RFC 7636's own
// vector), DPoP proofs (RFC 9449: header, claims, a signature its own JWK
// verifies), client assertions and metadata, the sealed grant, return paths,
// form bodies, and the session cookie's credential and attributes.
#include <gtest/gtest.h>

#include <fstream>

#include "appview/signin/jwt.hpp"
#include "appview/signin/oauth_client.hpp"
#include "appview/xrpc/api.hpp"
#include "firehose/cid.hpp"
#include "schema/base64.hpp"
#include "tests/support/temp_dir.hpp"

namespace bulleted::appview {
namespace {

using firehose::KeyCurve;
using firehose::PrivateKey;
using nlohmann::json;

// The public key a JWK names.
firehose::PublicKey key_of(const json& jwk) {
  auto x = schema::base64_decode(jwk["x"].get<std::string>(), schema::Base64Alphabet::kUrl);
  auto y = schema::base64_decode(jwk["y"].get<std::string>(), schema::Base64Alphabet::kUrl);
  EXPECT_TRUE(x && y);
  auto key = firehose::PublicKey::from_point(
      jwk["crv"] == "P-256" ? KeyCurve::kP256 : KeyCurve::kSecp256k1, "\x04" + *x + *y);
  EXPECT_TRUE(key.has_value());
  return *key;
}

TEST(Pkce, TheS256ChallengeMatchesRfc7636) {
  EXPECT_EQ(pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
}

TEST(Dpop, AProofCarriesItsKeyAndClaimsAndVerifiesWithIt) {
  const PrivateKey key = PrivateKey::generate(KeyCurve::kP256);
  const std::string proof =
      dpop_proof(key, "POST", "https://pds.example/xrpc/x?y=1#z", std::string("nonce-1"),
                 std::string("access"), 1'800'000'000);
  auto jwt = parse_jwt(proof);
  ASSERT_TRUE(jwt.has_value());
  EXPECT_EQ(jwt->header["typ"], "dpop+jwt");
  EXPECT_EQ(jwt->header["alg"], "ES256");
  EXPECT_FALSE(jwt->header["jwk"].contains("d")) << "the public half only";
  EXPECT_EQ(jwt->payload["htm"], "POST");
  EXPECT_EQ(jwt->payload["htu"], "https://pds.example/xrpc/x") << "no query or fragment";
  EXPECT_EQ(jwt->payload["iat"], 1'800'000'000);
  EXPECT_EQ(jwt->payload["nonce"], "nonce-1");
  EXPECT_EQ(jwt->payload["ath"], base64url(firehose::sha256("access")));
  EXPECT_GE(jwt->payload["jti"].get<std::string>().size(), 16u);
  EXPECT_TRUE(key_of(jwt->header["jwk"]) == key.public_key());
  EXPECT_EQ(
      firehose::verify_signature(key_of(jwt->header["jwk"]), jwt->signing_input, jwt->signature),
      firehose::SignatureCheck::kValid);
  // Without a nonce or a token (an authorization server's first request).
  auto bare =
      parse_jwt(dpop_proof(key, "GET", "https://as.example/par", std::nullopt, std::nullopt, 1));
  ASSERT_TRUE(bare.has_value());
  EXPECT_FALSE(bare->payload.contains("nonce"));
  EXPECT_FALSE(bare->payload.contains("ath"));
  EXPECT_NE(bare->payload["jti"], jwt->payload["jti"]);
}

TEST(PublicJwk, GivesTheUncompressedPointOfEitherCurve) {
  for (KeyCurve curve : {KeyCurve::kP256, KeyCurve::kSecp256k1}) {
    const PrivateKey key = PrivateKey::generate(curve);
    const json jwk = public_jwk(key.public_key());
    EXPECT_EQ(jwk["kty"], "EC");
    EXPECT_EQ(jwk["crv"], curve == KeyCurve::kP256 ? "P-256" : "secp256k1");
    EXPECT_TRUE(key_of(jwk) == key.public_key());
  }
}

class OAuthClientTest : public ::testing::Test {
 protected:
  OAuthClientTest()
      : identity_(
            identity::Fetcher::over(firehose::make_http_xrpc_client(std::chrono::seconds(1), 1024)),
            {}),
        box_("a key of at least thirty-two characters") {}
  testing::TempDir dir_;
  identity::IdentityResolver identity_;
  SecretBox box_;
};

TEST_F(OAuthClientTest, MetadataAndKeysAreAConfidentialClientsAndTheKeyIsKept) {
  auto store = schema::Store::open(dir_.file("index.db"));
  ASSERT_TRUE(store.has_value());
  auto keys = load_client_keys(std::nullopt, **store, box_);
  ASSERT_TRUE(keys.has_value()) << keys.error().message;
  ASSERT_EQ(keys->size(), 1u);
  auto again = load_client_keys(std::nullopt, **store, box_);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->front().kid, keys->front().kid) << "generated once, then read back";
  EXPECT_FALSE(load_client_keys(std::nullopt, **store, SecretBox("another key, thirty-two chars!!"))
                   .has_value())
      << "sealed with the session key";

  OAuthClient client(
      {.public_url = "https://appview.example.com"}, *keys,
      identity::Fetcher::over(firehose::make_http_xrpc_client(std::chrono::seconds(1), 1024)),
      firehose::make_http_xrpc_client(std::chrono::seconds(1), 1024), identity_, box_);
  const json metadata = client.client_metadata();
  EXPECT_EQ(metadata["client_id"], "https://appview.example.com/oauth/client-metadata.json");
  EXPECT_EQ(metadata["redirect_uris"], json::array({"https://appview.example.com/oauth/callback"}));
  EXPECT_EQ(metadata["jwks_uri"], "https://appview.example.com/oauth/jwks.json");
  EXPECT_EQ(metadata["scope"],
            "atproto repo:app.bulleted.node repo:app.bulleted.note repo:app.bulleted.outline"
            " repo:app.bulleted.mirror repo:app.bulleted.comment repo:app.bulleted.commentPolicy");
  EXPECT_EQ(metadata["token_endpoint_auth_method"], "private_key_jwt");
  EXPECT_EQ(metadata["token_endpoint_auth_signing_alg"], "ES256");
  EXPECT_EQ(metadata["dpop_bound_access_tokens"], true);
  const json jwks = client.jwks();
  ASSERT_EQ(jwks["keys"].size(), 1u);
  EXPECT_EQ(jwks["keys"][0]["kid"], keys->front().kid);
  EXPECT_FALSE(jwks["keys"][0].contains("d"));
  EXPECT_TRUE(key_of(jwks["keys"][0]) == keys->front().key.public_key());
}

TEST_F(OAuthClientTest, AKeyFileIsAJwksWhoseFirstKeySignsAndAllArePublished) {
  auto store = schema::Store::open(dir_.file("index.db"));
  ASSERT_TRUE(store.has_value());
  const PrivateKey next = PrivateKey::generate(KeyCurve::kP256);
  const PrivateKey old = PrivateKey::generate(KeyCurve::kP256);
  auto private_jwk = [](const PrivateKey& key, const char* kid) {
    json jwk = public_jwk(key.public_key());
    jwk["d"] = base64url(key.bytes());
    jwk["kid"] = kid;
    return jwk;
  };
  const std::string file = dir_.file("keys.json");
  std::ofstream(file) << json{{"keys", {private_jwk(next, "k2"), private_jwk(old, "k1")}}}.dump();
  auto keys = load_client_keys(file, **store, box_);
  ASSERT_TRUE(keys.has_value()) << keys.error().message;
  ASSERT_EQ(keys->size(), 2u);
  EXPECT_EQ(keys->front().kid, "k2");
  EXPECT_TRUE(keys->front().key.public_key() == next.public_key());
  std::ofstream(file) << R"({"keys": [{"kty": "EC", "crv": "secp256k1", "d": "AA"}]})";
  EXPECT_FALSE(load_client_keys(file, **store, box_).has_value());
  EXPECT_FALSE(load_client_keys(dir_.file("missing.json"), **store, box_).has_value());
}

TEST(OAuthGrant, RoundTripsThroughItsJsonAndRefusesAnIncompleteOne) {
  OAuthGrant grant{"https://as.example", "https://as.example/token", "https://as.example/revoke",
                   std::string(PrivateKey::generate(KeyCurve::kP256).bytes()), 1234};
  auto back = OAuthGrant::from_json(grant.to_json());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->issuer, grant.issuer);
  EXPECT_EQ(back->token_endpoint, grant.token_endpoint);
  EXPECT_EQ(back->revocation_endpoint, grant.revocation_endpoint);
  EXPECT_EQ(back->dpop_key, grant.dpop_key);
  EXPECT_EQ(back->expires_at, 1234);
  json broken = grant.to_json();
  broken.erase("dpopKey");
  EXPECT_FALSE(OAuthGrant::from_json(broken).has_value());
}

TEST(SameOriginPath, OnlyPathsOfThisSite) {
  for (const char* ok : {"/", "/#/did:plc:abc", "/index.html?x=1"})
    EXPECT_TRUE(same_origin_path(ok)) << ok;
  for (const char* bad : {"", "https://evil.example/", "//evil.example/", "/\\evil.example", "evil",
                          "/\x01", "/a\\b"}) {
    EXPECT_FALSE(same_origin_path(bad)) << bad;
  }
}

TEST(FormEncode, PercentEncodesAllButTheUnreserved) {
  EXPECT_EQ(
      firehose::form_encode(
          {{"a b", "x&y=z"}, {"scope", "atproto repo:app.bulleted.node"}, {"safe", "A-z_0.9~"}}),
      "a%20b=x%26y%3Dz&scope=atproto%20repo%3Aapp.bulleted.node&safe=A-z_0.9~");
}

TEST(SessionCookie, IsTheCredentialOfPdsModeOnlyAndSecureOffLoopback) {
  Config config;
  config.mode = Mode::kPds;
  config.public_url = "http://127.0.0.1:2584";  // a developer's machine: no prefix
  HttpRequestHead head;
  head.headers["cookie"] = "theme=dark; bulleted_session=bt_abc; other=1";
  auto credential = credential_of(head, config);
  ASSERT_TRUE(credential.has_value());
  EXPECT_TRUE(credential->cookie);
  EXPECT_EQ(credential->token, "bt_abc");
  Config local = config;
  local.mode = Mode::kLocal;
  EXPECT_FALSE(credential_of(head, local).has_value()) << "local mode has no cookie sessions";
  head.headers["cookie"] = "bulleted_session_x=1; xbulleted_session=2";
  EXPECT_FALSE(credential_of(head, config).has_value());
  head.headers["authorization"] = "Bearer bt_token";
  credential = credential_of(head, config);
  ASSERT_TRUE(credential.has_value());
  EXPECT_FALSE(credential->cookie) << "a bearer token comes first";

  config.public_url = "https://appview.example.com";
  EXPECT_EQ(session_cookie(config, "bt_x", false),
            "__Host-bulleted_session=bt_x; Path=/; HttpOnly; SameSite=Lax; Max-Age=15552000; "
            "Secure");
  EXPECT_EQ(session_cookie(config, "", true),
            "__Host-bulleted_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure");
  config.public_url = "http://127.0.0.1:2584";
  EXPECT_EQ(session_cookie(config, "t", false).find("Secure"), std::string::npos);
  EXPECT_TRUE(session_cookie(config, "t", false).starts_with("bulleted_session=t;"));
  config.public_url = "http://localhost:2584";
  EXPECT_EQ(session_cookie(config, "t", false).find("Secure"), std::string::npos);
  config.public_url = "http://appview.example.com";
  EXPECT_NE(session_cookie(config, "t", false).find("Secure"), std::string::npos);
}

TEST(SessionCookie, OnTheOpenNetworkOnlyTheHostPrefixedCookieCountsAndOnlyWhenItIsAlone) {
  Config config;
  config.mode = Mode::kPds;
  config.public_url = "https://appview.example.com";
  HttpRequestHead head;
  // A cookie without the prefix may have been set by a sibling host
  // (Domain=example.com): it is not a credential here.
  head.headers["cookie"] = "bulleted_session=bt_sibling";
  EXPECT_FALSE(credential_of(head, config).has_value());
  head.headers["cookie"] = "bulleted_session=bt_sibling; __Host-bulleted_session=bt_own";
  auto credential = credential_of(head, config);
  ASSERT_TRUE(credential.has_value());
  EXPECT_EQ(credential->token, "bt_own");
  // Two of them (which no browser sends for one host-only cookie): neither
  // is taken, rather than the first.
  head.headers["cookie"] = "__Host-bulleted_session=bt_a; __Host-bulleted_session=bt_b";
  EXPECT_FALSE(credential_of(head, config).has_value());
  EXPECT_EQ(cookie_value(head, "__Host-bulleted_session"), std::nullopt);
}

TEST(SignInCookie, BindsTheSignInForItsTenMinutesAndIsLaxSoTheRedirectBackCarriesIt) {
  Config config;
  config.public_url = "https://appview.example.com";
  EXPECT_EQ(sign_in_cookie(config, "b1", false),
            "__Host-bulleted_signin=b1; Path=/; HttpOnly; SameSite=Lax; Max-Age=600; Secure");
  EXPECT_EQ(sign_in_cookie(config, "", true),
            "__Host-bulleted_signin=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure");
}

}  // namespace
}  // namespace bulleted::appview
