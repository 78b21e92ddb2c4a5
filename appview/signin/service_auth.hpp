// Service auth: bearer JWTs minted by a caller's PDS (`atproto-proxy`, or
// com.atproto.server.getServiceAuth) that prove who is calling.
//
// A token is accepted when: `alg` is ES256K or ES256 (never none), `typ` is
// not that of an OAuth access, refresh or DPoP token (in any case, with or
// without "application/"); `iss` is an account's DID (a #fragment names one
// of its services, signed with another key: refused); `aud` is this app
// view's DID, with or without #bulleted_appview; `lxm` is the method
// called; `exp`, `iat` and `nbf` are whole seconds from 0 to 2^53, `exp`
// has not passed (a few seconds of leeway) and is not more than an hour
// away, `iat` and `nbf`, when given, are not in the future; `jti` was not
// seen within its token's lifetime; and the signature verifies with the
// #atproto key of `iss` (high-S accepted, as the reference verifiers do for
// tokens), the DID document read again once when it does not.
//
// The jti's remembered against replay are bounded in all and per issuer,
// so one DID cannot fill the store and lock the others out.
//
// Every refusal is kAuthRequired with a message that says which of these
// failed. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>

#include "firehose/verify.hpp"
#include "schema/error.hpp"

namespace bulleted::appview {

struct ServiceAuthOptions {
  std::string service_did;  // this app view's (service.did)
  std::int64_t leeway_seconds = 5;
  std::int64_t max_lifetime_seconds = 3600;
  // Tokens remembered against replay at once, in all and per issuer; beyond
  // either, new ones (of that issuer) wait (429).
  std::size_t max_remembered = 200'000;
  std::size_t max_remembered_per_issuer = 2'000;
};

enum class KeyAccess {
  kCachedOnly,  // admission: no network; a key not cached leaves the token unverified
  kFetch,       // the handler: read the DID document when needed; records the jti
};

struct ServiceCaller {
  std::string did;        // iss, without a fragment
  bool verified = false;  // false only with kCachedOnly when the key was not cached
};

class ServiceAuth {
 public:
  // `now` gives Unix seconds (tests move it).
  ServiceAuth(ServiceAuthOptions options, firehose::RepoKeys& keys,
              std::function<std::int64_t()> now = {});

  Result<ServiceCaller> check(std::string_view token, std::string_view nsid, KeyAccess access);

  std::size_t remembered() const;

 private:
  // Records iss+jti until `exp`; false when it was already there.
  Result<bool> remember(const std::string& issuer, const std::string& key, std::int64_t exp);
  // What the claims of a token to `nsid` say, once each has been checked:
  // the issuer, the expiry, the replay key (iss jti).
  struct Claims {
    std::string did;
    std::int64_t exp = 0;
    std::string replay_key;
  };
  Result<Claims> checked_claims(const nlohmann::json& payload, std::string_view nsid);

  ServiceAuthOptions options_;
  firehose::RepoKeys& keys_;
  std::function<std::int64_t()> now_;
  mutable std::mutex mutex_;
  struct Seen {
    std::string issuer;
    std::int64_t exp;
  };
  std::map<std::string, Seen> seen_;                       // iss jti -> its issuer, exp
  std::set<std::pair<std::int64_t, std::string>> expiry_;  // (exp, iss jti)
  std::map<std::string, std::size_t> per_issuer_;          // iss -> jti's remembered
};

// The WWW-Authenticate challenge of a refused bearer token.
std::string bearer_challenge(std::string_view realm, std::string_view description);

}  // namespace bulleted::appview
