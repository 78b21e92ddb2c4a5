#include "appview/signin/tokens.hpp"

#include "appview/signin/secret_box.hpp"
#include "firehose/cid.hpp"

namespace bulleted::appview {

std::string new_token() { return random_id("bt_", 32); }

std::string token_digest(std::string_view token) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const unsigned char c : firehose::sha256(token)) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

}  // namespace bulleted::appview
