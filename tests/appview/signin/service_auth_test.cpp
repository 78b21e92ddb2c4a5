// Service auth: JWTs as a PDS mints them (ES256K and ES256, r || s
// signatures), checked claim by claim, signature against the issuer's key
// (read again once when it does not verify), replay by jti.
#include "appview/signin/service_auth.hpp"

#include <gtest/gtest.h>

#include <map>

#include "appview/signin/jwt.hpp"
#include "schema/base64.hpp"
#include "tests/support/high_s.hpp"

namespace bulleted::appview {
namespace {

using firehose::KeyCurve;
using firehose::PrivateKey;
using firehose::PublicKey;
using nlohmann::json;

constexpr const char* kAppView = "did:web:appview.bulleted.internal";
constexpr const char* kAlice = "did:plc:aliceaaaaaaaaaaaaaaaaaaaa";
constexpr const char* kMethod = "app.bulleted.createNode";

// Keys of DIDs, counting the document reads a verifier asks for.
class Keys final : public firehose::RepoKeys {
 public:
  Result<PublicKey> key(const std::string& did, bool fresh) override {
    ++reads;
    if (fresh) ++fresh_reads;
    auto it = current.find(did);
    if (it == current.end()) return fail(ErrorCode::kNotFound, "no DID document for " + did);
    cached.insert_or_assign(did, it->second);
    return it->second;
  }
  std::optional<PublicKey> cached_key(const std::string& did) override {
    auto it = cached.find(did);
    if (it == cached.end()) return std::nullopt;
    return it->second;
  }
  void forget(const std::string& did) override { cached.erase(did); }

  std::map<std::string, PublicKey> current;  // what the DID documents say
  std::map<std::string, PublicKey> cached;   // what was read before
  int reads = 0;
  int fresh_reads = 0;
};

class ServiceAuthTest : public ::testing::Test {
 protected:
  ServiceAuthTest()
      : alice_k256_(PrivateKey::generate(KeyCurve::kSecp256k1)),
        alice_p256_(PrivateKey::generate(KeyCurve::kP256)),
        auth_(ServiceAuthOptions{.service_did = kAppView}, keys_, [this] { return now_; }) {
    keys_.current.emplace(kAlice, alice_k256_.public_key());
  }

  json claims() const {
    return {{"iss", kAlice}, {"aud", kAppView},  {"lxm", kMethod},
            {"iat", now_},   {"exp", now_ + 60}, {"jti", "jti-" + std::to_string(++serial_)}};
  }
  std::string mint(const json& payload, const PrivateKey* key = nullptr,
                   json header = {{"typ", "JWT"}}) const {
    return sign_jwt(std::move(header), payload, key ? *key : alice_k256_);
  }
  Result<ServiceCaller> check(const std::string& token, std::string_view nsid = kMethod) {
    return auth_.check(token, nsid, KeyAccess::kFetch);
  }
  // The refusal's message, or "accepted".
  std::string verdict(const std::string& token, std::string_view nsid = kMethod) {
    auto checked = check(token, nsid);
    if (checked) return "accepted";
    EXPECT_EQ(checked.error().code, ErrorCode::kAuthRequired);
    EXPECT_TRUE(checked.error().invalid_token);
    return checked.error().message;
  }

  std::int64_t now_ = 1'800'000'000;
  mutable int serial_ = 0;
  Keys keys_;
  PrivateKey alice_k256_;
  PrivateKey alice_p256_;
  ServiceAuth auth_;
};

TEST_F(ServiceAuthTest, TokensOfBothCurvesAreAcceptedForEitherFormOfTheAudience) {
  auto accepted = check(mint(claims()));
  ASSERT_TRUE(accepted.has_value()) << accepted.error().message;
  EXPECT_EQ(accepted->did, kAlice);
  EXPECT_TRUE(accepted->verified);

  json with_fragment = claims();
  with_fragment["aud"] = std::string(kAppView) + "#bulleted_appview";
  EXPECT_EQ(verdict(mint(with_fragment)), "accepted");

  keys_.current.insert_or_assign(kAlice, alice_p256_.public_key());
  keys_.cached.clear();
  const std::string es256 = mint(claims(), &alice_p256_);
  auto header = parse_jwt(es256);
  ASSERT_TRUE(header.has_value());
  EXPECT_EQ(header->header["alg"], "ES256");
  EXPECT_EQ(verdict(es256), "accepted");
}

TEST_F(ServiceAuthTest, AnIssuerWithAFragmentIsAServiceNotTheAccountAndIsRefused) {
  // A labeler's (or any service's) fragment names a service of the DID,
  // whose tokens are signed with another key than the account's #atproto:
  // never taken as the account itself, even signed with the account's key.
  json service_iss = claims();
  service_iss["iss"] = std::string(kAlice) + "#atproto_labeler";
  EXPECT_NE(verdict(mint(service_iss)).find("names a service"), std::string::npos);
  EXPECT_EQ(keys_.reads, 0) << "refused before any key is read";
}

TEST_F(ServiceAuthTest, EachClaimThatDoesNotHoldIsRefusedByName) {
  auto with = [&](const char* name, json value) {
    json payload = claims();
    if (value.is_null()) {
      payload.erase(name);
    } else {
      payload[name] = std::move(value);
    }
    return mint(payload);
  };
  EXPECT_NE(verdict(with("lxm", "app.bulleted.deleteNode"))
                .find("lxm app.bulleted.deleteNode is not the method"),
            std::string::npos);
  EXPECT_NE(verdict(with("lxm", nullptr)).find("no lxm"), std::string::npos);
  EXPECT_NE(verdict(with("aud", "did:web:elsewhere.example")).find("is not this app view"),
            std::string::npos);
  EXPECT_NE(
      verdict(with("aud", std::string(kAppView) + "#atproto_pds")).find("is not this app view"),
      std::string::npos);
  EXPECT_NE(verdict(with("aud", nullptr)).find("no aud"), std::string::npos);
  EXPECT_NE(verdict(with("exp", now_ - 30)).find("expired 30 s ago"), std::string::npos);
  EXPECT_EQ(verdict(with("exp", now_ - 3)), "accepted") << "within the leeway";
  EXPECT_NE(verdict(with("exp", nullptr)).find("no exp"), std::string::npos);
  EXPECT_NE(verdict(with("exp", now_ + 7200)).find("more than 3600 s away"), std::string::npos);
  EXPECT_NE(verdict(with("iat", now_ + 600)).find("issued in the future"), std::string::npos);
  EXPECT_NE(verdict(with("iss", "alice")).find("iss is not a DID"), std::string::npos);
  EXPECT_NE(verdict(with("jti", nullptr)).find("no jti"), std::string::npos);
  // nbf: not before, with the same leeway as the others.
  EXPECT_NE(verdict(with("nbf", now_ + 600)).find("not valid yet (nbf)"), std::string::npos);
  EXPECT_EQ(verdict(with("nbf", now_ + 3)), "accepted") << "within the leeway";
  EXPECT_EQ(verdict(with("nbf", now_ - 60)), "accepted");
}

TEST_F(ServiceAuthTest, TimeClaimsAreWholeSecondsInRangeNeverCastFromAnythingElse) {
  auto with = [&](const char* name, json value) {
    json payload = claims();
    payload[name] = std::move(value);
    return mint(payload);
  };
  // 1e300 cast to an integer is undefined behaviour; a fraction, a negative
  // or a number past 2^53 is not a NumericDate this app view reads.
  for (const char* name : {"exp", "iat", "nbf"}) {
    for (const json& bad :
         {json(1e300), json(-1e300), json(static_cast<double>(now_) + 0.5), json(-5),
          json(std::uint64_t{1} << 60), json("1800000060"), json(nullptr)}) {
      if (bad.is_null() && std::string(name) == "exp") continue;  // "no exp", tested above
      const std::string refused = verdict(with(name, bad));
      EXPECT_NE(refused.find("whole seconds"), std::string::npos)
          << name << " " << bad.dump() << ": " << refused;
    }
  }
  EXPECT_EQ(verdict(with("exp", now_ + 60)), "accepted");
}

TEST_F(ServiceAuthTest, TheTypOfAnOAuthTokenIsRefusedInAnySpelling) {
  for (const char* typ : {"at+jwt", "AT+JWT", "At+Jwt", "application/at+jwt", "APPLICATION/AT+JWT",
                          "refresh+JWT", "application/dpop+jwt", "DPOP+JWT"}) {
    EXPECT_NE(verdict(mint(claims(), nullptr, {{"typ", typ}})).find("is not a service-auth token"),
              std::string::npos)
        << typ;
  }
  EXPECT_EQ(verdict(mint(claims(), nullptr, {{"typ", "JWT"}})), "accepted");
}

TEST_F(ServiceAuthTest, AReplayedTokenIsRefusedUntilItWouldHaveExpiredAnyway) {
  const std::string token = mint(claims());
  EXPECT_EQ(verdict(token), "accepted");
  EXPECT_NE(verdict(token).find("jti replayed"), std::string::npos);
  EXPECT_EQ(auth_.remembered(), 1u);
  // Another issuer may use the same jti.
  const PrivateKey bob = PrivateKey::generate(KeyCurve::kSecp256k1);
  keys_.current.emplace("did:plc:bobbbbbbbbbbbbbbbbbbbbbb", bob.public_key());
  json bobs = parse_jwt(token)->payload;
  bobs["iss"] = "did:plc:bobbbbbbbbbbbbbbbbbbbbbb";
  EXPECT_EQ(verdict(mint(bobs, &bob)), "accepted");
  // Past its exp (and leeway) the token is refused as expired, and the
  // cache forgets it.
  now_ += 120;
  EXPECT_NE(verdict(token).find("expired"), std::string::npos);
  EXPECT_EQ(verdict(mint(claims())), "accepted");
  EXPECT_EQ(auth_.remembered(), 1u) << "the two expired entries were dropped";
}

TEST_F(ServiceAuthTest, UnsignedOtherAlgorithmAndOAuthTokensAreRefused) {
  const json payload = claims();
  const std::string body = base64url(payload.dump());
  EXPECT_NE(verdict(base64url(json{{"alg", "none"}}.dump()) + "." + body + ".").find("alg none"),
            std::string::npos);
  EXPECT_NE(verdict(base64url(json{{"alg", "HS256"}}.dump()) + "." + body + "." + base64url("mac"))
                .find("alg HS256 is not supported"),
            std::string::npos);
  EXPECT_NE(verdict(base64url(json{{"typ", "JWT"}}.dump()) + "." + body + ".").find("no alg"),
            std::string::npos);
  for (const char* typ : {"at+jwt", "refresh+jwt", "dpop+jwt"}) {
    EXPECT_NE(verdict(mint(claims(), nullptr, {{"typ", typ}})).find("not a service-auth token"),
              std::string::npos)
        << typ;
  }
  // An ES256 header over a secp256k1 issuer key.
  const std::string k256 = mint(claims());
  const std::string relabelled =
      base64url(json{{"alg", "ES256"}}.dump()) + k256.substr(k256.find('.'));
  EXPECT_NE(verdict(relabelled).find("does not match the issuer's ES256K key"), std::string::npos);
}

TEST_F(ServiceAuthTest, AnotherKeysSignatureIsRefusedAfterOneFreshRead) {
  const PrivateKey mallory = PrivateKey::generate(KeyCurve::kSecp256k1);
  const int reads = keys_.reads;
  EXPECT_NE(verdict(mint(claims(), &mallory)).find("does not verify with the #atproto key"),
            std::string::npos);
  EXPECT_EQ(keys_.fresh_reads, 1) << "the document is read again once";
  EXPECT_EQ(keys_.reads, reads + 2);
  // A key that rotated: the cached one fails, the fresh one verifies.
  EXPECT_EQ(verdict(mint(claims())), "accepted");
  const PrivateKey rotated = PrivateKey::generate(KeyCurve::kSecp256k1);
  keys_.current.insert_or_assign(kAlice, rotated.public_key());
  EXPECT_EQ(verdict(mint(claims(), &rotated)), "accepted");
  // Damaged signatures and parts.
  std::string damaged = mint(claims());
  damaged[damaged.size() - 3] = damaged[damaged.size() - 3] == 'A' ? 'B' : 'A';
  EXPECT_NE(verdict(damaged), "accepted");
  const std::string token = mint(claims());
  EXPECT_NE(verdict(token.substr(0, token.rfind('.'))).find("three parts"), std::string::npos);
  EXPECT_NE(verdict(token + "." + "x").find("three parts"), std::string::npos);
  EXPECT_NE(verdict("eyJ!.eyJ.sig").find("not base64url"), std::string::npos);
  EXPECT_NE(verdict(std::string(9000, 'a')).find("longer than"), std::string::npos);
  EXPECT_NE(verdict(base64url("[1]") + "." + base64url("{}") + ".").find("not a JSON object"),
            std::string::npos);
  // An issuer without a DID document.
  json stranger = claims();
  stranger["iss"] = "did:plc:strangerrrrrrrrrrrrrrrrr";
  const std::string unknown = verdict(mint(stranger));
  EXPECT_NE(unknown.find("cannot get the #atproto key"), std::string::npos);
  EXPECT_EQ(unknown.find("no DID document for"), std::string::npos)
      << "the directory's own words are the log's, not the caller's: " << unknown;
}

TEST_F(ServiceAuthTest, HighSSignaturesAreAcceptedAsTheReferenceVerifiersDo) {
  for (const PrivateKey* key : {&alice_k256_, &alice_p256_}) {
    keys_.current.insert_or_assign(kAlice, key->public_key());
    keys_.cached.clear();
    const std::string token = mint(claims(), key);
    const std::size_t dot = token.rfind('.');
    auto signature =
        schema::base64_decode(token.substr(dot + 1), schema::Base64Alphabet::kUrl).value();
    const std::string twin =
        token.substr(0, dot + 1) + base64url(testing::high_s_twin(signature, key->curve()));
    ASSERT_NE(twin, token);
    EXPECT_EQ(verdict(twin), "accepted") << jws_algorithm(key->curve());
  }
}

TEST_F(ServiceAuthTest, AdmissionNeverReadsADocumentAndRecordsNothing) {
  const std::string token = mint(claims());
  auto early = auth_.check(token, kMethod, KeyAccess::kCachedOnly);
  ASSERT_TRUE(early.has_value()) << early.error().message;
  EXPECT_FALSE(early->verified) << "the key is not cached yet";
  EXPECT_EQ(keys_.reads, 0);
  // Claims are still checked without the key.
  EXPECT_FALSE(auth_.check(token, "app.bulleted.moveNode", KeyAccess::kCachedOnly).has_value());
  // The handler verifies it (reading the key) and records its jti.
  EXPECT_EQ(verdict(token), "accepted");
  EXPECT_EQ(keys_.reads, 1);
  // Now cached: admission verifies a new token itself, and refuses the replay.
  auto cached = auth_.check(mint(claims()), kMethod, KeyAccess::kCachedOnly);
  ASSERT_TRUE(cached.has_value());
  EXPECT_TRUE(cached->verified);
  EXPECT_FALSE(auth_.check(token, kMethod, KeyAccess::kCachedOnly).has_value());
  // A forged signature over a cached key is left to the handler, which refuses it.
  const PrivateKey mallory = PrivateKey::generate(KeyCurve::kSecp256k1);
  const std::string forged = mint(claims(), &mallory);
  auto unverified = auth_.check(forged, kMethod, KeyAccess::kCachedOnly);
  ASSERT_TRUE(unverified.has_value());
  EXPECT_FALSE(unverified->verified);
  EXPECT_NE(verdict(forged), "accepted");
}

TEST_F(ServiceAuthTest, TheReplayCacheIsBounded) {
  ServiceAuth small(ServiceAuthOptions{.service_did = kAppView, .max_remembered = 2}, keys_,
                    [this] { return now_; });
  EXPECT_TRUE(small.check(mint(claims()), kMethod, KeyAccess::kFetch).has_value());
  EXPECT_TRUE(small.check(mint(claims()), kMethod, KeyAccess::kFetch).has_value());
  auto full = small.check(mint(claims()), kMethod, KeyAccess::kFetch);
  ASSERT_FALSE(full.has_value());
  EXPECT_EQ(full.error().code, ErrorCode::kRateLimited);
  now_ += 120;  // the two expire
  EXPECT_TRUE(small.check(mint(claims()), kMethod, KeyAccess::kFetch).has_value());
}

TEST_F(ServiceAuthTest, OneIssuerCannotFillTheReplayStoreForTheOthers) {
  constexpr const char* kBob = "did:plc:bobbbbbbbbbbbbbbbbbbbbbbb";
  const PrivateKey bob_key = PrivateKey::generate(KeyCurve::kSecp256k1);
  keys_.current.emplace(kBob, bob_key.public_key());
  ServiceAuth auth(
      ServiceAuthOptions{
          .service_did = kAppView, .max_remembered = 100, .max_remembered_per_issuer = 3},
      keys_, [this] { return now_; });
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(auth.check(mint(claims()), kMethod, KeyAccess::kFetch).has_value()) << i;
  }
  auto spent = auth.check(mint(claims()), kMethod, KeyAccess::kFetch);
  ASSERT_FALSE(spent.has_value());
  EXPECT_EQ(spent.error().code, ErrorCode::kRateLimited);
  EXPECT_NE(spent.error().message.find("this issuer"), std::string::npos);
  // Another issuer is not locked out by the first one's tokens.
  json bob = claims();
  bob["iss"] = kBob;
  EXPECT_TRUE(auth.check(mint(bob, &bob_key), kMethod, KeyAccess::kFetch).has_value());
  EXPECT_EQ(auth.remembered(), 4u);
  // Once the first issuer's tokens expire, it has its share again.
  now_ += 120;
  EXPECT_TRUE(auth.check(mint(claims()), kMethod, KeyAccess::kFetch).has_value());
}

// Keys that cannot be read now: no place to wait on the directory.
class BusyKeys final : public firehose::RepoKeys {
 public:
  Result<PublicKey> key(const std::string&, bool) override {
    Error busy{ErrorCode::kUnavailable, "busy"};
    busy.retry_after_seconds = 1;
    return std::unexpected(busy);
  }
  std::optional<PublicKey> cached_key(const std::string&) override { return std::nullopt; }
  void forget(const std::string&) override {}
};

TEST_F(ServiceAuthTest, AKeyThatCannotBeFetchedNowIsAnUnavailableNotABadToken) {
  BusyKeys busy;
  ServiceAuth auth(ServiceAuthOptions{.service_did = kAppView}, busy, [this] { return now_; });
  auto checked = auth.check(mint(claims()), kMethod, KeyAccess::kFetch);
  ASSERT_FALSE(checked.has_value());
  EXPECT_EQ(checked.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(checked.error().retry_after_seconds, 1);
  EXPECT_EQ(auth.remembered(), 0u) << "the token may come back";
}

TEST(BearerChallenge, QuotesTheDescription) {
  EXPECT_EQ(bearer_challenge("bulleted", "lxm \"x\" is wrong\n"),
            "Bearer realm=\"bulleted\", error=\"invalid_token\", "
            "error_description=\"lxm \\\"x\\\" is wrong\"");
}

}  // namespace
}  // namespace bulleted::appview
