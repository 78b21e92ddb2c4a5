// Identity without a network: where a DID's document is, its PDS endpoint and
// its signing key, and handles resolved only at hosts the policy allows.
#include "firehose/identity/identity.hpp"

#include <gtest/gtest.h>
#include <openssl/ec.h>
#include <openssl/obj_mac.h>

#include <atomic>

#include "tests/support/fake_identity.hpp"

namespace bulleted::identity {
namespace {

TEST(IdentityTest, DidDocumentLocations) {
  auto plc = did_document_location("did:plc:ewvi7nxzyoun6zhxrhs64oiz", "https://plc.directory/");
  ASSERT_TRUE(plc.has_value());
  EXPECT_EQ(plc->first, "https://plc.directory");
  EXPECT_EQ(plc->second, "/did:plc:ewvi7nxzyoun6zhxrhs64oiz");
  auto web = did_document_location("did:web:example.com", "https://plc.directory");
  ASSERT_TRUE(web.has_value());
  EXPECT_EQ(web->first, "https://example.com");
  EXPECT_EQ(web->second, "/.well-known/did.json");
  auto local = did_document_location("did:web:localhost%3A2583", "https://plc.directory");
  ASSERT_TRUE(local.has_value());
  EXPECT_EQ(local->first, "http://localhost:2583");
  EXPECT_EQ(did_document_location("did:key:z6Mk", "https://plc.directory").error().code,
            ErrorCode::kInvalidRequest);
  EXPECT_FALSE(did_document_location("not a did", "https://plc.directory").has_value());
  EXPECT_FALSE(did_document_location("did:web:example.com:user:alice", "x").has_value());
  EXPECT_FALSE(did_document_location("did:plc:abc", "ftp://plc").has_value());
}

TEST(IdentityTest, PdsEndpointOfADocument) {
  const std::string did = "did:plc:ewvi7nxzyoun6zhxrhs64oiz";
  nlohmann::json doc = {
      {"id", did},
      {"service",
       {{{"id", "#atproto_labeler"}, {"type", "AtprotoLabeler"}, {"serviceEndpoint", "https://l"}},
        {{"id", "#atproto_pds"},
         {"type", "AtprotoPersonalDataServer"},
         {"serviceEndpoint", "https://pds.example.com/"}}}}};
  EXPECT_EQ(pds_endpoint(doc, did).value(), "https://pds.example.com");
  doc["service"][1]["id"] = did + "#atproto_pds";
  EXPECT_EQ(pds_endpoint(doc, did).value(), "https://pds.example.com");
  // Another DID's document, no PDS, or an endpoint that is not an origin.
  EXPECT_FALSE(pds_endpoint(doc, "did:plc:someoneelse").has_value());
  doc["service"][1]["serviceEndpoint"] = "https://pds.example.com/path?x";
  EXPECT_FALSE(pds_endpoint(doc, did).has_value());
  doc["service"][1]["serviceEndpoint"] = "javascript:alert(1)";
  EXPECT_FALSE(pds_endpoint(doc, did).has_value());
  doc["service"].erase(1);
  EXPECT_EQ(pds_endpoint(doc, did).error().code, ErrorCode::kNotFound);
  EXPECT_FALSE(pds_endpoint(nlohmann::json::array(), did).has_value());
}

// The key's uncompressed point, as the PLC directory's older key form
// writes it.
std::string uncompressed(const firehose::PublicKey& key) {
  EC_GROUP* group = EC_GROUP_new_by_curve_name(
      key.curve() == firehose::KeyCurve::kP256 ? NID_X9_62_prime256v1 : NID_secp256k1);
  EC_POINT* point = EC_POINT_new(group);
  std::string out(65, '\0');
  EC_POINT_oct2point(group, point, reinterpret_cast<const unsigned char*>(key.compressed().data()),
                     33, nullptr);
  EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED,
                     reinterpret_cast<unsigned char*>(out.data()), out.size(), nullptr);
  EC_POINT_free(point);
  EC_GROUP_free(group);
  return out;
}

TEST(IdentityTest, SigningKeysComeFromTheAtprotoMethodInEitherForm) {
  const std::string did = "did:plc:ewvi7nxzyoun6zhxrhs64oiz";
  for (auto curve : {firehose::KeyCurve::kSecp256k1, firehose::KeyCurve::kP256}) {
    const auto key = firehose::PrivateKey::generate(curve).public_key();
    nlohmann::json doc = {
        {"id", did},
        {"verificationMethod",
         {{{"id", did + "#other"}, {"type", "Multikey"}, {"publicKeyMultibase", "zzz"}},
          {{"id", did + "#atproto"},
           {"type", "Multikey"},
           {"publicKeyMultibase", key.multikey()}}}}};
    EXPECT_TRUE(identity::signing_key(doc, did).value() == key);
    doc["verificationMethod"][1]["id"] = "#atproto";
    EXPECT_TRUE(identity::signing_key(doc, did).value() == key);
    // The form the PLC directory writes: the curve in the type, the point
    // uncompressed.
    doc["verificationMethod"][1]["type"] = curve == firehose::KeyCurve::kP256
                                               ? "EcdsaSecp256r1VerificationKey2019"
                                               : "EcdsaSecp256k1VerificationKey2019";
    doc["verificationMethod"][1]["publicKeyMultibase"] =
        "z" + firehose::base58_encode(uncompressed(key));
    auto legacy = identity::signing_key(doc, did);
    ASSERT_TRUE(legacy.has_value()) << legacy.error().message;
    EXPECT_TRUE(*legacy == key);
    // Another DID's document, an unknown type, or no #atproto key.
    EXPECT_FALSE(identity::signing_key(doc, "did:plc:someoneelse").has_value());
    doc["verificationMethod"][1]["type"] = "JsonWebKey2020";
    EXPECT_FALSE(identity::signing_key(doc, did).has_value());
    doc["verificationMethod"].erase(1);
    EXPECT_EQ(identity::signing_key(doc, did).error().code, ErrorCode::kNotFound);
  }
}

// An XRPC client that answers every call with one reply and counts calls.
class CountingClient final : public firehose::XrpcClient {
 public:
  Result<firehose::XrpcReply> call(const firehose::XrpcRequest& request) override {
    ++calls;
    last = request.base_url + request.path;
    firehose::XrpcReply r;
    r.status = 200;
    r.body = "did:plc:ewvi7nxzyoun6zhxrhs64oiz\n";
    return r;
  }
  int calls = 0;
  std::string last;
};

TEST(IdentityTest, HandlesAreResolvedOnlyAtHostsTheNetworkPolicyAllows) {
  // With no handle resolver configured, a handle is read at its own host
  // (https://<handle>/.well-known/atproto-did): a name someone registered,
  // checked like every address the network gives before anything is sent.
  auto client = std::make_shared<CountingClient>();
  identity::IdentityResolver resolver(identity::Fetcher::over(client), {});
  auto refused = resolver.resolve_handle("alice.localhost");
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kUpstreamFailure) << refused.error().message;
  EXPECT_EQ(client->calls, 0);
  // The test setting lets the same name through (loopback is then allowed).
  identity::IdentityResolver testing(
      identity::Fetcher::over(client, {.allow_private_addresses = true}),
      {.allow_private_addresses = true});
  auto resolved = testing.resolve_handle("alice.localhost");
  ASSERT_TRUE(resolved.has_value()) << resolved.error().message;
  EXPECT_EQ(*resolved, "did:plc:ewvi7nxzyoun6zhxrhs64oiz");
  EXPECT_EQ(client->last, "https://alice.localhost/.well-known/atproto-did");
}

// The resolver over a directory without a network, on a clock the test moves.
class IdentityCacheTest : public ::testing::Test {
 protected:
  static constexpr const char* kAlice = "did:plc:alicealicealicealicealic";

  void SetUp() override {
    directory_.put(kAlice, "https://pds.one.test", first_.public_key());
    resolver_ = directory_.resolver({.cache_ttl = std::chrono::seconds(3600),
                                     .refresh_interval = std::chrono::seconds(60),
                                     .now = [this] { return now(); }});
  }
  std::chrono::steady_clock::time_point now() const {
    return std::chrono::steady_clock::time_point(std::chrono::seconds(seconds_.load()));
  }

  testing::FakeIdentityDirectory directory_;
  firehose::PrivateKey first_ = firehose::PrivateKey::generate(firehose::KeyCurve::kSecp256k1);
  firehose::PrivateKey second_ = firehose::PrivateKey::generate(firehose::KeyCurve::kSecp256k1);
  std::atomic<std::int64_t> seconds_{100'000};
  std::unique_ptr<IdentityResolver> resolver_;
};

TEST_F(IdentityCacheTest, OneReadOfADocumentAnswersItsPdsAndItsKeyUntilItsTtl) {
  EXPECT_EQ(resolver_->pds_of(kAlice).value(), "https://pds.one.test");
  EXPECT_TRUE(resolver_->key(kAlice, false).value() == first_.public_key());
  EXPECT_TRUE(resolver_->cached_key(kAlice).has_value());
  EXPECT_EQ(directory_.reads(kAlice), 1) << "the key came with the PDS";
  seconds_ += 3599;
  EXPECT_EQ(resolver_->pds_of(kAlice).value(), "https://pds.one.test");
  EXPECT_EQ(directory_.reads(kAlice), 1);
  // The TTL passes; the account moved to another PDS meanwhile.
  directory_.put(kAlice, "https://pds.two.test", first_.public_key());
  seconds_ += 1;
  EXPECT_FALSE(resolver_->cached_key(kAlice).has_value()) << "an expired key is not handed out";
  EXPECT_EQ(resolver_->pds_of(kAlice).value(), "https://pds.two.test");
  EXPECT_EQ(directory_.reads(kAlice), 2);
}

TEST_F(IdentityCacheTest, AnIdentityEventDropsWhatIsCachedOfTheDid) {
  ASSERT_TRUE(resolver_->key(kAlice, false).has_value());
  directory_.put(kAlice, "https://pds.one.test", second_.public_key());  // a key rotation
  EXPECT_TRUE(resolver_->key(kAlice, false).value() == first_.public_key()) << "still cached";
  resolver_->forget(kAlice);
  EXPECT_FALSE(resolver_->cached_key(kAlice).has_value());
  EXPECT_TRUE(resolver_->key(kAlice, false).value() == second_.public_key());
  EXPECT_EQ(directory_.reads(kAlice), 2);
}

TEST_F(IdentityCacheTest, AFreshKeyIsReadAgainAtMostOnceAMinute) {
  ASSERT_TRUE(resolver_->key(kAlice, false).has_value());
  directory_.put(kAlice, "https://pds.one.test", second_.public_key());
  // A signature failed: the caller asks for the key fresh. Right after the
  // read it is what was read (a forged frame cannot make the resolver read
  // again and again).
  EXPECT_TRUE(resolver_->key(kAlice, true).value() == first_.public_key());
  EXPECT_EQ(directory_.reads(kAlice), 1);
  seconds_ += 60;
  EXPECT_TRUE(resolver_->key(kAlice, true).value() == second_.public_key());
  EXPECT_EQ(directory_.reads(kAlice), 2);
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(resolver_->key(kAlice, true).has_value());
  EXPECT_EQ(directory_.reads(kAlice), 2);
}

TEST_F(IdentityCacheTest, AnUnknownDidIsNotFoundAndNothingIsCached) {
  const std::string nobody = "did:plc:nobodynobodynobodynobody";
  auto key = resolver_->key(nobody, false);
  ASSERT_FALSE(key.has_value());
  EXPECT_EQ(key.error().code, ErrorCode::kNotFound);
  EXPECT_FALSE(resolver_->cached_key(nobody).has_value());
  directory_.withdraw(kAlice);
  EXPECT_EQ(resolver_->pds_of(kAlice).error().code, ErrorCode::kNotFound);
}

}  // namespace
}  // namespace bulleted::identity
