// What the handlers of the XRPC method table (api_methods.cpp) share across
// their files, and the handlers defined outside api_methods.cpp. Internal to
// appview/xrpc/.
#pragma once

#include <optional>
#include <string_view>

#include "appview/xrpc/api_methods.hpp"
#include "appview/xrpc/xrpc.hpp"

namespace bulleted::appview {

// Handlers reach Api's connection and context through this friend.
struct ApiMethods {
  static schema::Store& store(Api& api) { return api.store(); }
  static AppContext& context(Api& api) { return api.context_; }
  static Result<std::optional<Caller>> caller(Api& api, const HttpRequest& request,
                                              std::string_view nsid) {
    return api.caller(request, nsid);
  }
};

// Binds `target` to the value of `expr`, or answers with its error.
#define TRY(target, expr)                                               \
  auto target##_result = (expr);                                        \
  if (!target##_result) return error_response(target##_result.error()); \
  auto target = std::move(*target##_result)

// A 200 answer whose JSON body a JsonWriter wrote.
inline HttpResponse written(std::string body) {
  return HttpResponse{200, "application/json", std::move(body), {}};
}

// A streamed answer whose read failed after its status went out: all that
// is left is to log and cut the answer short (the server closes it).
[[noreturn]] void cut_short(std::string_view what, const Error& error);

// A credential that is not valid (401, counted against the client's address).
Error invalid_token(std::string message);

// The web outliner's file at a GET's path, or nullopt; the app view's
// did:web document (operator_routes.cpp).
std::optional<HttpResponse> web_page(const HttpRequest& request);
HttpResponse did_document(const Config& config);

// The queries over the index (query_methods.cpp).
HttpResponse get_node(Api& api, const ApiMethod& method, const XrpcCall& call);
HttpResponse get_children(Api& api, const ApiMethod& method, const XrpcCall& call);
HttpResponse get_window(Api& api, const ApiMethod& method, const XrpcCall& call);
HttpResponse get_subtree(Api& api, const ApiMethod& method, const XrpcCall& call);
HttpResponse get_ancestors(Api& api, const ApiMethod& method, const XrpcCall& call);
HttpResponse get_outline(Api& api, const ApiMethod& method, const XrpcCall& call);
HttpResponse get_position(Api& api, const ApiMethod& method, const XrpcCall& call);
HttpResponse resolve_handle(Api& api, const ApiMethod& method, const XrpcCall& call);
HttpResponse get_changes(Api& api, const ApiMethod& method, const XrpcCall& call);
HttpResponse stream_changes(Api& api, const ApiMethod& method, const XrpcCall& call);

// Search (search_methods.cpp).
HttpResponse search_nodes(Api& api, const ApiMethod& method, const XrpcCall& call);
HttpResponse get_tags(Api& api, const ApiMethod& method, const XrpcCall& call);

}  // namespace bulleted::appview
