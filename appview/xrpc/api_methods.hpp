// The XRPC method table: each app.bulleted.* method with its kind (query or
// procedure) and handler.
#pragma once

#include <optional>
#include <string_view>

#include "appview/xrpc/api.hpp"

namespace bulleted::appview {

enum class MethodKind { kQuery, kProcedure };

struct ApiMethod;
using MethodHandler = HttpResponse (*)(Api& api, const ApiMethod& method,
                                       const HttpRequest& request);

struct ApiMethod {
  std::string_view nsid;
  MethodKind kind;
  MethodHandler handler;
};

const ApiMethod* find_method(std::string_view nsid);
// The 405 answer when `http_method` does not suit `method`, else nullopt.
std::optional<HttpResponse> wrong_http_method(const ApiMethod& method,
                                              std::string_view http_method);
// Checks the HTTP method and runs the handler.
HttpResponse call_method(Api& api, const ApiMethod& method, const HttpRequest& request);

}  // namespace bulleted::appview
