#include "appview/xrpc/xrpc.hpp"

#include <algorithm>
#include <charconv>

#include "appview/signin/service_auth.hpp"

namespace bulleted::appview {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::string> percent_decode(std::string_view text, bool plus_as_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) return std::nullopt;
      const int hi = hex_value(text[i + 1]);
      const int lo = hex_value(text[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_as_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

Result<XrpcParams> XrpcParams::parse(std::string_view query) {
  XrpcParams params;
  std::size_t start = 0;
  while (start <= query.size()) {
    std::size_t end = query.find('&', start);
    if (end == std::string_view::npos) end = query.size();
    const std::string_view pair = query.substr(start, end - start);
    if (!pair.empty()) {
      const std::size_t eq = pair.find('=');
      auto name = percent_decode(pair.substr(0, eq), true);
      auto value = percent_decode(
          eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1), true);
      if (!name || !value)
        return fail(ErrorCode::kInvalidRequest, "malformed percent-encoding in the query");
      params.values_[*name].push_back(std::move(*value));
    }
    start = end + 1;
  }
  return params;
}

std::optional<std::string> XrpcParams::text(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end() || it->second.empty()) return std::nullopt;
  return it->second.front();
}

Result<std::string> XrpcParams::required(const std::string& name) const {
  auto value = text(name);
  if (!value || value->empty())
    return fail(ErrorCode::kInvalidRequest, "missing required parameter " + name);
  return *value;
}

Result<std::optional<std::int64_t>> XrpcParams::integer(const std::string& name, std::int64_t min,
                                                        std::int64_t max) const {
  auto value = text(name);
  if (!value) return std::optional<std::int64_t>();
  std::int64_t parsed = 0;
  auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), parsed);
  if (ec != std::errc() || end != value->data() + value->size() || parsed < min || parsed > max) {
    return fail(ErrorCode::kInvalidRequest, name + " must be an integer from " +
                                                std::to_string(min) + " to " + std::to_string(max));
  }
  return std::optional<std::int64_t>(parsed);
}

Result<std::optional<std::int64_t>> XrpcParams::clamped_integer(const std::string& name,
                                                                std::int64_t min,
                                                                std::int64_t max) const {
  auto value = text(name);
  if (!value) return std::optional<std::int64_t>();
  const std::string_view digits = std::string_view(*value).substr(value->starts_with('-') ? 1 : 0);
  if (digits.empty() || digits.size() > 4096 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return fail(ErrorCode::kInvalidRequest, name + " must be an integer");
  }
  std::int64_t parsed = 0;
  auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), parsed);
  if (ec == std::errc::result_out_of_range) parsed = value->starts_with('-') ? min : max;
  return std::optional<std::int64_t>(std::clamp(parsed, min, max));
}

Result<std::optional<bool>> XrpcParams::boolean(const std::string& name) const {
  auto value = text(name);
  if (!value) return std::optional<bool>();
  if (*value == "true") return std::optional<bool>(true);
  if (*value == "false") return std::optional<bool>(false);
  return fail(ErrorCode::kInvalidRequest, name + " must be true or false");
}

HttpResponse json_response(const nlohmann::json& body, int status) {
  return HttpResponse{status,
                      "application/json",
                      body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                      {}};
}

HttpResponse error_response(const Error& error) {
  const ErrorStatus& status = error_status(error.code);
  // Internal failures keep their details in the log, not in the answer.
  const bool internal = status.status == 500;
  HttpResponse response = json_response(
      {{"error", status.name}, {"message", internal ? "the request failed" : error.message}},
      status.status);
  if (error.retry_after_seconds > 0) {
    response.headers.emplace_back("Retry-After", std::to_string(error.retry_after_seconds));
  }
  if (error.code == ErrorCode::kAuthRequired) {
    // RFC 6750: a refused token is invalid_token; no token, the bare scheme.
    response.headers.emplace_back("WWW-Authenticate",
                                  error.invalid_token
                                      ? bearer_challenge(kAuthRealm, error.message)
                                      : "Bearer realm=\"" + std::string(kAuthRealm) + "\"");
  }
  return response;
}

}  // namespace bulleted::appview
