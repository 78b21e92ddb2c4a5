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

// A NumericDate claim (RFC 7519): absent, or seconds since the epoch. Only
// integers from 0 to 2^53 are taken (what every JSON reader holds exactly);
// a fraction, a negative or a huge number is malformed, never cast.
struct TimeClaim {
  bool present = false;
  bool valid = true;
  std::int64_t value = 0;
};
TimeClaim time_claim(const nlohmann::json& payload, const char* name) {
  auto it = payload.find(name);
  if (it == payload.end()) return {};
  constexpr std::int64_t kMax = std::int64_t{1} << 53;
  if (it->is_number_unsigned()) {
    const auto value = it->get<std::uint64_t>();
    if (value <= static_cast<std::uint64_t>(kMax))
      return {true, true, static_cast<std::int64_t>(value)};
  } else if (it->is_number_integer()) {
    const auto value = it->get<std::int64_t>();
    if (value >= 0 && value <= kMax) return {true, true, value};
  }
  return {true, false, 0};
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
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

Result<bool> ServiceAuth::remember(const std::string& issuer, const std::string& key,
                                   std::int64_t exp) {
  std::lock_guard lock(mutex_);
  const std::int64_t now = now_();
  while (!expiry_.empty() && expiry_.begin()->first + options_.leeway_seconds < now) {
    auto seen = seen_.find(expiry_.begin()->second);
    if (seen != seen_.end()) {
      if (auto it = per_issuer_.find(seen->second.issuer);
          it != per_issuer_.end() && --it->second == 0) {
        per_issuer_.erase(it);
      }
      seen_.erase(seen);
    }
    expiry_.erase(expiry_.begin());
  }
  if (seen_.contains(key)) return false;
  // Each issuer has a share of the store of its own: one DID minting
  // tokens as fast as it may cannot lock every other issuer out.
  const std::size_t held = per_issuer_.contains(issuer) ? per_issuer_[issuer] : 0;
  const bool issuer_full = held >= options_.max_remembered_per_issuer;
  if (issuer_full || seen_.size() >= options_.max_remembered) {
    Error busy{ErrorCode::kRateLimited,
               issuer_full ? "service auth: this issuer has too many tokens live at once; use "
                             "fewer, or wait until some expire"
                           : "service auth: too many tokens are live at once; retry in a few "
                             "seconds"};
    busy.retry_after_seconds = issuer_full ? 60 : 5;
    return std::unexpected(busy);
  }
  seen_.emplace(key, Seen{issuer, exp});
  expiry_.emplace(exp, key);
  ++per_issuer_[issuer];
  return true;
}

namespace {

// The curve a JWT's header says it is signed on: ES256K or ES256, and no
// typ of another kind of token.
Result<firehose::KeyCurve> header_curve(const nlohmann::json& header) {
  const std::string* alg = string_claim(header, "alg");
  if (alg == nullptr) return refuse("the JWT header has no alg");
  if (*alg == "none") return refuse("alg none is refused: the token must be signed");
  if (*alg != "ES256K" && *alg != "ES256") {
    return refuse("alg " + *alg + " is not supported (ES256K or ES256)");
  }
  if (const std::string* typ = string_claim(header, "typ")) {
    // Media types are case-insensitive, and "application/" may be left out
    // (RFC 7515, 4.1.9).
    std::string kind = lower(*typ);
    if (kind.starts_with("application/")) kind.erase(0, 12);
    if (kind == "at+jwt" || kind == "refresh+jwt" || kind == "dpop+jwt") {
      return refuse("a token of typ " + *typ + " is not a service-auth token");
    }
  }
  return *alg == "ES256" ? firehose::KeyCurve::kP256 : firehose::KeyCurve::kSecp256k1;
}

}  // namespace

Result<ServiceAuth::Claims> ServiceAuth::checked_claims(const nlohmann::json& payload,
                                                        std::string_view nsid) {
  const std::string* iss = string_claim(payload, "iss");
  if (iss == nullptr) return refuse("the token has no iss");
  // A fragment names one of the DID's services (a labeler), signed with
  // another key than the account's #atproto: not a caller this app view
  // serves.
  if (iss->find('#') != std::string::npos) {
    return refuse("iss names a service of a DID (a #fragment), not an account");
  }
  const std::string& did = *iss;
  if (!schema::Did::parse(did)) return refuse("iss is not a DID");
  const std::string* aud = string_claim(payload, "aud");
  if (aud == nullptr) return refuse("the token has no aud");
  if (*aud != options_.service_did &&
      *aud != options_.service_did + std::string(kServiceFragment)) {
    return refuse("aud " + *aud + " is not this app view (" + options_.service_did + ")");
  }
  const std::string* lxm = string_claim(payload, "lxm");
  if (lxm == nullptr) {
    return refuse("the token has no lxm; ask the PDS for one bound to " + std::string(nsid));
  }
  if (*lxm != nsid)
    return refuse("lxm " + *lxm + " is not the method called (" + std::string(nsid) + ")");
  const std::int64_t now = now_();
  const TimeClaim exp = time_claim(payload, "exp");
  if (!exp.present) return refuse("the token has no exp");
  const TimeClaim iat = time_claim(payload, "iat");
  const TimeClaim nbf = time_claim(payload, "nbf");
  if (!exp.valid || !iat.valid || !nbf.valid) {
    return refuse("exp, iat and nbf must be whole seconds from 0 to 2^53");
  }
  if (exp.value + options_.leeway_seconds < now) {
    return refuse("the token expired " + std::to_string(now - exp.value) + " s ago");
  }
  if (exp.value - now > options_.max_lifetime_seconds) {
    return refuse("the token's exp is more than " + std::to_string(options_.max_lifetime_seconds) +
                  " s away");
  }
  if (iat.present && iat.value > now + options_.leeway_seconds) {
    return refuse("the token was issued in the future (iat)");
  }
  if (nbf.present && nbf.value > now + options_.leeway_seconds) {
    return refuse("the token is not valid yet (nbf)");
  }
  const std::string* jti = string_claim(payload, "jti");
  if (jti == nullptr || jti->empty() || jti->size() > 256) {
    return refuse("the token has no jti (or one longer than 256 characters)");
  }
  return Claims{did, exp.value, did + " " + *jti};
}

Result<ServiceCaller> ServiceAuth::check(std::string_view token, std::string_view nsid,
                                         KeyAccess access) {
  auto parsed = parse_jwt(token);
  if (!parsed) return refuse(parsed.error().message);
  const Jwt& jwt = *parsed;
  auto curve_of = header_curve(jwt.header);
  if (!curve_of) return std::unexpected(curve_of.error());
  const firehose::KeyCurve curve = *curve_of;
  const std::string alg(jws_algorithm(curve));
  auto claims = checked_claims(jwt.payload, nsid);
  if (!claims) return std::unexpected(claims.error());
  const std::string& did = claims->did;
  const std::string& replay_key = claims->replay_key;
  {
    std::lock_guard lock(mutex_);
    if (seen_.contains(replay_key)) return refuse("the token was used before (jti replayed)");
  }
  if (jwt.signature.size() != 64) return refuse("the signature is not 64 bytes (r || s)");

  auto verify = [&](const firehose::PublicKey& key) -> Result<void> {
    if (key.curve() != curve) {
      return refuse("alg " + alg + " does not match the issuer's " +
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
  // No place to wait on the issuer's directory: come back, rather than a
  // refusal the caller would take for a bad token.
  if (!key && key.error().code == ErrorCode::kUnavailable) return std::unexpected(key.error());
  if (!key) {
    // The caller is told what failed, not where (the operator's directory)
    // nor how (the resolver's state): that is for the log.
    spdlog::debug("service auth: cannot get the #atproto key of {}: {}", did, key.error().message);
    return refuse("cannot get the #atproto key of " + did +
                  " (its DID document could not be read)");
  }
  if (auto ok = verify(*key); !ok) {
    auto fresh = keys_.key(did, true);
    if (!fresh) return std::unexpected(ok.error());
    if (auto again = verify(*fresh); !again) return std::unexpected(again.error());
  }
  auto first = remember(did, replay_key, claims->exp);
  if (!first) return std::unexpected(first.error());
  if (!*first) return refuse("the token was used before (jti replayed)");
  return ServiceCaller{did, true};
}

}  // namespace bulleted::appview
