// Secrets: random identifiers (tokens, job ids), and authenticated
// encryption of secrets at rest (PDS session tokens):
// AES-256-GCM with a random 96-bit nonce per message; the key is the SHA-256
// of the configured key material. A sealed value is text:
// base64(nonce || ciphertext || tag).
//
// Thread-safe (no shared mutable state).
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include "schema/error.hpp"

namespace bulleted::appview {

// `prefix` followed by `bytes` bytes from OpenSSL's CSPRNG in unpadded
// base64url: bearer tokens ("bt_", 32 bytes) and import job ids ("imp_", 12).
std::string random_id(std::string_view prefix, std::size_t bytes);

class SecretBox {
 public:
  explicit SecretBox(std::string_view key_material);
  std::string seal(std::string_view plaintext) const;
  // kCorrupt when the value was not sealed with this key or was altered.
  Result<std::string> open(std::string_view sealed) const;

 private:
  std::array<unsigned char, 32> key_;
};

}  // namespace bulleted::appview
