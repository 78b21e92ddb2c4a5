// Bearer tokens of the app view's own (local-mode tokens from `token
// create`, pds-mode session tokens): random 256-bit values shown once, of
// which only the SHA-256 digest is stored.
//
// Thread-safe (OpenSSL's random source).
#pragma once

#include <string>
#include <string_view>

namespace bulleted::appview {

// A new bearer token ("bt_" and 32 random bytes, base64url).
std::string new_token();
// The digest stored for a token: SHA-256, lower-case hex.
std::string token_digest(std::string_view token);

}  // namespace bulleted::appview
