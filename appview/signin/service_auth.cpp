#include "appview/signin/service_auth.hpp"

#include <spdlog/spdlog.h>

#include "appview/signin/jwt.hpp"
#include "schema/syntax.hpp"

namespace bulleted::appview {
namespace {

constexpr std::string_view kServiceFragment = "#bulleted_appview";

std::unexpected<Error> refuse(std::string message) {
  Error error{ErrorCode::kAuthRequired, "service auth: " + std::move(message)};
  error.invalid_token = true;
  return std::unexpected(std::move(error));
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

const std::string* string_claim(const nlohmann::json& payload, const char* name) {
  auto it = payload.find(name);
  return it != payload.end() && it->is_string() ? it->get_ptr<const std::string*>() : nullptr;
}

std::optional<std::int64_t> time_claim(const nlohmann::json& payload, const char* name) {
  auto it = payload.find(name);
  if (it == payload.end() || !it->is_number()) return std::nullopt;
  if (it->is_number_float()) return static_cast<std::int64_t>(it->get<double>());
  return it->get<std::int64_t>();
}

}  // namespace

std::string bearer_challenge(std::string_view realm, std::string_view description) {
  std::string quoted;
  for (char c : description) {
    if (c == '"' || c == '\\') quoted.push_back('\\');
    if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) quoted.push_back(c);
  }
  return "Bearer realm=\"" + std::string(realm) + "\", error=\"invalid_token\", " +
         "error_description=\"" + quoted + "\"";
}

ServiceAuth::ServiceAuth(ServiceAuthOptions options, firehose::RepoKeys& keys,
                         std::function<std::int64_t()> now)
    : options_(std::move(options)), keys_(keys), now_(now ? std::move(now) : unix_now) {}

std::size_t ServiceAuth::remembered() const {
  std::lock_guard lock(mutex_);
  return seen_.size();
}

Result<bool> ServiceAuth::remember(const std::string& key, std::int64_t exp) {
  std::lock_guard lock(mutex_);
  const std::int64_t now = now_();
  while (!expiry_.empty() && expiry_.begin()->first + options_.leeway_seconds < now) {
    seen_.erase(expiry_.begin()->second);
    expiry_.erase(expiry_.begin());
  }
  if (seen_.contains(key)) return false;
  if (seen_.size() >= options_.max_remembered) {
    Error busy{ErrorCode::kRateLimited,
               "service auth: too many tokens are live at once; retry in a few seconds"};
    busy.retry_after_seconds = 5;
    return std::unexpected(busy);
  }
  seen_.emplace(key, exp);
  expiry_.emplace(exp, key);
  return true;
}

Result<ServiceCaller> ServiceAuth::check(std::string_view token, std::string_view nsid,
                                         KeyAccess access) {
  auto parsed = parse_jwt(token);
  if (!parsed) return refuse(parsed.error().message);
  const Jwt& jwt = *parsed;
  const std::string* alg = string_claim(jwt.header, "alg");
  if (alg == nullptr) return refuse("the JWT header has no alg");
  if (*alg == "none") return refuse("alg none is refused: the token must be signed");
  if (*alg != "ES256K" && *alg != "ES256") {
    return refuse("alg " + *alg + " is not supported (ES256K or ES256)");
  }
  if (const std::string* typ = string_claim(jwt.header, "typ")) {
    if (*typ == "at+jwt" || *typ == "refresh+jwt" || *typ == "dpop+jwt") {
      return refuse("a token of typ " + *typ + " is not a service-auth token");
    }
  }
  const std::string* iss = string_claim(jwt.payload, "iss");
  if (iss == nullptr) return refuse("the token has no iss");
  const std::string did = iss->substr(0, iss->find('#'));
  if (!schema::Did::parse(did)) return refuse("iss is not a DID");
  const std::string* aud = string_claim(jwt.payload, "aud");
  if (aud == nullptr) return refuse("the token has no aud");
  if (*aud != options_.service_did &&
      *aud != options_.service_did + std::string(kServiceFragment)) {
    return refuse("aud " + *aud + " is not this app view (" + options_.service_did + ")");
  }
  const std::string* lxm = string_claim(jwt.payload, "lxm");
  if (lxm == nullptr) {
    return refuse("the token has no lxm; ask the PDS for one bound to " + std::string(nsid));
  }
  if (*lxm != nsid)
    return refuse("lxm " + *lxm + " is not the method called (" + std::string(nsid) + ")");
  const std::int64_t now = now_();
  const auto exp = time_claim(jwt.payload, "exp");
  if (!exp) return refuse("the token has no exp");
  if (*exp + options_.leeway_seconds < now) {
    return refuse("the token expired " + std::to_string(now - *exp) + " s ago");
  }
  if (*exp - now > options_.max_lifetime_seconds) {
    return refuse("the token's exp is more than " + std::to_string(options_.max_lifetime_seconds) +
                  " s away");
  }
  if (const auto iat = time_claim(jwt.payload, "iat");
      iat && *iat > now + options_.leeway_seconds) {
    return refuse("the token was issued in the future (iat)");
  }
  const std::string* jti = string_claim(jwt.payload, "jti");
  if (jti == nullptr || jti->empty() || jti->size() > 256) {
    return refuse("the token has no jti (or one longer than 256 characters)");
  }
  const std::string replay_key = did + " " + *jti;
  {
    std::lock_guard lock(mutex_);
    if (seen_.contains(replay_key)) return refuse("the token was used before (jti replayed)");
  }
  if (jwt.signature.size() != 64) return refuse("the signature is not 64 bytes (r || s)");

  const firehose::KeyCurve curve =
      *alg == "ES256" ? firehose::KeyCurve::kP256 : firehose::KeyCurve::kSecp256k1;
  auto verify = [&](const firehose::PublicKey& key) -> Result<void> {
    if (key.curve() != curve) {
      return refuse("alg " + *alg + " does not match the issuer's " +
                    std::string(jws_algorithm(key.curve())) + " key");
    }
    const auto check = firehose::verify_signature(key, jwt.signing_input, jwt.signature,
                                                  firehose::SignaturePolicy::kAnyS);
    if (check != firehose::SignatureCheck::kValid) {
      return refuse("the signature does not verify with the #atproto key of " + did + " (" +
                    std::string(firehose::signature_check_name(check)) + ")");
    }
    return {};
  };
  if (access == KeyAccess::kCachedOnly) {
    auto cached = keys_.cached_key(did);
    if (!cached) return ServiceCaller{did, false};
    if (auto ok = verify(*cached); !ok) {
      // The key may have rotated: the handler reads the document again.
      return ServiceCaller{did, false};
    }
    return ServiceCaller{did, true};
  }
  auto key = keys_.key(did, false);
  if (!key) return refuse("cannot get the #atproto key of " + did + ": " + key.error().message);
  if (auto ok = verify(*key); !ok) {
    auto fresh = keys_.key(did, true);
    if (!fresh) return std::unexpected(ok.error());
    if (auto again = verify(*fresh); !again) return std::unexpected(again.error());
  }
  auto first = remember(replay_key, *exp);
  if (!first) return std::unexpected(first.error());
  if (!*first) return refuse("the token was used before (jti replayed)");
  return ServiceCaller{did, true};
}

}  // namespace bulleted::appview
