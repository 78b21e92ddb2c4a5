// app.bulleted.streamChanges: getChanges held open (appview/live/). The
// handler only checks the request and opens the stream: it runs in the
// streams' lane, and the answer, once its head is out, holds no worker.
#include <charconv>

#include "appview/live/change_streams.hpp"
#include "appview/xrpc/method_handlers.hpp"
#include "appview/xrpc/method_inputs.hpp"
#include "appview/xrpc/views.hpp"

namespace bulleted::appview {

HttpResponse stream_changes(Api& api, const ApiMethod&, const XrpcCall& call) {
  const HttpRequest& request = call.request;
  AppContext& context = ApiMethods::context(api);
  TRY(params, XrpcParams::parse(request.query));
  TRY(repo, did_param(params, "repo"));
  // What EventSource sends when it reconnects wins over the cursor it was
  // first opened with.
  std::string from = request.header("last-event-id");
  if (from.empty()) from = params.text("cursor").value_or("");
  std::optional<std::int64_t> cursor;
  if (!from.empty()) {
    std::int64_t value = 0;
    auto [end, ec] = std::from_chars(from.data(), from.data() + from.size(), value);
    if (ec != std::errc() || end != from.data() + from.size() || value < 0) {
      return error_response(Error{ErrorCode::kInvalidRequest, "malformed cursor"});
    }
    cursor = value;
  }
  ChangeStreams& streams = *context.services.streams;
  if (auto admitted = streams.admit(); !admitted) return error_response(admitted.error());
  HttpResponse response;
  response.content_type = "text/event-stream; charset=utf-8";
  response.headers = {{"Cache-Control", "no-store"}, {"X-Accel-Buffering", "no"}};
  StreamRequest follow{repo, cursor, ClientKey::address(context.proxies.client_key(request)).str()};
  response.hold = [&streams, follow = std::move(follow)](std::shared_ptr<HeldAnswer> answer) {
    streams.open(follow, std::move(answer));
  };
  return response;
}

}  // namespace bulleted::appview
