// The XRPC method table: each app.bulleted.* method with its kind (query or
// procedure) and handler.
#pragma once

#include <limits>
#include <optional>
#include <string_view>

#include "appview/xrpc/api.hpp"

namespace bulleted::appview {

enum class MethodKind { kQuery, kProcedure };

struct ApiMethod;

// One call of a method: its request, and the most bytes its answer may
// hold (the method's bound, and no more than the client's query budget
// held when the call began).
struct XrpcCall {
  const HttpRequest& request;
  std::size_t answer_bytes = std::numeric_limits<std::size_t>::max();
};

using MethodHandler = HttpResponse (*)(Api& api, const ApiMethod& method, const XrpcCall& call);

// What a method needs beyond the index. A context without it is answered
// 501 before the handler is reached, so handlers never check.
enum class Needs {
  kIndex,        // every mode
  kPdsSessions,  // pds mode (createSession, deleteSession)
  kImports,      // an import runner (the server has one; the fuzzer does not)
  kIdentity,     // an identity resolver (com.atproto.identity.resolveHandle)
};

// How a query's answer is bounded in bytes, before it is produced.
enum class AnswerBound {
  kPage,    // limits.maxAnswerBytes: a page stops short of it
  kBudget,  // the request's own budget (getSubtree's budgetBytes), at most 8 MiB
  kStream,  // a streamed document (an export): charged as it is written
};

struct ApiMethod {
  std::string_view nsid;
  MethodKind kind;
  MethodHandler handler;
  Needs needs = Needs::kIndex;
  AnswerBound answer = AnswerBound::kPage;
};

// The 501 answer when `context` lacks what `method` needs, else nullopt.
std::optional<HttpResponse> unavailable(const AppContext& context, const ApiMethod& method);

const ApiMethod* find_method(std::string_view nsid);
// The 405 answer when `http_method` does not suit `method`, else nullopt.
std::optional<HttpResponse> wrong_http_method(const ApiMethod& method,
                                              std::string_view http_method);
// Checks the HTTP method and runs the handler.
HttpResponse call_method(Api& api, const ApiMethod& method, const XrpcCall& call);

}  // namespace bulleted::appview
