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

}  // namespace bulleted::firehose
