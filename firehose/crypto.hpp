// Repo signing keys: the two curves the AT Protocol uses (NIST P-256 and
// secp256k1), their multikey / did:key text forms, and ECDSA over SHA-256
// with low-S signatures in the 64-byte compact form (r || s).
//
// secp256k1 goes through libsecp256k1, P-256 through OpenSSL. A parsed key
// keeps its decompressed point, so verifying many commits of one repo parses
// the key once. Thread-safe: keys are immutable once made.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "schema/error.hpp"

namespace bulleted::firehose {

enum class KeyCurve { kP256, kSecp256k1 };

class PublicKey {
 public:
  // A compressed point (33 bytes) on `curve`; kInvalidRequest when it is not
  // a point of the curve.
  static Result<PublicKey> from_compressed(KeyCurve curve, std::string_view point);
  // A point compressed (33 bytes) or not (65 bytes, 0x04 first): the older
  // DID document key forms carry it uncompressed.
  static Result<PublicKey> from_point(KeyCurve curve, std::string_view point);
  // "z" + base58btc(multicodec varint + compressed point): the
  // publicKeyMultibase of a DID document's Multikey method.
  static Result<PublicKey> from_multikey(std::string_view multibase);
  // "did:key:" + multikey.
  static Result<PublicKey> from_did_key(std::string_view did);

  KeyCurve curve() const;
  std::string_view compressed() const;
  // The point uncompressed: 0x04 || x || y (65 bytes), as a JWK gives it.
  std::string uncompressed() const;
  std::string multikey() const;
  std::string did_key() const;

  friend bool operator==(const PublicKey& a, const PublicKey& b) {
    return a.curve() == b.curve() && a.compressed() == b.compressed();
  }

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  explicit PublicKey(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

enum class SignatureCheck {
  kValid,
  kMismatch,   // a well-formed signature that this key did not make
  kHighS,      // s above half the group order: refused, as the protocol asks
  kMalformed,  // not 64 bytes, or r or s out of range
};

std::string_view signature_check_name(SignatureCheck check);

// Which signatures of a valid (r, s) pair count. Commits and records are
// low-S only (kLowS); JWTs accept the high-S twin as well (kAnyS), as the
// protocol's reference verifiers do for tokens.
enum class SignaturePolicy { kLowS, kAnyS };

// Verifies `signature` over sha256(message).
SignatureCheck verify_signature(const PublicKey& key, std::string_view message,
                                std::string_view signature,
                                SignaturePolicy policy = SignaturePolicy::kLowS);
// The same over a digest already taken (32 bytes).
SignatureCheck verify_digest(const PublicKey& key, std::string_view digest,
                             std::string_view signature,
                             SignaturePolicy policy = SignaturePolicy::kLowS);

// A private key, for the frame generator and tests that forge commits.
class PrivateKey {
 public:
  // 32 big-endian bytes; kInvalidRequest when out of range for the curve.
  static Result<PrivateKey> from_bytes(KeyCurve curve, std::string_view secret);
  // A fresh random key.
  static PrivateKey generate(KeyCurve curve);

  KeyCurve curve() const { return curve_; }
  std::string_view bytes() const {
    return std::string_view(reinterpret_cast<const char*>(secret_.data()), secret_.size());
  }
  const PublicKey& public_key() const { return public_; }
  // A low-S compact signature over sha256(message).
  std::string sign(std::string_view message) const;

 private:
  PrivateKey(KeyCurve curve, std::array<std::uint8_t, 32> secret, PublicKey key)
      : curve_(curve), secret_(secret), public_(std::move(key)) {}
  KeyCurve curve_;
  std::array<std::uint8_t, 32> secret_;
  PublicKey public_;
};

// base58btc (the Bitcoin alphabet). Decoding refuses other characters and
// inputs longer than 256 characters (keys are ~50).
Result<std::string> base58_decode(std::string_view text);
std::string base58_encode(std::string_view bytes);

}  // namespace bulleted::firehose
