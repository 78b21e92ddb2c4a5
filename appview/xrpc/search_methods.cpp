// Search (DESIGN.md section 10): app.bulleted.searchNodes and
// app.bulleted.getTags. The query is parsed here, at the edge, into a
// typed query (schema/search_query.hpp); `q` is never logged.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "appview/xrpc/method_handlers.hpp"
#include "appview/xrpc/method_inputs.hpp"
#include "appview/xrpc/views.hpp"

namespace bulleted::appview {
namespace {

// How long a search waits for a place before it is refused.
constexpr std::chrono::milliseconds kSearchPlaceWait{250};
// How long a search pauses in all, between stretches of its work, while
// other requests wait for the request workers; past it, it only yields.
constexpr std::chrono::microseconds kSearchGiveWay{50'000};

}  // namespace

HttpResponse search_nodes(Api& api, const ApiMethod&, const XrpcCall& call) {
  const HttpRequest& request = call.request;
  TRY(params, XrpcParams::parse(request.query));
  TRY(repo, did_param(params, "repo"));
  TRY(root, optional_rkey_param(params, "root"));
  TRY(limit, params.integer("limit", 1, 100));
  const auto q = params.text("q");
  if (!q) return error_response(Error{ErrorCode::kInvalidRequest, "q is required"});
  TRY(query, schema::parse_search_query(*q));
  schema::SearchSort sort = schema::SearchSort::kRelevance;
  if (const auto named = params.text("sort")) {
    const auto parsed = schema::parse_search_sort(*named);
    if (!parsed) {
      return error_response(
          Error{ErrorCode::kInvalidRequest, "sort must be relevance, outline or recent"});
    }
    sort = *parsed;
  }
  auto& context = ApiMethods::context(api);
  const auto place = context.searches.enter(kSearchPlaceWait);
  if (!place) {
    ++context.metrics.search_refused;
    Error busy{ErrorCode::kRateLimited,
               "too many searches are running (limits.maxConcurrentSearches); retry soon"};
    busy.retry_after_seconds = 1;
    return error_response(busy);
  }
  schema::SearchRequest search{
      .did = repo,
      .q = *q,
      .query = std::move(query),
      .root_rkey = root,
      .sort = sort,
      .limit = static_cast<int>(limit.value_or(25)),
      .cursor = params.text("cursor"),
      .budget_rows = static_cast<std::size_t>(context.config.search_rows_per_request),
      .now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count(),
      .max_bytes = call.answer_bytes};
  if (context.give_way) {
    search.give_way = [&context, left = kSearchGiveWay]() mutable {
      left = std::max(std::chrono::microseconds(0), left - context.give_way(left));
    };
  }
  TRY(page, ApiMethods::store(api).read().search(search));
  context.metrics.search_rows += page.rows_examined;
  if (page.budget_cut) ++context.metrics.search_budget_cuts;
  spdlog::debug("search of {}: {} rows{}{}", repo, page.rows_examined,
                page.index_query ? "" : ", without the full-text index",
                page.budget_cut ? ", cut by the budget" : "");
  std::string body;
  body.reserve(64 + 600 * page.results.size());
  JsonWriter out(body);
  out.begin_object().key("results").begin_array();
  for (const auto& result : page.results) {
    out.begin_object().key("node");
    write_node_view(out, result.node);
    out.key("ancestors").begin_array();
    for (const auto& ancestor : result.ancestors) {
      out.begin_object().key("rkey").string(ancestor.rkey).key("text").string(ancestor.text);
      out.end_object();
    }
    out.end_array();
    if (result.ancestors_truncated) out.key("ancestorsTruncated").boolean(true);
    out.key("highlights").begin_array();
    for (const auto& range : result.highlights) {
      out.begin_object().key("field").string(range.in_note ? "note" : "text");
      out.key("byteStart").number(static_cast<std::int64_t>(range.start));
      out.key("byteEnd").number(static_cast<std::int64_t>(range.end)).end_object();
    }
    out.end_array().end_object();
  }
  out.end_array();
  if (page.cursor) out.key("cursor").string(*page.cursor);
  out.end_object();
  return written(std::move(body));
}

HttpResponse get_tags(Api& api, const ApiMethod&, const XrpcCall& call) {
  const HttpRequest& request = call.request;
  TRY(params, XrpcParams::parse(request.query));
  TRY(repo, did_param(params, "repo"));
  TRY(limit, params.integer("limit", 1, 100));
  const std::string prefix = params.text("prefix").value_or("");
  if (prefix.size() > 256) {
    return error_response(Error{ErrorCode::kInvalidRequest, "prefix is longer than 256 bytes"});
  }
  if (!schema::is_valid_utf8(prefix)) {
    return error_response(Error{ErrorCode::kInvalidRequest, "prefix is not valid UTF-8"});
  }
  TRY(tags, ApiMethods::store(api).read().tags(repo, prefix, static_cast<int>(limit.value_or(25))));
  std::string body;
  JsonWriter out(body);
  out.begin_object().key("tags").begin_array();
  for (const auto& tag : tags) {
    out.begin_object().key("tag").string(tag.tag).key("count").number(tag.count).end_object();
  }
  out.end_array().end_object();
  return written(std::move(body));
}

}  // namespace bulleted::appview
