#include "appview/signin/oauth_client.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "appview/signin/jwt.hpp"
#include "firehose/cid.hpp"
#include "firehose/client/network_policy.hpp"
#include "schema/base64.hpp"

namespace bulleted::appview {
namespace {

using firehose::json_text;
using nlohmann::json;

constexpr std::string_view kAssertionType =
    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Error refused(std::string message) {
  Error error{ErrorCode::kAuthRequired, std::move(message)};
  return error;
}

// "the server said X: Y" from an OAuth error answer.
std::string oauth_error_text(const firehose::XrpcReply& reply) {
  const json body = reply.json();
  std::string text = "HTTP " + std::to_string(reply.status);
  if (const std::string error = json_text(body, {"error"}); !error.empty()) text += " " + error;
  if (const std::string description = json_text(body, {"error_description"});
      !description.empty()) {
    text += ": " + description;
  }
  return text;
}

}  // namespace

bool same_origin_path(std::string_view path) {
  if (path.empty() || path[0] != '/' || path.size() > 2048) return false;
  if (path.size() > 1 && (path[1] == '/' || path[1] == '\\')) return false;
  for (unsigned char c : path) {
    if (c < 0x20 || c == 0x7f || c == '\\') return false;
  }
  return true;
}

json OAuthGrant::to_json() const {
  return {{"issuer", issuer},
          {"tokenEndpoint", token_endpoint},
          {"revocationEndpoint", revocation_endpoint},
          {"dpopKey", base64url(dpop_key)},
          {"expiresAt", expires_at}};
}

Result<OAuthGrant> OAuthGrant::from_json(const json& value) {
  OAuthGrant grant;
  grant.issuer = json_text(value, {"issuer"});
  grant.token_endpoint = json_text(value, {"tokenEndpoint"});
  grant.revocation_endpoint = json_text(value, {"revocationEndpoint"});
  auto key = schema::base64_decode(json_text(value, {"dpopKey"}), schema::Base64Alphabet::kUrl);
  if (grant.issuer.empty() || grant.token_endpoint.empty() || !key || key->size() != 32) {
    return fail(ErrorCode::kCorrupt, "a stored OAuth grant is incomplete");
  }
  grant.dpop_key = std::move(*key);
  if (auto it = value.find("expiresAt"); it != value.end() && it->is_number_integer()) {
    grant.expires_at = it->get<std::int64_t>();
  }
  return grant;
}

OAuthClient::OAuthClient(OAuthClientOptions options, std::vector<OAuthSigningKey> keys,
                         std::shared_ptr<identity::Fetcher> fetcher,
                         std::shared_ptr<firehose::XrpcClient> resources,
                         identity::IdentityResolver& identity, SecretBox box,
                         std::function<std::int64_t()> now)
    : options_(std::move(options)),
      client_id_(options_.public_url + "/oauth/client-metadata.json"),
      redirect_uri_(options_.public_url + "/oauth/callback"),
      keys_(std::move(keys)),
      fetcher_(std::move(fetcher)),
      resources_(std::move(resources)),
      identity_(identity),
      box_(std::move(box)),
      now_(now ? std::move(now) : unix_now) {}

json OAuthClient::client_metadata() const {
  return {{"client_id", client_id_},
          {"client_name", "Bulleted"},
          {"client_uri", options_.public_url},
          {"application_type", "web"},
          {"grant_types", {"authorization_code", "refresh_token"}},
          {"response_types", {"code"}},
          {"redirect_uris", {redirect_uri_}},
          {"scope", kOAuthScope},
          {"token_endpoint_auth_method", "private_key_jwt"},
          {"token_endpoint_auth_signing_alg", "ES256"},
          {"jwks_uri", options_.public_url + "/oauth/jwks.json"},
          {"dpop_bound_access_tokens", true}};
}

json OAuthClient::jwks() const {
  json keys = json::array();
  for (const auto& key : keys_) {
    json jwk = public_jwk(key.key.public_key());
    jwk["kid"] = key.kid;
    jwk["use"] = "sig";
    jwk["alg"] = "ES256";
    keys.push_back(std::move(jwk));
  }
  return {{"keys", std::move(keys)}};
}

std::string OAuthClient::client_assertion(const std::string& audience) const {
  const std::int64_t now = now_();
  return sign_jwt({{"typ", "JWT"}, {"kid", keys_.front().kid}},
                  {{"iss", client_id_},
                   {"sub", client_id_},
                   {"aud", audience},
                   {"jti", random_id("", 16)},
                   {"iat", now},
                   {"exp", now + 60}},
                  keys_.front().key);
}

Result<json> OAuthClient::fetch_json(const std::string& url) {
  auto parts = firehose::split_url(url);
  if (!parts) return std::unexpected(parts.error());
  auto reply = fetcher_->fetch(identity::FetchKind::kOAuthMetadata, identity::Target::kNetwork,
                               {.method = "GET", .base_url = parts->first, .path = parts->second});
  if (!reply) return std::unexpected(reply.error());
  if (reply->status != 200) {
    return fail(ErrorCode::kUpstreamFailure,
                url + " answered HTTP " + std::to_string(reply->status));
  }
  json body = reply->json();
  if (!body.is_object()) return fail(ErrorCode::kUpstreamFailure, url + " is not a JSON object");
  return body;
}

Result<OAuthClient::ServerInfo> OAuthClient::server_of(const std::string& pds_url) {
  auto resource = fetch_json(pds_url + "/.well-known/oauth-protected-resource");
  if (!resource) return std::unexpected(resource.error());
  const auto servers = resource->find("authorization_servers");
  if (servers == resource->end() || !servers->is_array() || servers->empty() ||
      !servers->front().is_string()) {
    return fail(ErrorCode::kUpstreamFailure, pds_url + " names no authorization server");
  }
  ServerInfo info;
  info.issuer = servers->front().get<std::string>();
  auto metadata = fetch_json(info.issuer + "/.well-known/oauth-authorization-server");
  if (!metadata) return std::unexpected(metadata.error());
  if (json_text(*metadata, {"issuer"}) != info.issuer) {
    return fail(ErrorCode::kUpstreamFailure,
                "the authorization server's metadata names another issuer than " + info.issuer);
  }
  info.par_endpoint = json_text(*metadata, {"pushed_authorization_request_endpoint"});
  info.authorization_endpoint = json_text(*metadata, {"authorization_endpoint"});
  info.token_endpoint = json_text(*metadata, {"token_endpoint"});
  info.revocation_endpoint = json_text(*metadata, {"revocation_endpoint"});
  for (const std::string* endpoint :
       {&info.par_endpoint, &info.authorization_endpoint, &info.token_endpoint}) {
    if (endpoint->empty()) {
      return fail(ErrorCode::kUpstreamFailure,
                  "the authorization server " + info.issuer +
                      " lacks pushed authorization requests or a token endpoint");
    }
  }
  // Every endpoint the server names is the network's address, the optional
  // revocation endpoint included (a sign-out POSTs to it).
  for (const std::string* endpoint : {&info.par_endpoint, &info.authorization_endpoint,
                                      &info.token_endpoint, &info.revocation_endpoint}) {
    if (endpoint->empty()) continue;
    if (auto allowed = firehose::check_network_url(*endpoint, options_.allow_private_addresses);
        !allowed) {
      return fail(ErrorCode::kUpstreamFailure, "the authorization server " + info.issuer +
                                                   " names an endpoint this app view may not "
                                                   "call: " +
                                                   allowed.error().message);
    }
  }
  return info;
}

Result<firehose::XrpcReply> OAuthClient::with_nonce(
    firehose::XrpcRequest request, const Send& send,
    const std::function<std::string(const std::optional<std::string>&)>& proof) {
  const std::string origin = request.base_url;
  std::optional<std::string> nonce;
  {
    std::lock_guard lock(mutex_);
    if (auto it = nonces_.find(origin); it != nonces_.end()) nonce = it->second;
  }
  const std::size_t dpop_header = request.headers.size();
  request.headers.emplace_back("DPoP", proof(nonce));
  for (int attempt = 0;; ++attempt) {
    auto reply = send(request);
    if (!reply) return reply;
    const auto fresh = reply->header("dpop-nonce");
    if (fresh) {
      std::lock_guard lock(mutex_);
      nonces_[origin] = *fresh;
    }
    const bool wants_nonce =
        (reply->status == 400 || reply->status == 401) &&
        (json_text(reply->json(), {"error"}) == "use_dpop_nonce" ||
         reply->header("www-authenticate").value_or("").find("use_dpop_nonce") !=
             std::string::npos);
    if (!wants_nonce || !fresh || attempt > 0) return reply;
    request.headers[dpop_header].second = proof(fresh);
  }
}

Result<firehose::XrpcReply> OAuthClient::server_post(
    const std::string& issuer, const std::string& endpoint, const firehose::PrivateKey& dpop,
    std::vector<std::pair<std::string, std::string>> form) {
  auto parts = firehose::split_url(endpoint);
  if (!parts) return std::unexpected(parts.error());
  form.emplace_back("client_id", client_id_);
  form.emplace_back("client_assertion_type", std::string(kAssertionType));
  form.emplace_back("client_assertion", client_assertion(issuer));
  firehose::XrpcRequest request{.method = "POST", .base_url = parts->first, .path = parts->second};
  request.form = std::move(form);
  return with_nonce(
      std::move(request),
      [this](const firehose::XrpcRequest& r) {
        return fetcher_->fetch(identity::FetchKind::kOAuthEndpoint, identity::Target::kNetwork, r);
      },
      [&](const std::optional<std::string>& nonce) {
        return dpop_proof(dpop, "POST", endpoint, nonce, std::nullopt, now_());
      });
}

Result<TokenSet> OAuthClient::tokens_of(const firehose::XrpcReply& reply, const std::string& what) {
  if (reply.status != 200) {
    if (reply.status >= 500 || reply.status == 429) {
      return fail(ErrorCode::kUpstreamFailure, what + ": " + oauth_error_text(reply));
    }
    return std::unexpected(refused(what + " refused: " + oauth_error_text(reply)));
  }
  const json body = reply.json();
  TokenSet tokens;
  tokens.access = json_text(body, {"access_token"});
  tokens.refresh = json_text(body, {"refresh_token"});
  tokens.sub = json_text(body, {"sub"});
  if (tokens.access.empty() || tokens.sub.empty()) {
    return fail(ErrorCode::kUpstreamFailure, what + ": the answer has no access token or sub");
  }
  if (json_text(body, {"token_type"}) != "DPoP") {
    return fail(ErrorCode::kUpstreamFailure, what + ": the token is not DPoP-bound");
  }
  const std::string scope = json_text(body, {"scope"});
  if (!(" " + scope + " ").contains(" atproto ")) {
    return fail(ErrorCode::kUpstreamFailure, what + ": the grant lacks the atproto scope");
  }
  std::int64_t lifetime = 300;
  if (auto it = body.find("expires_in"); it != body.end() && it->is_number()) {
    lifetime = it->get<std::int64_t>();
  }
  tokens.expires_at = now_() + lifetime;
  return tokens;
}

Result<SignInStart> OAuthClient::begin(schema::Store& store, const std::string& identifier,
                                       const std::string& return_to) {
  auto did = identity_.did_of(identifier);
  if (!did) return std::unexpected(did.error());
  auto pds = identity_.pds_of(*did);
  if (!pds) return std::unexpected(pds.error());
  auto server = server_of(*pds);
  if (!server) return std::unexpected(server.error());
  const auto dpop = firehose::PrivateKey::generate(firehose::KeyCurve::kP256);
  const std::string verifier = random_id("", 32);
  const std::string state = random_id("", 16);
  const std::string binding = random_id("", 32);
  std::vector<std::pair<std::string, std::string>> form = {
      {"response_type", "code"},
      {"redirect_uri", redirect_uri_},
      {"scope", std::string(kOAuthScope)},
      {"state", state},
      {"code_challenge", pkce_challenge(verifier)},
      {"code_challenge_method", "S256"},
      {"login_hint", identifier}};
  auto reply = server_post(server->issuer, server->par_endpoint, dpop, std::move(form));
  if (!reply) return std::unexpected(reply.error());
  const std::string request_uri = json_text(reply->json(), {"request_uri"});
  if (reply->status != 201 && reply->status != 200) {
    return fail(
        ErrorCode::kUpstreamFailure,
        "the authorization server refused the sign-in request: " + oauth_error_text(*reply));
  }
  if (request_uri.empty()) {
    return fail(ErrorCode::kUpstreamFailure, "the authorization server gave no request_uri");
  }
  const json pending = {{"did", *did},
                        {"identifier", identifier},
                        {"pds", *pds},
                        {"issuer", server->issuer},
                        {"tokenEndpoint", server->token_endpoint},
                        {"revocationEndpoint", server->revocation_endpoint},
                        {"verifier", verifier},
                        {"dpopKey", base64url(dpop.bytes())},
                        {"binding", base64url(firehose::sha256(binding))},
                        {"returnTo", return_to}};
  if (auto r = store.oauth_requests().put(state, box_.seal(pending.dump()), now_(), kSignInSeconds);
      !r) {
    return std::unexpected(r.error());
  }
  spdlog::info("oauth: sign-in of {} started at {}", *did, server->issuer);
  return SignInStart{
      server->authorization_endpoint + "?" +
          firehose::form_encode({{"client_id", client_id_}, {"request_uri", request_uri}}),
      binding};
}

Result<json> OAuthClient::take_pending(schema::Store& store, const std::string& state,
                                       const std::string& binding) {
  auto taken = store.oauth_requests().take(state, now_(), kSignInSeconds);
  if (!taken) return std::unexpected(taken.error());
  if (!*taken) return std::unexpected(refused("this sign-in is unknown or expired; sign in again"));
  auto opened = box_.open(**taken);
  if (!opened) return std::unexpected(refused("this sign-in cannot be read; sign in again"));
  json pending = json::parse(*opened, nullptr, false);
  const std::string expected = json_text(pending, {"binding"});
  if (binding.empty() || expected.empty() ||
      !schema::constant_time_equal(base64url(firehose::sha256(binding)), expected)) {
    return std::unexpected(
        refused("this sign-in was begun in another browser; sign in again from this one"));
  }
  return pending;
}

std::optional<std::string> OAuthClient::abandon(schema::Store& store, const std::string& state,
                                                const std::string& binding) {
  auto pending = take_pending(store, state, binding);
  if (!pending) return std::nullopt;
  return json_text(*pending, {"returnTo"});
}

Result<SignedIn> OAuthClient::complete(schema::Store& store, const std::string& code,
                                       const std::string& state, const std::string& iss,
                                       const std::string& binding) {
  auto taken = take_pending(store, state, binding);
  if (!taken) return std::unexpected(taken.error());
  const json pending = std::move(*taken);
  SignedIn signed_in;
  signed_in.did = json_text(pending, {"did"});
  signed_in.pds_url = json_text(pending, {"pds"});
  signed_in.return_to = json_text(pending, {"returnTo"});
  signed_in.grant.issuer = json_text(pending, {"issuer"});
  signed_in.grant.token_endpoint = json_text(pending, {"tokenEndpoint"});
  signed_in.grant.revocation_endpoint = json_text(pending, {"revocationEndpoint"});
  auto dpop_bytes =
      schema::base64_decode(json_text(pending, {"dpopKey"}), schema::Base64Alphabet::kUrl);
  if (!dpop_bytes) return std::unexpected(refused("this sign-in cannot be read; sign in again"));
  signed_in.grant.dpop_key = *dpop_bytes;
  if (iss != signed_in.grant.issuer) {
    return std::unexpected(
        refused("the callback's iss is not the authorization server the sign-in went to"));
  }
  auto dpop = firehose::PrivateKey::from_bytes(firehose::KeyCurve::kP256, *dpop_bytes);
  if (!dpop) return std::unexpected(dpop.error());
  auto reply = server_post(signed_in.grant.issuer, signed_in.grant.token_endpoint, *dpop,
                           {{"grant_type", "authorization_code"},
                            {"code", code},
                            {"redirect_uri", redirect_uri_},
                            {"code_verifier", json_text(pending, {"verifier"})}});
  if (!reply) return std::unexpected(reply.error());
  auto tokens = tokens_of(*reply, "the code exchange");
  if (!tokens) return std::unexpected(tokens.error());
  if (tokens->sub != signed_in.did) {
    return std::unexpected(
        refused("the authorization server signed in " + tokens->sub + ", not " + signed_in.did));
  }
  // The account's PDS must name this server: a server may not speak for
  // accounts that are not its own.
  identity_.forget(signed_in.did);
  auto pds = identity_.pds_of(signed_in.did);
  if (!pds) return std::unexpected(pds.error());
  auto server = server_of(*pds);
  if (!server) return std::unexpected(server.error());
  if (server->issuer != signed_in.grant.issuer) {
    return std::unexpected(refused("the PDS of " + signed_in.did +
                                   " names another authorization server than the one that "
                                   "signed it in"));
  }
  signed_in.pds_url = *pds;
  signed_in.tokens = std::move(*tokens);
  signed_in.grant.expires_at = signed_in.tokens.expires_at;
  const std::string identifier = json_text(pending, {"identifier"});
  if (!identifier.starts_with("did:")) signed_in.handle = identifier;
  spdlog::info("oauth: {} signed in through {}", signed_in.did, signed_in.grant.issuer);
  return signed_in;
}

Result<TokenSet> OAuthClient::refresh(const OAuthGrant& grant, const std::string& refresh_token,
                                      const std::string& did) {
  auto dpop = firehose::PrivateKey::from_bytes(firehose::KeyCurve::kP256, grant.dpop_key);
  if (!dpop) return std::unexpected(dpop.error());
  auto reply = server_post(grant.issuer, grant.token_endpoint, *dpop,
                           {{"grant_type", "refresh_token"}, {"refresh_token", refresh_token}});
  if (!reply) return std::unexpected(reply.error());
  auto tokens = tokens_of(*reply, "the token refresh");
  if (!tokens) return tokens;
  if (tokens->sub != did) {
    return std::unexpected(refused("the refreshed grant is for " + tokens->sub + ", not " + did));
  }
  return tokens;
}

void OAuthClient::revoke(const OAuthGrant& grant, const std::string& token) {
  if (grant.revocation_endpoint.empty()) return;
  auto dpop = firehose::PrivateKey::from_bytes(firehose::KeyCurve::kP256, grant.dpop_key);
  if (!dpop) return;
  auto reply = server_post(grant.issuer, grant.revocation_endpoint, *dpop, {{"token", token}});
  if (!reply || reply->status != 200) {
    spdlog::info("oauth: {} did not confirm a revocation", grant.issuer);
  }
}

Result<firehose::XrpcReply> OAuthClient::resource_call(const OAuthGrant& grant,
                                                       const std::string& access,
                                                       firehose::XrpcRequest request) {
  auto dpop = firehose::PrivateKey::from_bytes(firehose::KeyCurve::kP256, grant.dpop_key);
  if (!dpop) return std::unexpected(dpop.error());
  request.bearer.reset();
  request.headers.emplace_back("Authorization", "DPoP " + access);
  request.public_only = !options_.allow_private_addresses;
  const std::string url = request.base_url + request.path;
  const std::string method = request.method;
  return with_nonce(
      std::move(request), [this](const firehose::XrpcRequest& r) { return resources_->call(r); },
      [&](const std::optional<std::string>& nonce) {
        return dpop_proof(*dpop, method, url, nonce, access, now_());
      });
}

}  // namespace bulleted::appview
