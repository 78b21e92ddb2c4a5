#include <cctype>

#include "firehose/client/xrpc_client.hpp"

namespace bulleted::firehose {

std::string json_text(const nlohmann::json& json, std::initializer_list<const char*> path) {
  const nlohmann::json* at = &json;
  for (const char* key : path) {
    if (!at->is_object()) return "";
    auto it = at->find(key);
    if (it == at->end()) return "";
    at = &*it;
  }
  return at->is_string() ? at->get<std::string>() : "";
}

nlohmann::json XrpcReply::json() const { return nlohmann::json::parse(body, nullptr, false); }

std::string XrpcReply::error_name() const { return json_text(json(), {"error"}); }

std::string XrpcReply::error_message() const { return json_text(json(), {"message"}); }

std::optional<std::string> XrpcReply::header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  if (it == headers.end()) return std::nullopt;
  return it->second;
}

std::string form_encode(const std::vector<std::pair<std::string, std::string>>& fields) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const auto& [name, value] : fields) {
    if (!out.empty()) out.push_back('&');
    for (const std::string* part : {&name, &value}) {
      for (unsigned char c : *part) {
        if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
          out.push_back(static_cast<char>(c));
        } else {
          out.push_back('%');
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 15]);
        }
      }
      if (part == &name) out.push_back('=');
    }
  }
  return out;
}

}  // namespace bulleted::firehose
