// Repo keys and signatures against the protocol's own vectors
// (interop/crypto): did:key forms of known private keys, and signatures that
// must verify or be refused (high-S, DER-encoded), on both curves.
#include "firehose/crypto.hpp"

#include <gtest/gtest.h>
#include <openssl/bn.h>

#include "schema/base64.hpp"
#include "tests/support/files.hpp"
#include "tests/support/high_s.hpp"

namespace bulleted::firehose {
namespace {

using nlohmann::json;

std::string unbase64(const std::string& text) {
  auto bytes = schema::base64_decode(text, schema::Base64Alphabet::kStandard);
  EXPECT_TRUE(bytes.has_value()) << text;
  return bytes.value_or("");
}

std::string unhex(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

using testing::high_s_twin;

TEST(Crypto, SignatureFixturesVerifyOrAreRefusedAsTheProtocolSays) {
  const json fixtures =
      testing::read_json(testing::fixture_path("interop/crypto/signature-fixtures.json"));
  ASSERT_GE(fixtures.size(), 6u);
  int high_s = 0;
  int der = 0;
  for (const auto& fixture : fixtures) {
    SCOPED_TRACE(fixture["comment"].get<std::string>());
    auto key = PublicKey::from_did_key(fixture["publicKeyDid"].get<std::string>());
    ASSERT_TRUE(key.has_value()) << key.error().message;
    EXPECT_EQ(key->curve(),
              fixture["algorithm"] == "ES256" ? KeyCurve::kP256 : KeyCurve::kSecp256k1);
    const SignatureCheck check =
        verify_signature(*key, unbase64(fixture["messageBase64"].get<std::string>()),
                         unbase64(fixture["signatureBase64"].get<std::string>()));
    EXPECT_EQ(check == SignatureCheck::kValid, fixture["validSignature"].get<bool>())
        << signature_check_name(check);
    // Tokens take the high-S twin as the reference verifiers do
    // (allowMalleableSig); every other refusal stands.
    const SignatureCheck token_check = verify_signature(
        *key, unbase64(fixture["messageBase64"].get<std::string>()),
        unbase64(fixture["signatureBase64"].get<std::string>()), SignaturePolicy::kAnyS);
    for (const auto& tag : fixture["tags"]) {
      if (tag == "high-s") {
        EXPECT_EQ(check, SignatureCheck::kHighS);
        EXPECT_EQ(token_check, SignatureCheck::kValid);
        ++high_s;
      }
      if (tag == "der-encoded") {
        EXPECT_EQ(check, SignatureCheck::kMalformed);
        ++der;
      }
    }
  }
  EXPECT_EQ(high_s, 2);
  EXPECT_EQ(der, 2);
}

TEST(Crypto, DidKeysOfKnownPrivateKeysMatchTheW3cVectors) {
  int checked = 0;
  for (const auto& [file, curve] :
       {std::pair{"interop/crypto/w3c_didkey_K256.json", KeyCurve::kSecp256k1},
        std::pair{"interop/crypto/w3c_didkey_P256.json", KeyCurve::kP256}}) {
    for (const auto& vector : testing::read_json(testing::fixture_path(file))) {
      const std::string did = vector["publicDidKey"].get<std::string>();
      SCOPED_TRACE(did);
      std::string secret;
      if (vector.contains("privateKeyBytesHex")) {
        secret = unhex(vector["privateKeyBytesHex"].get<std::string>());
      } else {
        auto bytes = base58_decode(vector["privateKeyBytesBase58"].get<std::string>());
        ASSERT_TRUE(bytes.has_value());
        secret = *bytes;
      }
      auto key = PrivateKey::from_bytes(curve, secret);
      ASSERT_TRUE(key.has_value()) << key.error().message;
      EXPECT_EQ(key->public_key().did_key(), did);
      auto parsed = PublicKey::from_did_key(did);
      ASSERT_TRUE(parsed.has_value()) << parsed.error().message;
      EXPECT_TRUE(*parsed == key->public_key());
      EXPECT_EQ(parsed->did_key(), did);
      ++checked;
    }
  }
  EXPECT_GE(checked, 6);
}

TEST(Crypto, SignaturesMadeHereVerifyAndTheirHighSTwinsDoNot) {
  for (KeyCurve curve : {KeyCurve::kP256, KeyCurve::kSecp256k1}) {
    const PrivateKey key = PrivateKey::generate(curve);
    const PrivateKey stranger = PrivateKey::generate(curve);
    for (int i = 0; i < 20; ++i) {
      const std::string message = "commit number " + std::to_string(i);
      const std::string signature = key.sign(message);
      ASSERT_EQ(signature.size(), 64u);
      EXPECT_EQ(verify_signature(key.public_key(), message, signature), SignatureCheck::kValid);
      EXPECT_EQ(verify_signature(stranger.public_key(), message, signature),
                SignatureCheck::kMismatch);
      EXPECT_EQ(verify_signature(key.public_key(), message + ".", signature),
                SignatureCheck::kMismatch);
      EXPECT_EQ(verify_signature(key.public_key(), message, high_s_twin(signature, curve)),
                SignatureCheck::kHighS);
      EXPECT_EQ(verify_signature(key.public_key(), message, high_s_twin(signature, curve),
                                 SignaturePolicy::kAnyS),
                SignatureCheck::kValid);
      EXPECT_EQ(verify_signature(stranger.public_key(), message, high_s_twin(signature, curve),
                                 SignaturePolicy::kAnyS),
                SignatureCheck::kMismatch);
      std::string damaged = signature;
      damaged[5] = static_cast<char>(damaged[5] ^ 0x01);
      EXPECT_NE(verify_signature(key.public_key(), message, damaged), SignatureCheck::kValid);
      EXPECT_EQ(verify_signature(key.public_key(), message, signature.substr(0, 63)),
                SignatureCheck::kMalformed);
      EXPECT_EQ(verify_signature(key.public_key(), message, std::string(64, '\0')),
                SignatureCheck::kMalformed);
    }
  }
}

TEST(Crypto, MalformedKeysAreRefused) {
  const PrivateKey key = PrivateKey::generate(KeyCurve::kSecp256k1);
  const std::string good = key.public_key().multikey();
  EXPECT_TRUE(PublicKey::from_multikey(good).has_value());
  EXPECT_FALSE(PublicKey::from_multikey("m" + good.substr(1)).has_value());  // base64, not base58
  EXPECT_FALSE(PublicKey::from_multikey(good + "0").has_value());            // not base58
  EXPECT_FALSE(PublicKey::from_multikey(good.substr(0, good.size() - 2)).has_value());
  EXPECT_FALSE(PublicKey::from_multikey(std::string(300, 'z')).has_value());
  EXPECT_FALSE(PublicKey::from_did_key("did:plc:" + good).has_value());
  // An ed25519 multikey (0xed): not a repo key type.
  EXPECT_FALSE(PublicKey::from_multikey("z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK"));
  // A point not on the curve.
  std::string point(33, '\x02');
  for (std::size_t i = 1; i < point.size(); ++i) point[i] = static_cast<char>(0xff);
  EXPECT_FALSE(PublicKey::from_compressed(KeyCurve::kSecp256k1, point).has_value());
  EXPECT_FALSE(PublicKey::from_compressed(KeyCurve::kP256, point).has_value());
  EXPECT_FALSE(PrivateKey::from_bytes(KeyCurve::kP256, std::string(32, '\0')).has_value());
  EXPECT_FALSE(PrivateKey::from_bytes(KeyCurve::kSecp256k1, std::string(32, '\xff')).has_value());
}

TEST(Crypto, Base58RoundTripsAndKeepsLeadingZeros) {
  for (const std::string& bytes : {std::string(), std::string("\0\0\x01\x02", 4),
                                   std::string("hello world"), std::string(40, '\xff')}) {
    auto back = base58_decode(base58_encode(bytes));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, bytes);
  }
  EXPECT_EQ(base58_encode("hello world"), "StV1DL6CwTryKyV");
  EXPECT_FALSE(base58_decode("0OIl").has_value());
}

}  // namespace
}  // namespace bulleted::firehose
