#include "firehose/client/xrpc_client.hpp"

namespace bulleted::firehose {

nlohmann::json XrpcReply::json() const { return nlohmann::json::parse(body, nullptr, false); }

std::string XrpcReply::error_name() const {
  auto parsed = json();
  if (parsed.is_object() && parsed.contains("error") && parsed["error"].is_string()) {
    return parsed["error"].get<std::string>();
  }
  return "";
}

std::string XrpcReply::error_message() const {
  auto parsed = json();
  if (parsed.is_object() && parsed.contains("message") && parsed["message"].is_string()) {
    return parsed["message"].get<std::string>();
  }
  return "";
}

std::optional<std::string> XrpcReply::header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  if (it == headers.end()) return std::nullopt;
  return it->second;
}

}  // namespace bulleted::firehose
