// The XRPC method table, and the handlers of procedures, imports, exports
// and sign-in sessions (queries over the index: query_methods.cpp).
#include "appview/xrpc/api_methods.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <variant>

#include "appview/outline/from_index.hpp"
#include "appview/signin/jwt.hpp"
#include "appview/write/writer.hpp"
#include "appview/xrpc/method_handlers.hpp"
#include "appview/xrpc/method_inputs.hpp"
#include "appview/xrpc/xrpc.hpp"
#include "schema/syntax.hpp"

namespace bulleted::appview {

void cut_short(std::string_view what, const Error& error) {
  spdlog::error("{} failed: {}", what, error.message);
  throw std::runtime_error(error.message);
}

namespace {

using nlohmann::json;

// ---- procedures

struct Write {
  Body body;
  std::string repo;
  std::optional<PdsSession> session;  // pds mode
  std::unique_ptr<RecordSink> sink;
  PlacementFaults* faults = nullptr;  // none but under fault injection
};

// The PDS session a request's bearer token or session cookie names (pds
// mode).
Result<PdsSession> session_of(Api& api, const HttpRequest& request) {
  auto credential = credential_of(request, ApiMethods::context(api).config);
  if (!credential) {
    return fail(ErrorCode::kAuthRequired,
                "procedures need an Authorization: Bearer token from app.bulleted.createSession, "
                "or the session cookie of a sign-in at /oauth/login");
  }
  if (!credential->cookie && looks_like_jwt(credential->token)) {
    return fail(ErrorCode::kAuthRequired,
                "a service-auth token names no session of the app view's; sign out with the "
                "session's own token");
  }
  return ApiMethods::context(api).services.pds->sessions.find(ApiMethods::store(api),
                                                              credential->token);
}

// Who may write `repo`: the caller, proven and of that repo, with the
// PDS session to write through in pds mode (a session token's own, or the
// service-auth caller's latest).
Result<std::optional<PdsSession>> writer_of(Api& api, const ApiMethod& method,
                                            const HttpRequest& request, const std::string& repo) {
  auto& context = ApiMethods::context(api);
  auto caller = ApiMethods::caller(api, request, method.nsid);
  if (!caller) return std::unexpected(caller.error());
  if (!*caller) {
    return fail(ErrorCode::kAuthRequired, "procedures need an Authorization: Bearer token");
  }
  const bool service = (*caller)->via == Caller::Via::kServiceAuth;
  if (context.config.mode == Mode::kLocal) {
    if (service && !local_service_auth_allows(context.config, (*caller)->did)) {
      return fail(ErrorCode::kForbidden,
                  "service-auth writes are off on this app view (auth.localServiceAuth)");
    }
    if ((*caller)->did != repo) {
      return fail(ErrorCode::kForbidden, "the token may only write its own repo");
    }
    return std::optional<PdsSession>();
  }
  auto session =
      service ? context.services.pds->sessions.find_for_did(ApiMethods::store(api), (*caller)->did)
              : session_of(api, request);
  if (!session && service && session.error().code == ErrorCode::kAuthRequired &&
      context.config.public_url) {
    return fail(ErrorCode::kAuthRequired, "the app view holds no session of " + (*caller)->did +
                                              "; sign in at " + *context.config.public_url +
                                              "/oauth/login");
  }
  if (!session) return std::unexpected(session.error());
  if (session->did != repo) {
    return fail(ErrorCode::kForbidden, "this session may only write the repo of " + session->did);
  }
  return std::optional<PdsSession>(std::move(*session));
}

// Parses the body, checks the caller against the repo, and takes the sink
// its writes go through. On failure `error` is the answer.
Result<std::unique_ptr<Write>> begin_write(Api& api, const ApiMethod& method,
                                           const HttpRequest& request) {
  auto body = Body::parse(request);
  if (!body) return std::unexpected(body.error());
  auto repo = body->did("repo");
  if (!repo) return std::unexpected(repo.error());
  auto write = std::make_unique<Write>();
  auto session = writer_of(api, method, request, *repo);
  if (!session) return std::unexpected(session.error());
  write->session = std::move(*session);
  auto& writes = ApiMethods::context(api).writes();
  auto sink = writes.sink(ApiMethods::store(api), write->session ? &*write->session : nullptr);
  if (!sink) return std::unexpected(sink.error());
  write->sink = std::move(*sink);
  write->faults = writes.placement();
  write->body = std::move(*body);
  write->repo = std::move(*repo);
  return write;
}

HttpResponse placed(Api& api, const Result<WriteResult>& result) {
  auto& metrics = ApiMethods::context(api).metrics;
  if (!result) {
    if (result.error().code == ErrorCode::kStaleNeighbours) metrics.stale_conflicts++;
    return error_response(result.error());
  }
  metrics.placement_retries += static_cast<std::uint64_t>(result->retries);
  json out = {{"uri", result->uri}, {"rkey", result->rkey}, {"cid", result->cid}};
  if (result->sort_key) out["sortKey"] = *result->sort_key;
  HttpResponse response = json_response(out);
  response.headers.emplace_back("Atproto-Repo-Rev", result->rev);
  return response;
}

HttpResponse create_node(Api& api, const ApiMethod& method, const XrpcCall& call) {
  const HttpRequest& request = call.request;
  TRY(write, begin_write(api, method, request));
  TRY(intent, intent_of(write->body));
  TRY(fields, fields_of(write->body));
  if (!fields.text)
    return error_response(Error{ErrorCode::kInvalidRequest, "missing required field text"});
  auto& context = ApiMethods::context(api);
  Writer writer(context.locks, context.clock, *write->sink, write->faults, &context.creates);
  return placed(api, writer.create(ApiMethods::store(api), write->repo, intent, fields));
}

HttpResponse move_node(Api& api, const ApiMethod& method, const XrpcCall& call) {
  const HttpRequest& request = call.request;
  TRY(write, begin_write(api, method, request));
  TRY(rkey, write->body.rkey("rkey", true));
  TRY(intent, intent_of(write->body));
  auto& context = ApiMethods::context(api);
  Writer writer(context.locks, context.clock, *write->sink, write->faults);
  return placed(api, writer.move(ApiMethods::store(api), write->repo, *rkey, intent));
}

HttpResponse update_node(Api& api, const ApiMethod& method, const XrpcCall& call) {
  const HttpRequest& request = call.request;
  TRY(write, begin_write(api, method, request));
  TRY(rkey, write->body.rkey("rkey", true));
  TRY(fields, fields_of(write->body));
  auto& context = ApiMethods::context(api);
  Writer writer(context.locks, context.clock, *write->sink);
  return placed(api, writer.update(ApiMethods::store(api), write->repo, *rkey, fields));
}

HttpResponse delete_node(Api& api, const ApiMethod& method, const XrpcCall& call) {
  const HttpRequest& request = call.request;
  TRY(write, begin_write(api, method, request));
  TRY(rkey, write->body.rkey("rkey", true));
  auto& context = ApiMethods::context(api);
  Writer writer(context.locks, context.clock, *write->sink);
  TRY(deleted, writer.remove(ApiMethods::store(api), write->repo, *rkey));
  return json_response({{"deleted", deleted}});
}

outline::ImportLimits import_limits(const Config& config) {
  outline::ImportLimits limits;
  limits.max_bytes = config.max_import_bytes;
  return limits;
}

HttpResponse import_outline(Api& api, const ApiMethod& method, const XrpcCall& call) {
  const HttpRequest& request = call.request;
  auto& context = ApiMethods::context(api);
  TRY(write, begin_write(api, method, request));
  TRY(parent, write->body.rkey("parentRkey"));
  TRY(format_name, write->body.string("format"));
  TRY(content, write->body.take_string("content"));
  const auto format = outline::parse_format(format_name.value_or(""));
  if (!format) {
    return error_response(Error{ErrorCode::kInvalidRequest, "format must be opml or text"});
  }
  if (!content) {
    return error_response(Error{ErrorCode::kInvalidRequest, "missing required field content"});
  }
  TRY(parsed, outline::parse_outline(*format, *content, import_limits(context.config)));
  ImportPlanRequest plan{write->repo, parent, *format, std::nullopt, "WorkFlowy"};
  if (write->session) plan.session = write->session->digest;
  TRY(job, plan_import(ApiMethods::store(api), context.locks, context.clock, plan, parsed));
  context.services.imports->wake();
  return json_response({{"jobId", job.id}, {"rootRkey", job.root_rkey}});
}

HttpResponse get_import_job(Api& api, const ApiMethod&, const XrpcCall& call) {
  const HttpRequest& request = call.request;
  auto& context = ApiMethods::context(api);
  TRY(params, XrpcParams::parse(request.query));
  TRY(id, params.required("id"));
  TRY(job, ApiMethods::store(api).import_jobs().find(id));
  if (!job) return error_response(Error{ErrorCode::kNotFound, "no import job " + id});
  json errors = json::parse(job->errors_json, nullptr, false);
  json out = {{"id", job->id},
              {"state", to_string(job->state)},
              {"total", job->total},
              {"done", job->done},
              {"rate", context.services.imports->rate(job->id)},
              {"rootRkey", job->root_rkey},
              {"errors", errors.is_array() ? errors : json::array()}};
  if (job->resume_at) out["resumeAt"] = *job->resume_at;
  return json_response(out);
}

HttpResponse export_outline(Api& api, const ApiMethod&, const XrpcCall& call) {
  const HttpRequest& request = call.request;
  TRY(params, XrpcParams::parse(request.query));
  TRY(repo, did_param(params, "repo"));
  TRY(root, optional_rkey_param(params, "root"));
  TRY(format_name, params.required("format"));
  const auto format = outline::parse_format(format_name);
  if (!format) {
    return error_response(Error{ErrorCode::kInvalidRequest, "format must be opml or text"});
  }
  // Whatever can fail is decided before the answer starts.
  if (root) {
    TRY(root_row, ApiMethods::store(api).read().node(repo, *root));
  }
  // The exports' gate (the method's row) is entered once this answer is
  // returned, before it is produced.
  HttpResponse response;
  response.content_type = *format == outline::Format::kOpml ? "text/x-opml; charset=utf-8"
                                                            : "text/plain; charset=utf-8";
  // Produced on this worker thread after the handler returns (so its
  // connection is this thread's), written as it is read.
  response.stream = [&api, repo, root, format = *format](ResponseStream& out) {
    bool open = true;
    outline::OutlineWriter writer(format, "Bulleted export of " + repo,
                                  [&](std::string_view piece) {
                                    if (open) open = out.write(piece);
                                  });
    auto walked = outline::walk_outline(ApiMethods::store(api), repo, root,
                                        [&](const outline::OutlineNode& node, std::size_t depth) {
                                          writer.node(node, depth);
                                          return open;
                                        });
    if (!walked) cut_short("export of " + repo, walked.error());
    if (open) writer.finish();
  };
  return response;
}

HttpResponse create_session(Api& api, const ApiMethod&, const XrpcCall& call) {
  const HttpRequest& request = call.request;
  auto& context = ApiMethods::context(api);
  TRY(body, Body::parse(request));
  TRY(identifier, body.string("identifier"));
  TRY(password, body.string("password"));
  if (!identifier || !password) {
    return error_response(
        Error{ErrorCode::kInvalidRequest, "identifier and password are required"});
  }
  // Per account as well as per address (admit()): many addresses guessing
  // one account's password are limited too.
  std::string account = *identifier;
  for (auto& c : account) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (auto wait = context.sign_in_account_limits.take(ClientKey::account(account))) {
    Error limited{ErrorCode::kRateLimited, "too many sign-in attempts for this account; retry in " +
                                               std::to_string(*wait) +
                                               " s (limits.signInPerAccountPerMinute)"};
    limited.retry_after_seconds = *wait;
    return error_response(limited);
  }
  TRY(created,
      context.services.pds->sessions.create(ApiMethods::store(api), *identifier, *password));
  json out = {{"did", created.session.did}, {"token", created.token}};
  out["handle"] = created.session.handle ? json(*created.session.handle) : json(*identifier);
  return json_response(out);
}

HttpResponse delete_session(Api& api, const ApiMethod& method, const XrpcCall& call) {
  const HttpRequest& request = call.request;
  auto& context = ApiMethods::context(api);
  TRY(caller, ApiMethods::caller(api, request, method.nsid));  // the Origin of a cookie
  TRY(session, session_of(api, request));
  if (auto r = context.services.pds->sessions.remove(ApiMethods::store(api), session); !r) {
    return error_response(r.error());
  }
  HttpResponse response = json_response(json::object());
  if (caller && caller->via == Caller::Via::kCookie) {
    response.headers.emplace_back("Set-Cookie", session_cookie(context.config, "", true));
  }
  return response;
}

HttpResponse get_session(Api& api, const ApiMethod& method, const XrpcCall& call) {
  const HttpRequest& request = call.request;
  auto& context = ApiMethods::context(api);
  TRY(caller, ApiMethods::caller(api, request, method.nsid));
  if (!caller) {
    return error_response(
        Error{ErrorCode::kAuthRequired, "not signed in: no session cookie or bearer token"});
  }
  json out = {{"did", caller->did}};
  if (caller->via == Caller::Via::kServiceAuth) {
    out["via"] = "serviceAuth";
  } else if (context.config.mode == Mode::kPds) {
    TRY(session, session_of(api, request));
    if (session.handle) out["handle"] = *session.handle;
    out["via"] = session.oauth ? "oauth" : "session";
  } else {
    out["via"] = "token";
  }
  HttpResponse response = json_response(out);
  response.headers.emplace_back("Cache-Control", "no-store");
  return response;
}

using enum MethodKind;
using enum Auth;
using enum BodyLimit;
using enum RateBucket;

constexpr ApiMethod kMethods[] = {
    // Queries over the index.
    {"app.bulleted.getNode", kQuery, get_node, kPublic, kSmall, kQueryBytes},
    {"app.bulleted.getChildren", kQuery, get_children, kPublic, kSmall, kQueryBytes},
    {"app.bulleted.getWindow", kQuery, get_window, kPublic, kSmall, kQueryBytes},
    {"app.bulleted.getSubtree", kQuery, get_subtree, kPublic, kSmall, kQueryBytes, Needs::kIndex,
     AnswerBound::kBudget},
    {"app.bulleted.getAncestors", kQuery, get_ancestors, kPublic, kSmall, kQueryBytes},
    {"app.bulleted.getOutline", kQuery, get_outline, kPublic, kSmall, kQueryBytes},
    {"app.bulleted.getPosition", kQuery, get_position, kPublic, kSmall, kQueryBytes},
    {"app.bulleted.getChanges", kQuery, get_changes, kPublic, kSmall, kQueryBytes},
    {"app.bulleted.streamChanges", kQuery, stream_changes, kPublic, kSmall, kQueryBytes,
     Needs::kStreams, AnswerBound::kHeld},
    {"app.bulleted.searchNodes", kQuery, search_nodes, kPublic, kSmall, kQueryBytes, Needs::kIndex,
     AnswerBound::kPage, StreamGate::kNone, MethodLane::kSearches},
    {"app.bulleted.getTags", kQuery, get_tags, kPublic, kSmall, kQueryBytes},
    {"app.bulleted.exportOutline", kQuery, export_outline, kPublic, kSmall, kQueryBytes,
     Needs::kIndex, AnswerBound::kStream, StreamGate::kExports},
    {"com.atproto.identity.resolveHandle", kQuery, resolve_handle, kPublic, kSmall, kQueryBytes,
     Needs::kIdentity},
    // Writes.
    {"app.bulleted.createNode", kProcedure, create_node, kCaller, kMaxBody, kProcedures},
    {"app.bulleted.moveNode", kProcedure, move_node, kCaller, kMaxBody, kProcedures},
    {"app.bulleted.updateNode", kProcedure, update_node, kCaller, kMaxBody, kProcedures},
    {"app.bulleted.deleteNode", kProcedure, delete_node, kCaller, kMaxBody, kProcedures},
    // Imports.
    {"app.bulleted.importOutline", kProcedure, import_outline, kCaller, kMaxImport, kProcedures,
     Needs::kImports},
    {"app.bulleted.getImportJob", kQuery, get_import_job, kPublic, kSmall, kQueryBytes,
     Needs::kImports},
    // Sessions.
    {"app.bulleted.createSession", kProcedure, create_session, kSignIn, kSmall, kSignIns,
     Needs::kPdsSessions},
    {"app.bulleted.deleteSession", kProcedure, delete_session, kCaller, kMaxBody, kProcedures,
     Needs::kPdsSessions},
    {"app.bulleted.getSession", kQuery, get_session, kSelf, kSmall, kQueryBytes},
};

// A query reads no more than a small body and pays in answer bytes; a
// procedure is not paid in bytes; only a query's answer is streamed.
constexpr bool consistent(const ApiMethod& method) {
  if (method.kind == kQuery) {
    return (method.auth == kPublic || method.auth == kSelf) && method.body == kSmall &&
           method.bucket == kQueryBytes;
  }
  return (method.auth == kCaller || method.auth == kSignIn) && method.bucket != kQueryBytes &&
         method.answer == AnswerBound::kPage && method.gate == StreamGate::kNone;
}
static_assert(std::all_of(std::begin(kMethods), std::end(kMethods), consistent));

}  // namespace

std::span<const ApiMethod> api_methods() { return kMethods; }

const ApiMethod* find_method(std::string_view nsid) {
  for (const auto& method : kMethods) {
    if (method.nsid == nsid) return &method;
  }
  return nullptr;
}

std::optional<HttpResponse> wrong_http_method(const ApiMethod& method,
                                              std::string_view http_method) {
  const bool query = method.kind == MethodKind::kQuery;
  if ((query && http_method != "GET" && http_method != "HEAD") ||
      (!query && http_method != "POST")) {
    HttpResponse response = error_response(
        Error{ErrorCode::kMethodNotAllowed, "incorrect HTTP method (" + std::string(http_method) +
                                                "): " + std::string(method.nsid) + " expects " +
                                                (query ? "GET" : "POST")});
    response.headers.emplace_back("Allow", query ? "GET" : "POST");
    return response;
  }
  return std::nullopt;
}

std::optional<HttpResponse> unavailable(const AppContext& context, const ApiMethod& method) {
  if (method.needs == Needs::kPdsSessions && context.services.pds == nullptr) {
    return error_response(Error{
        ErrorCode::kMethodNotImplemented,
        std::string(method.nsid) + " is for pds mode; local mode uses tokens from `token create`"});
  }
  if (method.nsid == "app.bulleted.createSession" && context.services.pds != nullptr &&
      !context.config.allow_password_sessions) {
    return error_response(Error{ErrorCode::kMethodNotImplemented,
                                "password sessions are off on this app view "
                                "(auth.allowPasswordSessions); they are for bots and the CLI"});
  }
  if (method.needs == Needs::kIdentity && context.services.identity == nullptr) {
    return error_response(
        Error{ErrorCode::kMethodNotImplemented, std::string(method.nsid) + " is not served here"});
  }
  if (method.needs == Needs::kStreams && context.services.streams == nullptr) {
    return error_response(
        Error{ErrorCode::kMethodNotImplemented, std::string(method.nsid) + " is not served here"});
  }
  if (method.needs == Needs::kImports && context.services.imports == nullptr) {
    return error_response(Error{ErrorCode::kMethodNotImplemented,
                                std::string(method.nsid) + " is not available in this build"});
  }
  return std::nullopt;
}

HttpResponse call_method(Api& api, const ApiMethod& method, const XrpcCall& call) {
  if (auto wrong = wrong_http_method(method, call.request.method)) return std::move(*wrong);
  if (auto missing = unavailable(ApiMethods::context(api), method)) return std::move(*missing);
  return method.handler(api, method, call);
}

}  // namespace bulleted::appview
