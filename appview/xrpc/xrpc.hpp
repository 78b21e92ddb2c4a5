// XRPC conventions: query parameters, JSON answers, and error answers from
// the one table of error codes (schema/error.hpp).
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
  // An integer brought into [min, max] (a value outside is answered with
  // the nearest bound, however far outside); only a value that is not an
  // integer is an error.
  Result<std::optional<std::int64_t>> clamped_integer(const std::string& name, std::int64_t min,
                                                      std::int64_t max) const;
  Result<std::optional<bool>> boolean(const std::string& name) const;
  Result<std::string> required(const std::string& name) const;

 private:
  std::map<std::string, std::vector<std::string>> values_;
};

HttpResponse json_response(const nlohmann::json& body, int status = 200);
// The realm of the app view's bearer challenges (WWW-Authenticate).
inline constexpr std::string_view kAuthRealm = "bulleted";
// The answer to an error: its status and XRPC name from the one table
// (schema/error.hpp), `Retry-After` for kRateLimited, `WWW-Authenticate` for
// kAuthRequired; internal failures say only "the request failed" (the
// details go to the log).
HttpResponse error_response(const Error& error);

// Percent-decoding; nullopt on a malformed escape.
std::optional<std::string> percent_decode(std::string_view text, bool plus_as_space);

}  // namespace bulleted::appview
