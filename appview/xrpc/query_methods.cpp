// The queries over the index: nodes, pages, windows, subtrees, ancestors,
// positions, changes, and com.atproto.identity.resolveHandle. Each answer is
// written straight from the rows (views.hpp).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "appview/xrpc/method_handlers.hpp"
#include "appview/xrpc/method_inputs.hpp"
#include "appview/xrpc/views.hpp"

namespace bulleted::appview {
namespace {

using nlohmann::json;

// {"<name>": [NodeView...]} and what `more` adds to the object.
template <class Rows, class More>
HttpResponse node_list(std::string_view name, const Rows& rows, More&& more) {
  std::string body;
  body.reserve(64 + 400 * rows.size());
  JsonWriter out(body);
  out.begin_object().key(name).begin_array();
  for (const auto& row : rows) write_node_view(out, row);
  out.end_array();
  more(out);
  out.end_object();
  return written(std::move(body));
}

}  // namespace

HttpResponse get_node(Api& api, const ApiMethod&, const XrpcCall& call) {
  const HttpRequest& request = call.request;
  TRY(params, XrpcParams::parse(request.query));
  TRY(repo, did_param(params, "repo"));
  TRY(rkey, rkey_param(params, "rkey"));
  TRY(node, ApiMethods::store(api).read().node(repo, rkey));
  std::string body;
  JsonWriter out(body);
  write_node_view(out, node);
  return written(std::move(body));
}

HttpResponse get_children(Api& api, const ApiMethod&, const XrpcCall& call) {
  const HttpRequest& request = call.request;
  TRY(params, XrpcParams::parse(request.query));
  TRY(repo, did_param(params, "repo"));
  TRY(parent, optional_rkey_param(params, "parent"));
  TRY(limit, params.integer("limit", 1, 1000));
  TRY(reverse, params.boolean("reverse"));
  const schema::ChildrenQuery query{.did = repo,
                                    .parent_rkey = parent,
                                    .limit = static_cast<int>(limit.value_or(100)),
                                    .cursor = params.text("cursor"),
                                    .reverse = reverse.value_or(false),
                                    .max_bytes = call.answer_bytes};
  // Each node written as its row is read (no copy of the page); on an error
  // the part written is dropped for the error's answer.
  std::string body;
  body.reserve(64 + 400 * static_cast<std::size_t>(std::min(query.limit, 100)));
  JsonWriter out(body);
  out.begin_object().key("nodes").begin_array();
  TRY(cursor, ApiMethods::store(api).read().children(
                  query, [&](const schema::NodeRowView& row) { write_node_view(out, row); }));
  out.end_array();
  if (cursor) out.key("cursor").string(*cursor);
  out.end_object();
  return written(std::move(body));
}

HttpResponse get_window(Api& api, const ApiMethod&, const XrpcCall& call) {
  const HttpRequest& request = call.request;
  TRY(params, XrpcParams::parse(request.query));
  TRY(repo, did_param(params, "repo"));
  TRY(anchor, rkey_param(params, "anchor"));
  TRY(before, params.integer("before", 0, 1000));
  TRY(after, params.integer("after", 0, 1000));
  TRY(window, ApiMethods::store(api).read().window(
                  repo, anchor, static_cast<int>(before.value_or(20)),
                  static_cast<int>(after.value_or(20)), call.answer_bytes));
  return node_list("nodes", window.nodes, [&](JsonWriter& out) {
    out.key("hasBefore").boolean(window.has_before);
    out.key("hasAfter").boolean(window.has_after);
  });
}

HttpResponse get_subtree(Api& api, const ApiMethod&, const XrpcCall& call) {
  const HttpRequest& request = call.request;
  TRY(params, XrpcParams::parse(request.query));
  TRY(repo, did_param(params, "repo"));
  TRY(root, optional_rkey_param(params, "root"));
  TRY(depth, params.integer("depth", 0, 64));
  TRY(budget, params.integer("budgetBytes", 1024, static_cast<std::int64_t>(kMaxSubtreeBudget)));
  // The budget asked for, and no more than the client's query budget held.
  schema::SubtreeQuery query{
      .did = repo,
      .root_rkey = root,
      .depth = static_cast<int>(depth.value_or(8)),
      .budget_bytes =
          std::min(static_cast<std::size_t>(budget.value_or(256 * 1024)), call.answer_bytes)};
  // Whatever can fail is decided before the answer starts.
  if (root) {
    TRY(root_row, ApiMethods::store(api).read().node(repo, *root));
  }
  // Sent as it is written (on this worker thread, after the handler
  // returns): the last level's groups are read while the levels above and
  // the groups before go out.
  HttpResponse response;
  response.stream_waits = false;  // at most the budget: never wait on the client
  response.stream = [&api, query = std::move(query)](ResponseStream& out) {
    bool open = true;
    SubtreeAnswer answer([&](std::string_view piece) {
      if (open) open = out.write(piece);
    });
    auto read = ApiMethods::store(api).read().subtree(query, answer);
    if (!read) cut_short("getSubtree of " + query.did, read.error());
    if (open) answer.finish();
  };
  return response;
}

// app.bulleted.getOutline, exactly as published (DESIGN.md section 13):
// public, depth and limit clamped, rows in pre-order as the published
// #node, and NotFound alike for an unknown DID, an unknown or unreadable
// bullet and anything hidden.
HttpResponse get_outline(Api& api, const ApiMethod&, const XrpcCall& call) {
  const HttpRequest& request = call.request;
  TRY(params, XrpcParams::parse(request.query));
  TRY(did, did_param(params, "did"));
  TRY(depth, params.clamped_integer("depth", 1, 5));
  TRY(limit, params.clamped_integer("limit", 1, 100));
  schema::OutlineQuery query{.did = did,
                             .depth = static_cast<int>(depth.value_or(3)),
                             .limit = static_cast<int>(limit.value_or(10)),
                             .max_bytes = call.answer_bytes,
                             // Each row written as it is read (no copy of it kept).
                             .render = [](const schema::NodeRowView& row, std::string& out) {
                               JsonWriter json(out);
                               write_outline_row(json, row);
                             }};
  if (auto node = params.text("node"); node && !node->empty()) {
    if (!schema::RecordKey::parse(*node)) {
      return error_response(Error{ErrorCode::kNotFound, "no such bullet"});
    }
    query.root_rkey = std::move(*node);
  }
  TRY(page, ApiMethods::store(api).read().outline(query));
  std::string body;
  body.reserve(256 + 400 * page.nodes.size());
  JsonWriter out(body);
  out.begin_object().key("did").string(did);
  if (page.root) {
    out.key("root");
    write_outline_row(out, page.root->view());
  }
  out.key("nodes").begin_array();
  for (const auto& row : page.nodes) out.raw(row.rendered);
  out.end_array();
  const char* stop = page.stop == schema::OutlineStop::kComplete ? "complete"
                     : page.stop == schema::OutlineStop::kDepth  ? "depth"
                                                                 : "limit";
  out.key("stop").string(stop);
  out.key("truncated").boolean(page.stop != schema::OutlineStop::kComplete);
  if (page.handle && schema::Handle::parse(*page.handle)) out.key("handle").string(*page.handle);
  if (page.outline) {
    // Its image waits for the blob proxy (DESIGN.md section 12): a client
    // is never handed a raw blob reference it cannot fetch.
    out.key("outline").begin_object();
    out.key("uri").string_of(
        {"at://", did, "/", schema::kOutlineCollection, "/", *page.outline_rkey});
    if (page.outline->title) out.key("title").string(*page.outline->title);
    if (page.outline->description) out.key("description").string(*page.outline->description);
    if (page.outline->image_alt) out.key("imageAlt").string(*page.outline->image_alt);
    out.end_object();
  }
  out.end_object();
  HttpResponse response = written(std::move(body));
  return response;
}

HttpResponse get_ancestors(Api& api, const ApiMethod&, const XrpcCall& call) {
  const HttpRequest& request = call.request;
  TRY(params, XrpcParams::parse(request.query));
  TRY(repo, did_param(params, "repo"));
  TRY(rkey, rkey_param(params, "rkey"));
  schema::Reader::AncestorsEnd end = schema::Reader::AncestorsEnd::kTop;
  TRY(chain, ApiMethods::store(api).read().ancestors(repo, rkey, &end, call.answer_bytes));
  // The chain goes on above its first ancestor: cut by the answer's bytes
  // or by the walk's bound (the nearest ancestors are the ones given).
  const bool truncated = end == schema::Reader::AncestorsEnd::kByteLimit ||
                         end == schema::Reader::AncestorsEnd::kDepthLimit;
  return node_list("ancestors", chain, [&](JsonWriter& out) {
    if (truncated) out.key("truncated").boolean(true);
  });
}

HttpResponse get_position(Api& api, const ApiMethod&, const XrpcCall& call) {
  const HttpRequest& request = call.request;
  TRY(params, XrpcParams::parse(request.query));
  TRY(repo, did_param(params, "repo"));
  TRY(rkey, rkey_param(params, "rkey"));
  TRY(position, ApiMethods::store(api).read().position(repo, rkey));
  return json_response({{"index", position.index}, {"siblingCount", position.sibling_count}});
}

// The standard method, so that a frontend given a handle finds the repo:
// through the identity room (identity.handleResolver, else the handle's
// own host under the network policy), cached there.
HttpResponse resolve_handle(Api& api, const ApiMethod&, const XrpcCall& call) {
  const HttpRequest& request = call.request;
  TRY(params, XrpcParams::parse(request.query));
  auto handle = params.text("handle");
  if (!handle) return error_response(Error{ErrorCode::kInvalidRequest, "handle is required"});
  if (auto parsed = schema::Handle::parse(*handle); !parsed) {
    return error_response(Error{ErrorCode::kInvalidRequest, "not a handle: " + parsed.error()});
  }
  auto& context = ApiMethods::context(api);
  // A lookup that reaches another host takes a place of the outbound gate
  // (503 with Retry-After when none is free).
  auto did = context.services.identity->resolve_handle(*handle);
  if (!did) {
    if (did.error().code == ErrorCode::kInvalidRequest ||
        did.error().code == ErrorCode::kUnavailable) {
      return error_response(did.error());
    }
    // The detail (hosts, the resolver's state) is the log's, not a stranger's.
    spdlog::debug("resolveHandle: cannot resolve {}: {}", *handle, did.error().message);
    return json_response({{"error", "HandleNotFound"}, {"message", "cannot resolve " + *handle}},
                         400);
  }
  return json_response({{"did", *did}});
}

HttpResponse get_changes(Api& api, const ApiMethod&, const XrpcCall& call) {
  const HttpRequest& request = call.request;
  TRY(params, XrpcParams::parse(request.query));
  TRY(repo, did_param(params, "repo"));
  TRY(limit, params.integer("limit", 1, 1000));
  auto cursor = params.text("cursor");
  TRY(latest, params.boolean("latest"));
  if (latest.value_or(false)) {
    TRY(end, ApiMethods::store(api).read().latest_change_cursor(repo));
    return json_response({{"changes", json::array()}, {"cursor", end}});
  }
  TRY(page, ApiMethods::store(api).read().changes(
                repo, cursor ? std::optional<std::string_view>(*cursor) : std::nullopt,
                static_cast<int>(limit.value_or(100)), call.answer_bytes));
  std::string body;
  JsonWriter out(body);
  out.begin_object().key("changes").begin_array();
  std::string change_json;
  for (const auto& change : page.changes) {
    change_json.clear();
    write_change(change_json, change);
    out.raw(change_json);
  }
  out.end_array().key("cursor").string(page.cursor).end_object();
  return written(std::move(body));
}

}  // namespace bulleted::appview
