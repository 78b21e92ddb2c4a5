#include "firehose/crypto.hpp"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/param_build.h>
#include <openssl/rand.h>
#include <secp256k1.h>

#include <cstring>
#include <functional>
#include <vector>

#include "firehose/cid.hpp"
#include "schema/enum_names.hpp"

namespace bulleted::firehose {

// The multicodec codes of compressed public keys.
constexpr std::uint64_t kCodecSecp256k1Pub = 0xe7;
constexpr std::uint64_t kCodecP256Pub = 0x1200;

struct PublicKey::Impl {
  KeyCurve curve;
  std::string compressed;
  secp256k1_pubkey secp{};                                                           // kSecp256k1
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> p256{nullptr, EVP_PKEY_free};  // kP256
};

namespace {

// Half the group order of each curve, big-endian: a valid s is at most this.
constexpr std::array<std::uint8_t, 32> kP256HalfOrder = {
    0x7f, 0xff, 0xff, 0xff, 0x80, 0x00, 0x00, 0x00, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xde, 0x73, 0x7d, 0x56, 0xd3, 0x8b, 0xcf, 0x42, 0x79, 0xdc, 0xe5, 0x61, 0x7e, 0x31, 0x92, 0xa8};

constexpr std::array<std::uint8_t, 32> kP256Order = {
    0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xbc, 0xe6, 0xfa, 0xad, 0xa7, 0x17, 0x9e, 0x84, 0xf3, 0xb9, 0xca, 0xc2, 0xfc, 0x63, 0x25, 0x51};

bool all_zero(const unsigned char* bytes) {
  for (int i = 0; i < 32; ++i) {
    if (bytes[i] != 0) return false;
  }
  return true;
}

const secp256k1_context* secp_context() {
  // Verification and signing both work with one context made once; it is
  // only read afterwards (libsecp256k1 documents that as thread-safe).
  static secp256k1_context* context = [] {
    secp256k1_context* made = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
    std::array<unsigned char, 32> seed{};
    if (RAND_bytes(seed.data(), static_cast<int>(seed.size())) == 1) {
      // Blinding only: a context that could not take it still verifies.
      const int randomized = secp256k1_context_randomize(made, seed.data());
      static_cast<void>(randomized);
    }
    return made;
  }();
  return context;
}

struct BnFree {
  void operator()(BIGNUM* b) const { BN_free(b); }
};
using Bn = std::unique_ptr<BIGNUM, BnFree>;

std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> p256_key(std::string_view point,
                                                             const BIGNUM* secret) {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(nullptr, EVP_PKEY_free);
  OSSL_PARAM_BLD* build = OSSL_PARAM_BLD_new();
  if (build == nullptr) return key;
  OSSL_PARAM_BLD_push_utf8_string(build, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0);
  OSSL_PARAM_BLD_push_octet_string(build, OSSL_PKEY_PARAM_PUB_KEY, point.data(), point.size());
  if (secret != nullptr) OSSL_PARAM_BLD_push_BN(build, OSSL_PKEY_PARAM_PRIV_KEY, secret);
  OSSL_PARAM* params = OSSL_PARAM_BLD_to_param(build);
  EVP_PKEY_CTX* context = EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr);
  EVP_PKEY* made = nullptr;
  if (params != nullptr && context != nullptr && EVP_PKEY_fromdata_init(context) == 1 &&
      EVP_PKEY_fromdata(context, &made, secret != nullptr ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY,
                        params) == 1) {
    key.reset(made);
  }
  EVP_PKEY_CTX_free(context);
  OSSL_PARAM_free(params);
  OSSL_PARAM_BLD_free(build);
  return key;
}

// Whether an uncompressed-or-compressed P-256 point is on the curve (the
// import above does not check it until first use).
bool p256_point_valid(std::string_view point) {
  EC_GROUP* group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
  EC_POINT* decoded = EC_POINT_new(group);
  const bool ok =
      EC_POINT_oct2point(group, decoded, reinterpret_cast<const unsigned char*>(point.data()),
                         point.size(), nullptr) == 1 &&
      EC_POINT_is_on_curve(group, decoded, nullptr) == 1;
  EC_POINT_free(decoded);
  EC_GROUP_free(group);
  return ok;
}

// A P-256 point, made by `make` (false: no point), in the given encoding;
// "" when OpenSSL refuses.
std::string p256_point(const std::function<bool(const EC_GROUP*, EC_POINT*)>& make,
                       point_conversion_form_t form) {
  EC_GROUP* group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
  EC_POINT* point = EC_POINT_new(group);
  std::string out(form == POINT_CONVERSION_COMPRESSED ? 33 : 65, '\0');
  if (!make(group, point) ||
      EC_POINT_point2oct(group, point, form, reinterpret_cast<unsigned char*>(out.data()),
                         out.size(), nullptr) != out.size()) {
    out.clear();
  }
  EC_POINT_free(point);
  EC_GROUP_free(group);
  return out;
}

std::string p256_compressed_of(const BIGNUM* secret) {
  return p256_point(
      [&](const EC_GROUP* group, EC_POINT* point) {
        return EC_POINT_mul(group, point, secret, nullptr, nullptr, nullptr) == 1;
      },
      POINT_CONVERSION_COMPRESSED);
}

SignatureCheck verify_p256(const PublicKey::Impl& key, std::string_view digest,
                           std::string_view signature, SignaturePolicy policy) {
  const auto* sig = reinterpret_cast<const unsigned char*>(signature.data());
  if (all_zero(sig) || all_zero(sig + 32) || std::memcmp(sig, kP256Order.data(), 32) >= 0) {
    return SignatureCheck::kMalformed;
  }
  if (std::memcmp(sig + 32, kP256Order.data(), 32) >= 0) return SignatureCheck::kMalformed;
  // OpenSSL accepts either twin; the policy decides.
  if (policy == SignaturePolicy::kLowS && std::memcmp(sig + 32, kP256HalfOrder.data(), 32) > 0) {
    return SignatureCheck::kHighS;
  }
  Bn r(BN_bin2bn(sig, 32, nullptr));
  Bn s(BN_bin2bn(sig + 32, 32, nullptr));
  if (!r || !s) return SignatureCheck::kMalformed;
  ECDSA_SIG* ecdsa = ECDSA_SIG_new();
  ECDSA_SIG_set0(ecdsa, r.release(), s.release());
  unsigned char* der = nullptr;
  const int der_length = i2d_ECDSA_SIG(ecdsa, &der);
  ECDSA_SIG_free(ecdsa);
  if (der_length <= 0) return SignatureCheck::kMalformed;
  EVP_PKEY_CTX* context = EVP_PKEY_CTX_new(key.p256.get(), nullptr);
  int verified = -1;
  if (context != nullptr && EVP_PKEY_verify_init(context) == 1) {
    verified =
        EVP_PKEY_verify(context, der, static_cast<std::size_t>(der_length),
                        reinterpret_cast<const unsigned char*>(digest.data()), digest.size());
  }
  EVP_PKEY_CTX_free(context);
  OPENSSL_free(der);
  return verified == 1 ? SignatureCheck::kValid : SignatureCheck::kMismatch;
}

SignatureCheck verify_secp256k1(const PublicKey::Impl& key, std::string_view digest,
                                std::string_view signature, SignaturePolicy policy) {
  const auto* sig = reinterpret_cast<const unsigned char*>(signature.data());
  if (all_zero(sig) || all_zero(sig + 32)) return SignatureCheck::kMalformed;
  secp256k1_ecdsa_signature parsed;
  if (secp256k1_ecdsa_signature_parse_compact(secp_context(), &parsed, sig) != 1) {
    return SignatureCheck::kMalformed;
  }
  // normalize() reports whether the signature was high-S; commits refuse
  // those rather than accepting their low-S twin, JWTs verify the twin
  // (libsecp256k1 verifies low-S only).
  if (policy == SignaturePolicy::kLowS) {
    if (secp256k1_ecdsa_signature_normalize(secp_context(), nullptr, &parsed) == 1) {
      return SignatureCheck::kHighS;
    }
  } else {
    secp256k1_ecdsa_signature_normalize(secp_context(), &parsed, &parsed);
  }
  return secp256k1_ecdsa_verify(secp_context(), &parsed,
                                reinterpret_cast<const unsigned char*>(digest.data()),
                                &key.secp) == 1
             ? SignatureCheck::kValid
             : SignatureCheck::kMismatch;
}

constexpr std::string_view kBase58Alphabet =
    "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

}  // namespace

Result<std::string> base58_decode(std::string_view text) {
  if (text.size() > 256) return fail(ErrorCode::kInvalidRequest, "base58 text is too long");
  std::vector<std::uint8_t> number;  // little-endian base 256
  std::size_t zeros = 0;
  while (zeros < text.size() && text[zeros] == '1') ++zeros;
  for (char c : text) {
    const std::size_t digit = kBase58Alphabet.find(c);
    if (digit == std::string_view::npos) {
      return fail(ErrorCode::kInvalidRequest, "not a base58 character");
    }
    unsigned carry = static_cast<unsigned>(digit);
    for (auto& byte : number) {
      carry += static_cast<unsigned>(byte) * 58;
      byte = static_cast<std::uint8_t>(carry & 0xff);
      carry >>= 8;
    }
    while (carry != 0) {
      number.push_back(static_cast<std::uint8_t>(carry & 0xff));
      carry >>= 8;
    }
  }
  std::string out(zeros, '\0');
  for (auto it = number.rbegin(); it != number.rend(); ++it) out.push_back(static_cast<char>(*it));
  return out;
}

std::string base58_encode(std::string_view bytes) {
  std::vector<std::uint8_t> digits;  // little-endian base 58
  std::size_t zeros = 0;
  while (zeros < bytes.size() && bytes[zeros] == '\0') ++zeros;
  for (char c : bytes) {
    unsigned carry = static_cast<unsigned char>(c);
    for (auto& digit : digits) {
      carry += static_cast<unsigned>(digit) << 8;
      digit = static_cast<std::uint8_t>(carry % 58);
      carry /= 58;
    }
    while (carry != 0) {
      digits.push_back(static_cast<std::uint8_t>(carry % 58));
      carry /= 58;
    }
  }
  std::string out(zeros, '1');
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) out.push_back(kBase58Alphabet[*it]);
  return out;
}

Result<PublicKey> PublicKey::from_compressed(KeyCurve curve, std::string_view point) {
  if (point.size() != 33 || (point[0] != 2 && point[0] != 3)) {
    return fail(ErrorCode::kInvalidRequest, "a public key is a 33-byte compressed point");
  }
  auto impl = std::make_shared<Impl>();
  impl->curve = curve;
  impl->compressed = std::string(point);
  if (curve == KeyCurve::kSecp256k1) {
    if (secp256k1_ec_pubkey_parse(secp_context(), &impl->secp,
                                  reinterpret_cast<const unsigned char*>(point.data()),
                                  point.size()) != 1) {
      return fail(ErrorCode::kInvalidRequest, "not a point on secp256k1");
    }
  } else {
    if (!p256_point_valid(point)) return fail(ErrorCode::kInvalidRequest, "not a point on P-256");
    impl->p256 = p256_key(point, nullptr);
    if (!impl->p256) return fail(ErrorCode::kInvalidRequest, "OpenSSL refused the P-256 key");
  }
  return PublicKey(std::move(impl));
}

Result<PublicKey> PublicKey::from_point(KeyCurve curve, std::string_view point) {
  if (point.size() == 33) return from_compressed(curve, point);
  if (point.size() != 65 || point[0] != 4) {
    return fail(ErrorCode::kInvalidRequest, "a public key is a 33- or 65-byte point");
  }
  std::string compressed(33, '\0');
  if (curve == KeyCurve::kSecp256k1) {
    secp256k1_pubkey parsed;
    std::size_t length = compressed.size();
    if (secp256k1_ec_pubkey_parse(secp_context(), &parsed,
                                  reinterpret_cast<const unsigned char*>(point.data()),
                                  point.size()) != 1 ||
        secp256k1_ec_pubkey_serialize(secp_context(),
                                      reinterpret_cast<unsigned char*>(compressed.data()), &length,
                                      &parsed, SECP256K1_EC_COMPRESSED) != 1) {
      return fail(ErrorCode::kInvalidRequest, "not a point on secp256k1");
    }
  } else {
    EC_GROUP* group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
    EC_POINT* decoded = EC_POINT_new(group);
    const bool ok =
        EC_POINT_oct2point(group, decoded, reinterpret_cast<const unsigned char*>(point.data()),
                           point.size(), nullptr) == 1 &&
        EC_POINT_point2oct(group, decoded, POINT_CONVERSION_COMPRESSED,
                           reinterpret_cast<unsigned char*>(compressed.data()), compressed.size(),
                           nullptr) == compressed.size();
    EC_POINT_free(decoded);
    EC_GROUP_free(group);
    if (!ok) return fail(ErrorCode::kInvalidRequest, "not a point on P-256");
  }
  return from_compressed(curve, compressed);
}

Result<PublicKey> PublicKey::from_multikey(std::string_view multibase) {
  if (multibase.empty() || multibase[0] != 'z') {
    return fail(ErrorCode::kInvalidRequest, "a multikey is base58btc ('z' prefix)");
  }
  auto bytes = base58_decode(multibase.substr(1));
  if (!bytes) return std::unexpected(bytes.error());
  std::size_t pos = 0;
  auto codec = read_uvarint(*bytes, pos);
  if (!codec) return fail(ErrorCode::kInvalidRequest, "a multikey starts with its key type");
  const std::string_view point = std::string_view(*bytes).substr(pos);
  if (*codec == kCodecSecp256k1Pub) return from_compressed(KeyCurve::kSecp256k1, point);
  if (*codec == kCodecP256Pub) return from_compressed(KeyCurve::kP256, point);
  return fail(ErrorCode::kInvalidRequest, "a multikey of a type other than P-256 and secp256k1");
}

Result<PublicKey> PublicKey::from_did_key(std::string_view did) {
  constexpr std::string_view kPrefix = "did:key:";
  if (!did.starts_with(kPrefix)) return fail(ErrorCode::kInvalidRequest, "not a did:key");
  return from_multikey(did.substr(kPrefix.size()));
}

KeyCurve PublicKey::curve() const { return impl_->curve; }
std::string_view PublicKey::compressed() const { return impl_->compressed; }

std::string PublicKey::uncompressed() const {
  std::string out(65, '\0');
  if (curve() == KeyCurve::kSecp256k1) {
    std::size_t length = out.size();
    secp256k1_ec_pubkey_serialize(secp_context(), reinterpret_cast<unsigned char*>(out.data()),
                                  &length, &impl_->secp, SECP256K1_EC_UNCOMPRESSED);
    return out;
  }
  const std::string& compressed = impl_->compressed;
  return p256_point(
      [&](const EC_GROUP* group, EC_POINT* point) {
        return EC_POINT_oct2point(group, point,
                                  reinterpret_cast<const unsigned char*>(compressed.data()),
                                  compressed.size(), nullptr) == 1;
      },
      POINT_CONVERSION_UNCOMPRESSED);
}

std::string PublicKey::multikey() const {
  std::string bytes;
  write_uvarint(bytes, curve() == KeyCurve::kSecp256k1 ? kCodecSecp256k1Pub : kCodecP256Pub);
  bytes += compressed();
  return "z" + base58_encode(bytes);
}

std::string PublicKey::did_key() const { return "did:key:" + multikey(); }

namespace {

constexpr schema::EnumNames<SignatureCheck, 4> kSignatureCheckNames{{{
    {SignatureCheck::kValid, "valid"},
    {SignatureCheck::kMismatch, "mismatch"},
    {SignatureCheck::kHighS, "high_s"},
    {SignatureCheck::kMalformed, "malformed"},
}}};
static_assert(kSignatureCheckNames.covers(SignatureCheck::kMalformed));

}  // namespace

std::string_view signature_check_name(SignatureCheck check) {
  return kSignatureCheckNames.name(check);
}

SignatureCheck verify_digest(const PublicKey& key, std::string_view digest,
                             std::string_view signature, SignaturePolicy policy) {
  if (signature.size() != 64 || digest.size() != 32) return SignatureCheck::kMalformed;
  return key.curve() == KeyCurve::kSecp256k1
             ? verify_secp256k1(key.impl(), digest, signature, policy)
             : verify_p256(key.impl(), digest, signature, policy);
}

SignatureCheck verify_signature(const PublicKey& key, std::string_view message,
                                std::string_view signature, SignaturePolicy policy) {
  return verify_digest(key, sha256(message), signature, policy);
}

Result<PrivateKey> PrivateKey::from_bytes(KeyCurve curve, std::string_view secret) {
  if (secret.size() != 32) return fail(ErrorCode::kInvalidRequest, "a private key is 32 bytes");
  std::array<std::uint8_t, 32> bytes{};
  std::memcpy(bytes.data(), secret.data(), 32);
  std::string point;
  if (curve == KeyCurve::kSecp256k1) {
    secp256k1_pubkey parsed;
    if (secp256k1_ec_pubkey_create(secp_context(), &parsed, bytes.data()) != 1) {
      return fail(ErrorCode::kInvalidRequest, "not a secp256k1 private key");
    }
    point.assign(33, '\0');
    std::size_t length = point.size();
    secp256k1_ec_pubkey_serialize(secp_context(), reinterpret_cast<unsigned char*>(point.data()),
                                  &length, &parsed, SECP256K1_EC_COMPRESSED);
  } else {
    Bn number(BN_bin2bn(bytes.data(), 32, nullptr));
    if (!number || BN_is_zero(number.get())) {
      return fail(ErrorCode::kInvalidRequest, "not a P-256 private key");
    }
    point = p256_compressed_of(number.get());
    if (point.empty()) return fail(ErrorCode::kInvalidRequest, "not a P-256 private key");
  }
  auto key = PublicKey::from_compressed(curve, point);
  if (!key) return std::unexpected(key.error());
  return PrivateKey(curve, bytes, std::move(*key));
}

PrivateKey PrivateKey::generate(KeyCurve curve) {
  while (true) {
    std::array<unsigned char, 32> secret{};
    if (RAND_bytes(secret.data(), 32) != 1) continue;
    auto key = from_bytes(curve, std::string_view(reinterpret_cast<char*>(secret.data()), 32));
    if (key) return std::move(*key);
  }
}

std::string PrivateKey::sign(std::string_view message) const {
  const std::string digest = sha256(message);
  std::string out(64, '\0');
  auto* compact = reinterpret_cast<unsigned char*>(out.data());
  if (curve_ == KeyCurve::kSecp256k1) {
    secp256k1_ecdsa_signature signature;
    // Deterministic (RFC 6979) and already low-S.
    if (secp256k1_ecdsa_sign(secp_context(), &signature,
                             reinterpret_cast<const unsigned char*>(digest.data()), secret_.data(),
                             nullptr, nullptr) != 1) {
      return {};
    }
    secp256k1_ecdsa_signature_serialize_compact(secp_context(), compact, &signature);
    return out;
  }
  Bn secret(BN_bin2bn(secret_.data(), 32, nullptr));
  auto key = p256_key(public_.compressed(), secret.get());
  EVP_PKEY_CTX* context = key ? EVP_PKEY_CTX_new(key.get(), nullptr) : nullptr;
  std::string der(80, '\0');
  std::size_t der_length = der.size();
  const bool signed_ok =
      context != nullptr && EVP_PKEY_sign_init(context) == 1 &&
      EVP_PKEY_sign(context, reinterpret_cast<unsigned char*>(der.data()), &der_length,
                    reinterpret_cast<const unsigned char*>(digest.data()), digest.size()) == 1;
  EVP_PKEY_CTX_free(context);
  if (!signed_ok) return {};
  const auto* cursor = reinterpret_cast<const unsigned char*>(der.data());
  ECDSA_SIG* signature = d2i_ECDSA_SIG(nullptr, &cursor, static_cast<long>(der_length));
  if (signature == nullptr) return {};
  const BIGNUM* r = ECDSA_SIG_get0_r(signature);
  const BIGNUM* s = ECDSA_SIG_get0_s(signature);
  Bn low_s(BN_dup(s));
  EC_GROUP* group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
  const BIGNUM* order = EC_GROUP_get0_order(group);
  Bn half(BN_dup(order));
  BN_rshift1(half.get(), half.get());
  if (BN_cmp(low_s.get(), half.get()) > 0) BN_sub(low_s.get(), order, low_s.get());
  BN_bn2binpad(r, compact, 32);
  BN_bn2binpad(low_s.get(), compact + 32, 32);
  EC_GROUP_free(group);
  ECDSA_SIG_free(signature);
  return out;
}

}  // namespace bulleted::firehose
