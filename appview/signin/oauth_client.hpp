// The app view as an AT Protocol OAuth client (pds mode): a confidential
// client, backend for its frontends, that holds each user's grant
// server-side and writes to their repo with it.
//
// - Its identity: client metadata at <publicUrl>/oauth/client-metadata.json
//   (that URL is the client_id), its public keys at /oauth/jwks.json,
//   private_key_jwt with ES256, DPoP-bound tokens, scope
//   "atproto repo:app.bulleted.node", redirect <publicUrl>/oauth/callback.
// - Signing in (begin, complete): the handle or DID to its PDS, the PDS's
//   protected-resource metadata to its authorization server, that server's
//   metadata (its issuer checked); a pushed authorization request with PKCE
//   S256, a state and a DPoP key of the sign-in's own, then the browser to the
//   authorization endpoint. The sign-in is bound to the browser that began
//   it: begin() gives a secret the browser keeps (a cookie) and only its
//   digest is stored, so a callback carried to another browser (login CSRF:
//   a page sending a victim to the attacker's callback URL) is refused. The
//   callback's state, binding and iss are checked, the code exchanged, `sub`
//   checked to be the DID resolved and its PDS to name the same
//   authorization server.
// - Calls on the user's behalf carry the DPoP-bound access token with a
//   fresh proof; a server's DPoP nonce is remembered per origin and a
//   use_dpop_nonce answer retried once with it.
//
// Every call to an authorization server (metadata, PAR, token, revocation)
// goes through the identity room's Fetcher: the network policy for every
// endpoint the server names, caps and timeouts per kind, the request gate.
// Secrets (keys, tokens, codes, verifiers) are never logged. Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "appview/signin/secret_box.hpp"
#include "firehose/client/xrpc_client.hpp"
#include "firehose/crypto.hpp"
#include "firehose/identity/fetcher.hpp"
#include "firehose/identity/identity.hpp"
#include "schema/store.hpp"

namespace bulleted::appview {

// What a sign-in asks for: the AT Protocol's own scope, and to write the
// six collections of Bulleted's published records (the repo: scopes that
// the published permission set app.bulleted.authFull stands for, asked one
// by one: include: needs a PDS that resolves permission sets).
inline constexpr std::string_view kOAuthScope =
    "atproto repo:app.bulleted.node repo:app.bulleted.note repo:app.bulleted.outline"
    " repo:app.bulleted.mirror repo:app.bulleted.comment repo:app.bulleted.commentPolicy";
// How long a sign-in may take between /oauth/login and the callback.
inline constexpr std::int64_t kSignInSeconds = 600;

// A key the client signs its assertions with; `kid` names it in the JWKS.
struct OAuthSigningKey {
  std::string kid;
  firehose::PrivateKey key;
};

// The client's keys: from `key_file` (a JWKS of private P-256 JWKs; the
// first signs, all are published, so a new key can be published beside the
// old one), else the one generated at first start and stored sealed in the
// database.
Result<std::vector<OAuthSigningKey>> load_client_keys(const std::optional<std::string>& key_file,
                                                      schema::Store& store, const SecretBox& box);

// What a session needs of its authorization server, sealed beside its tokens.
struct OAuthGrant {
  std::string issuer;
  std::string token_endpoint;
  std::string revocation_endpoint;  // "" when the server has none
  std::string dpop_key;             // the session's private P-256 key, 32 bytes
  std::int64_t expires_at = 0;      // of the access token (Unix seconds)

  nlohmann::json to_json() const;
  static Result<OAuthGrant> from_json(const nlohmann::json& json);
};

struct TokenSet {
  std::string access;
  std::string refresh;
  std::string sub;
  std::int64_t expires_at = 0;
};

struct OAuthClientOptions {
  std::string public_url;  // the app view's origin (service.publicUrl)
  bool allow_private_addresses = false;
};

// A sign-in begun: where to send the browser, and the secret it keeps until
// the callback (the sign-in cookie).
struct SignInStart {
  std::string url;
  std::string binding;
};

// A sign-in completed: who, through which PDS, with what.
struct SignedIn {
  std::string did;
  std::optional<std::string> handle;
  std::string pds_url;
  TokenSet tokens;
  OAuthGrant grant;
  std::string return_to;
};

class OAuthClient {
 public:
  // `fetcher` reaches authorization servers; `resources` the users' PDSes.
  OAuthClient(OAuthClientOptions options, std::vector<OAuthSigningKey> keys,
              std::shared_ptr<identity::Fetcher> fetcher,
              std::shared_ptr<firehose::XrpcClient> resources, identity::IdentityResolver& identity,
              SecretBox box, std::function<std::int64_t()> now = {});

  const std::string& client_id() const { return client_id_; }
  const std::string& redirect_uri() const { return redirect_uri_; }
  nlohmann::json client_metadata() const;
  nlohmann::json jwks() const;

  // Starts a sign-in for a handle or DID: the URL to send the browser to,
  // and the binding it must keep. `return_to` is a same-origin path
  // (checked by the caller).
  Result<SignInStart> begin(schema::Store& store, const std::string& identifier,
                            const std::string& return_to);
  // The callback's parameters, and the binding the browser kept, to a
  // grant. kAuthRequired when the sign-in is unknown, expired, another
  // browser's, or does not check out; the authorization server is not
  // asked anything unless the binding matches.
  Result<SignedIn> complete(schema::Store& store, const std::string& code, const std::string& state,
                            const std::string& iss, const std::string& binding);
  // The return path of a sign-in the user refused or that failed at the
  // server (its state taken), or nullopt (also when the binding is not the
  // sign-in's).
  std::optional<std::string> abandon(schema::Store& store, const std::string& state,
                                     const std::string& binding);

  // A refresh-token grant. kAuthRequired when the server refuses it (the
  // session is over); kUpstreamFailure when it could not be asked.
  Result<TokenSet> refresh(const OAuthGrant& grant, const std::string& refresh_token,
                           const std::string& did);
  // Best effort: the server forgets the token.
  void revoke(const OAuthGrant& grant, const std::string& token);
  // A request to the user's PDS with the DPoP-bound access token.
  Result<firehose::XrpcReply> resource_call(const OAuthGrant& grant, const std::string& access,
                                            firehose::XrpcRequest request);

 private:
  struct ServerInfo {
    std::string issuer;
    std::string par_endpoint;
    std::string authorization_endpoint;
    std::string token_endpoint;
    std::string revocation_endpoint;
  };
  // The authorization server of a PDS, from its metadata.
  Result<ServerInfo> server_of(const std::string& pds_url);
  Result<nlohmann::json> fetch_json(const std::string& url);
  // The pending sign-in of `state` (taken: single use) when `binding` is
  // the one it was begun with.
  Result<nlohmann::json> take_pending(schema::Store& store, const std::string& state,
                                      const std::string& binding);
  // POSTs a form to one of the server's endpoints with client
  // authentication and a DPoP proof, retrying once with a nonce.
  Result<firehose::XrpcReply> server_post(const std::string& issuer, const std::string& endpoint,
                                          const firehose::PrivateKey& dpop,
                                          std::vector<std::pair<std::string, std::string>> form);
  Result<TokenSet> tokens_of(const firehose::XrpcReply& reply, const std::string& what);
  std::string client_assertion(const std::string& audience) const;
  // Sends `request` with a DPoP proof made by `proof(nonce)`, remembering
  // the origin's nonce and retrying once when the server asks for one.
  using Send = std::function<Result<firehose::XrpcReply>(const firehose::XrpcRequest&)>;
  Result<firehose::XrpcReply> with_nonce(
      firehose::XrpcRequest request, const Send& send,
      const std::function<std::string(const std::optional<std::string>&)>& proof);

  OAuthClientOptions options_;
  std::string client_id_;
  std::string redirect_uri_;
  std::vector<OAuthSigningKey> keys_;
  std::shared_ptr<identity::Fetcher> fetcher_;
  std::shared_ptr<firehose::XrpcClient> resources_;
  identity::IdentityResolver& identity_;
  SecretBox box_;
  std::function<std::int64_t()> now_;
  std::mutex mutex_;
  std::map<std::string, std::string> nonces_;  // origin -> its latest DPoP nonce
};

// Whether `path` is a path of this origin to return to after signing in:
// "/" then no second "/" or "\", no scheme, no control characters.
bool same_origin_path(std::string_view path);

}  // namespace bulleted::appview
