#include "appview/signin/jwt.hpp"

#include <algorithm>

#include "appview/signin/secret_box.hpp"
#include "firehose/cid.hpp"
#include "schema/base64.hpp"

namespace bulleted::appview {
namespace {

bool base64url_text(std::string_view part) {
  return !part.empty() && std::all_of(part.begin(), part.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
  });
}

Result<nlohmann::json> json_part(std::string_view part, std::string_view what) {
  auto bytes = schema::base64_decode(part, schema::Base64Alphabet::kUrl);
  if (!bytes)
    return fail(ErrorCode::kAuthRequired, "the JWT's " + std::string(what) + " is not base64url");
  nlohmann::json parsed = nlohmann::json::parse(*bytes, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return fail(ErrorCode::kAuthRequired,
                "the JWT's " + std::string(what) + " is not a JSON object");
  }
  return parsed;
}

}  // namespace

std::string base64url(std::string_view bytes) {
  return schema::base64_encode(bytes, schema::Base64Alphabet::kUrl, false);
}

bool looks_like_jwt(std::string_view token) {
  return token.starts_with("eyJ") && std::count(token.begin(), token.end(), '.') == 2;
}

Result<Jwt> parse_jwt(std::string_view token) {
  if (token.size() > kMaxJwtBytes) {
    return fail(ErrorCode::kAuthRequired,
                "the JWT is longer than " + std::to_string(kMaxJwtBytes) + " bytes");
  }
  const std::size_t first = token.find('.');
  const std::size_t second = first == std::string_view::npos ? first : token.find('.', first + 1);
  if (second == std::string_view::npos || token.find('.', second + 1) != std::string_view::npos) {
    return fail(ErrorCode::kAuthRequired, "a JWT has three parts separated by dots");
  }
  const std::string_view header = token.substr(0, first);
  const std::string_view payload = token.substr(first + 1, second - first - 1);
  const std::string_view signature = token.substr(second + 1);
  if (!base64url_text(header) || !base64url_text(payload)) {
    return fail(ErrorCode::kAuthRequired, "the JWT's parts are not base64url");
  }
  Jwt jwt;
  auto parsed_header = json_part(header, "header");
  if (!parsed_header) return std::unexpected(parsed_header.error());
  auto parsed_payload = json_part(payload, "payload");
  if (!parsed_payload) return std::unexpected(parsed_payload.error());
  jwt.header = std::move(*parsed_header);
  jwt.payload = std::move(*parsed_payload);
  jwt.signing_input = std::string(token.substr(0, second));
  if (!signature.empty()) {
    auto bytes = base64url_text(signature)
                     ? schema::base64_decode(signature, schema::Base64Alphabet::kUrl)
                     : std::nullopt;
    if (!bytes) return fail(ErrorCode::kAuthRequired, "the JWT's signature is not base64url");
    jwt.signature = std::move(*bytes);
  }
  return jwt;
}

std::string_view jws_algorithm(firehose::KeyCurve curve) {
  return curve == firehose::KeyCurve::kP256 ? "ES256" : "ES256K";
}

std::string sign_jwt(nlohmann::json header, const nlohmann::json& payload,
                     const firehose::PrivateKey& key) {
  header["alg"] = jws_algorithm(key.curve());
  const std::string input = base64url(header.dump()) + "." + base64url(payload.dump());
  return input + "." + base64url(key.sign(input));
}

nlohmann::json public_jwk(const firehose::PublicKey& key) {
  const std::string point = key.uncompressed();
  return {{"kty", "EC"},
          {"crv", key.curve() == firehose::KeyCurve::kP256 ? "P-256" : "secp256k1"},
          {"x", base64url(std::string_view(point).substr(1, 32))},
          {"y", base64url(std::string_view(point).substr(33, 32))}};
}

std::string dpop_proof(const firehose::PrivateKey& key, std::string_view htm, std::string_view htu,
                       const std::optional<std::string>& nonce,
                       const std::optional<std::string>& access_token, std::int64_t now) {
  nlohmann::json payload = {{"jti", random_id("", 16)},
                            {"htm", htm},
                            {"htu", htu.substr(0, htu.find_first_of("?#"))},
                            {"iat", now}};
  if (nonce) payload["nonce"] = *nonce;
  if (access_token) payload["ath"] = base64url(firehose::sha256(*access_token));
  return sign_jwt({{"typ", "dpop+jwt"}, {"jwk", public_jwk(key.public_key())}}, payload, key);
}

std::string pkce_challenge(std::string_view verifier) {
  return base64url(firehose::sha256(verifier));
}

}  // namespace bulleted::appview
