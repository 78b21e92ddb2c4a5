// The OAuth client's signing keys: the operator's (auth.oauthKeyFile, a
// JWKS of private P-256 keys) or one the app view generates once and keeps
// sealed in the database.
#include <spdlog/spdlog.h>

#include <fstream>

#include "appview/signin/jwt.hpp"
#include "appview/signin/oauth_client.hpp"
#include "firehose/cid.hpp"
#include "schema/base64.hpp"

namespace bulleted::appview {
namespace {

using firehose::json_text;
using nlohmann::json;

constexpr std::string_view kGeneratedKeyName = "oauth-client-key";

std::string key_id(const firehose::PrivateKey& key) {
  return "bulleted-" + base64url(firehose::sha256(key.public_key().compressed())).substr(0, 16);
}

}  // namespace

Result<std::vector<OAuthSigningKey>> load_client_keys(const std::optional<std::string>& key_file,
                                                      schema::Store& store, const SecretBox& box) {
  std::vector<OAuthSigningKey> keys;
  if (key_file) {
    std::ifstream in(*key_file);
    if (!in) return fail(ErrorCode::kInvalidRequest, "cannot read auth.oauthKeyFile " + *key_file);
    json jwks = json::parse(in, nullptr, false);
    if (jwks.is_discarded() || !jwks.contains("keys") || !jwks["keys"].is_array()) {
      return fail(ErrorCode::kInvalidRequest,
                  "auth.oauthKeyFile must be a JWKS: {\"keys\": [private P-256 JWKs]}");
    }
    for (const auto& jwk : jwks["keys"]) {
      if (json_text(jwk, {"kty"}) != "EC" || json_text(jwk, {"crv"}) != "P-256") {
        return fail(ErrorCode::kInvalidRequest, "auth.oauthKeyFile: every key is an EC P-256 JWK");
      }
      auto secret = schema::base64_decode(json_text(jwk, {"d"}), schema::Base64Alphabet::kUrl);
      if (!secret) return fail(ErrorCode::kInvalidRequest, "auth.oauthKeyFile: a key has no d");
      auto key = firehose::PrivateKey::from_bytes(firehose::KeyCurve::kP256, *secret);
      if (!key)
        return fail(ErrorCode::kInvalidRequest, "auth.oauthKeyFile: " + key.error().message);
      std::string kid = json_text(jwk, {"kid"});
      if (kid.empty()) kid = key_id(*key);
      keys.push_back({kid, *key});
    }
    if (keys.empty()) return fail(ErrorCode::kInvalidRequest, "auth.oauthKeyFile holds no key");
    return keys;
  }
  auto stored = store.service_keys().find(kGeneratedKeyName);
  if (!stored) return std::unexpected(stored.error());
  std::string sealed;
  if (*stored) {
    sealed = **stored;
  } else {
    const auto fresh = firehose::PrivateKey::generate(firehose::KeyCurve::kP256);
    auto put = store.service_keys().put_first(kGeneratedKeyName, box.seal(fresh.bytes()));
    if (!put) return std::unexpected(put.error());
    sealed = *put;
    spdlog::info("oauth: generated the client's signing key (kept sealed in the database)");
  }
  auto secret = box.open(sealed);
  if (!secret) {
    return fail(ErrorCode::kCorrupt,
                "the stored OAuth client key does not open with auth.sessionKey; restore the key "
                "or set auth.oauthKeyFile");
  }
  auto key = firehose::PrivateKey::from_bytes(firehose::KeyCurve::kP256, *secret);
  if (!key) return std::unexpected(key.error());
  keys.push_back({key_id(*key), *key});
  return keys;
}

}  // namespace bulleted::appview
