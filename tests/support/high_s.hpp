// The high-S twin of an ECDSA signature, for tests of who accepts it.
#pragma once

#include <openssl/bn.h>

#include <string>

#include "firehose/crypto.hpp"

namespace bulleted::testing {

// The signature (r || s) with s replaced by order - s: as valid
// mathematically, but high-S, which commits refuse and JWTs accept.
inline std::string high_s_twin(std::string signature, firehose::KeyCurve curve) {
  const char* order_hex = curve == firehose::KeyCurve::kP256
                              ? "FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551"
                              : "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141";
  BIGNUM* order = nullptr;
  BN_hex2bn(&order, order_hex);
  BIGNUM* s = BN_bin2bn(reinterpret_cast<const unsigned char*>(signature.data()) + 32, 32, nullptr);
  BN_sub(s, order, s);
  BN_bn2binpad(s, reinterpret_cast<unsigned char*>(signature.data()) + 32, 32);
  BN_free(s);
  BN_free(order);
  return signature;
}

}  // namespace bulleted::testing
