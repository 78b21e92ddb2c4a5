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

// What a method needs beyond the index. A context without it is answered
// 501 before the handler is reached, so handlers never check.
enum class Needs {
  kIndex,        // every mode
  kPdsSessions,  // pds mode (createSession, deleteSession)
  kImports,      // an import runner (the server has one; the fuzzer does not)
  kIdentity,     // an identity resolver (com.atproto.identity.resolveHandle)
};

struct ApiMethod {
  std::string_view nsid;
  MethodKind kind;
  MethodHandler handler;
  Needs needs = Needs::kIndex;
};

// The 501 answer when `context` lacks what `method` needs, else nullopt.
std::optional<HttpResponse> unavailable(const AppContext& context, const ApiMethod& method);

const ApiMethod* find_method(std::string_view nsid);
// The 405 answer when `http_method` does not suit `method`, else nullopt.
std::optional<HttpResponse> wrong_http_method(const ApiMethod& method,
                                              std::string_view http_method);
// Checks the HTTP method and runs the handler.
HttpResponse call_method(Api& api, const ApiMethod& method, const HttpRequest& request);

}  // namespace bulleted::appview
