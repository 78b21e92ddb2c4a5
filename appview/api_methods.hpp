// The XRPC method table: each app.bulleted.* method with its kind (query or
// procedure) and handler.
#pragma once

#include <string_view>

#include "appview/api.hpp"

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
// Checks the HTTP method and runs the handler.
HttpResponse call_method(Api& api, const ApiMethod& method, const HttpRequest& request);

}  // namespace bulleted::appview
