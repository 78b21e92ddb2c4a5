#include "appview/signin/secret_box.hpp"

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <memory>
#include <stdexcept>

#include "schema/base64.hpp"

namespace bulleted::appview {
namespace {

constexpr int kNonceBytes = 12;
constexpr int kTagBytes = 16;

using CipherContext = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

CipherContext new_context() {
  CipherContext context(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  if (!context) throw std::bad_alloc();
  return context;
}

const unsigned char* bytes(std::string_view text) {
  return reinterpret_cast<const unsigned char*>(text.data());
}

}  // namespace

std::string random_id(std::string_view prefix, std::size_t bytes) {
  std::string random(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(random.data()), static_cast<int>(bytes)) != 1) {
    throw std::runtime_error("no randomness for an identifier");
  }
  return std::string(prefix) + schema::base64_encode(random, schema::Base64Alphabet::kUrl, false);
}

SecretBox::SecretBox(std::string_view key_material) {
  SHA256(bytes(key_material), key_material.size(), key_.data());
}

std::string SecretBox::seal(std::string_view plaintext) const {
  std::string out(kNonceBytes + plaintext.size() + kTagBytes, '\0');
  auto* data = reinterpret_cast<unsigned char*>(out.data());
  if (RAND_bytes(data, kNonceBytes) != 1) throw std::runtime_error("no randomness for a nonce");
  auto context = new_context();
  int length = 0;
  if (EVP_EncryptInit_ex(context.get(), EVP_aes_256_gcm(), nullptr, key_.data(), data) != 1 ||
      EVP_EncryptUpdate(context.get(), data + kNonceBytes, &length, bytes(plaintext),
                        static_cast<int>(plaintext.size())) != 1 ||
      EVP_EncryptFinal_ex(context.get(), data + kNonceBytes + length, &length) != 1 ||
      EVP_CIPHER_CTX_ctrl(context.get(), EVP_CTRL_GCM_GET_TAG, kTagBytes,
                          data + kNonceBytes + plaintext.size()) != 1) {
    throw std::runtime_error("AES-256-GCM encryption failed");
  }
  return schema::base64_encode(out, schema::Base64Alphabet::kStandard, true);
}

Result<std::string> SecretBox::open(std::string_view sealed) const {
  auto raw = schema::base64_decode(sealed, schema::Base64Alphabet::kStandard);
  if (!raw || raw->size() < kNonceBytes + kTagBytes) {
    return fail(ErrorCode::kCorrupt, "a sealed secret is malformed");
  }
  const std::size_t text_size = raw->size() - kNonceBytes - kTagBytes;
  auto* data = reinterpret_cast<unsigned char*>(raw->data());
  std::string plaintext(text_size, '\0');
  auto* out = reinterpret_cast<unsigned char*>(plaintext.data());
  auto context = new_context();
  int length = 0;
  const bool ok =
      EVP_DecryptInit_ex(context.get(), EVP_aes_256_gcm(), nullptr, key_.data(), data) == 1 &&
      EVP_DecryptUpdate(context.get(), out, &length, data + kNonceBytes,
                        static_cast<int>(text_size)) == 1 &&
      EVP_CIPHER_CTX_ctrl(context.get(), EVP_CTRL_GCM_SET_TAG, kTagBytes,
                          data + kNonceBytes + text_size) == 1 &&
      EVP_DecryptFinal_ex(context.get(), out + length, &length) == 1;
  if (!ok) return fail(ErrorCode::kCorrupt, "a sealed secret does not open with this key");
  return plaintext;
}

}  // namespace bulleted::appview
