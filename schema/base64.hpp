// Base64 (RFC 4648): the standard alphabet without padding for $bytes in the
// AT Protocol's JSON form, and the URL-safe alphabet for opaque cursors.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace bulleted::schema {

enum class Base64Alphabet { kStandard, kUrl };

std::string base64_encode(std::string_view bytes, Base64Alphabet alphabet, bool pad);
// Accepts input with or without padding; nullopt on any other character.
std::optional<std::string> base64_decode(std::string_view text, Base64Alphabet alphabet);

}  // namespace bulleted::schema
