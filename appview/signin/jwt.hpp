// Compact JWS (RFC 7515) with the AT Protocol's algorithms: ES256 (P-256)
// and ES256K (secp256k1), signatures as r || s (64 bytes, base64url).
//
// Parsing is bounded (kMaxJwtBytes) and decides nothing about the claims:
// that is the verifier's job (service_auth.hpp).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "firehose/crypto.hpp"
#include "schema/error.hpp"

namespace bulleted::appview {

// Longer bearer tokens are refused unread.
inline constexpr std::size_t kMaxJwtBytes = 8 * 1024;

struct Jwt {
  nlohmann::json header;      // an object
  nlohmann::json payload;     // an object
  std::string signing_input;  // "<header>.<payload>" as sent
  std::string signature;      // the decoded signature bytes
};

// Three base64url parts, the first an encoded JSON object ("eyJ"): the shape
// that tells a JWT from the app view's own bearer tokens.
bool looks_like_jwt(std::string_view token);

// kAuthRequired with the reason when `token` is not a well-formed JWS whose
// header and payload are JSON objects.
Result<Jwt> parse_jwt(std::string_view token);

// The JWS algorithm name of a curve's ECDSA: "ES256" or "ES256K".
std::string_view jws_algorithm(firehose::KeyCurve curve);

// Signs `payload` with `header` (its "alg" is set from the key's curve).
std::string sign_jwt(nlohmann::json header, const nlohmann::json& payload,
                     const firehose::PrivateKey& key);

// base64url without padding, as JOSE writes it.
std::string base64url(std::string_view bytes);

// A public key as a JWK: {"kty":"EC","crv":"P-256"|"secp256k1","x","y"}.
nlohmann::json public_jwk(const firehose::PublicKey& key);

// A DPoP proof (RFC 9449) for one request: typ dpop+jwt, the key's public
// JWK in the header; jti, htm, htu (no query or fragment), iat, the
// server's nonce when it gave one, and ath (the access token's SHA-256) for
// resource requests. `now` is Unix seconds.
std::string dpop_proof(const firehose::PrivateKey& key, std::string_view htm, std::string_view htu,
                       const std::optional<std::string>& nonce,
                       const std::optional<std::string>& access_token, std::int64_t now);

// PKCE (RFC 7636): the S256 challenge of a verifier.
std::string pkce_challenge(std::string_view verifier);

}  // namespace bulleted::appview
