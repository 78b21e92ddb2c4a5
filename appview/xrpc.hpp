// XRPC conventions: query parameters, JSON bodies, and the one table that
// maps error codes to HTTP statuses and XRPC error names.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "appview/http/server.hpp"
#include "schema/error.hpp"

namespace bulleted::appview {

// Query parameters: percent-decoded, '+' as space, repeated keys kept.
class XrpcParams {
 public:
  static Result<XrpcParams> parse(std::string_view query);
  std::optional<std::string> text(const std::string& name) const;
  // Errors name the parameter: "limit must be an integer from 1 to 1000".
  Result<std::optional<std::int64_t>> integer(const std::string& name, std::int64_t min,
                                              std::int64_t max) const;
  Result<std::optional<bool>> boolean(const std::string& name) const;
  Result<std::string> required(const std::string& name) const;

 private:
  std::map<std::string, std::vector<std::string>> values_;
};

// The status and XRPC error name of an error code.
struct XrpcStatus {
  int status;
  std::string_view name;
};
XrpcStatus xrpc_status(ErrorCode code);

HttpResponse json_response(const nlohmann::json& body, int status = 200);
HttpResponse error_response(const Error& error);
HttpResponse error_response(int status, std::string_view name, const std::string& message);

// Percent-decoding; nullopt on a malformed escape.
std::optional<std::string> percent_decode(std::string_view text, bool plus_as_space);

}  // namespace bulleted::appview
