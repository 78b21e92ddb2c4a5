// The XRPC method table, which is the admission policy too: each method
// with its kind (a query is GET or HEAD, a procedure POST), its handler,
// who may call it, the body it may send, the rate limit it counts against,
// what it needs of this process, how its answer is bounded, and the gate of
// a long stream. Api::admit decides from a method's row before its body is
// read; Api::handle runs the handler under the same row.
#pragma once

#include <limits>
#include <optional>
#include <span>
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
  kStreams,      // change streams (the server has them; the fuzzer does not)
};

// How a query's answer is bounded in bytes, before it is produced.
enum class AnswerBound {
  kPage,    // limits.maxAnswerBytes: a page stops short of it
  kBudget,  // the request's own budget (getSubtree's budgetBytes), at most 8 MiB
  kStream,  // a streamed document (an export): charged as it is written
  kHeld,    // held open (change streams): not charged, limited by the
            // streams' own limits, opened in the streams' lane
};

// Who may call a method, decided before its body is read.
enum class Auth {
  kPublic,  // anyone; a service-auth JWT sent along is verified before the handler
  kSelf,    // anyone; the handler asks who calls (getSession) and verifies it then
  kSignIn,  // anyone: the handler checks a password (createSession)
  kCaller,  // valid credentials first: a token, the session cookie from this
            // origin, or a service-auth JWT (none: 401, the body unread)
};

// The most body bytes a call may send (413 above, before they are read).
enum class BodyLimit {
  kSmall,      // kQueryBodyBytes / kSignInBodyBytes: queries and sign-in
  kMaxBody,    // limits.maxBodyBytes
  kMaxImport,  // limits.maxImportBytes
};

// The rate limit a call counts against, and as whom.
enum class RateBucket {
  kQueryBytes,  // limits.queryBytesPerMinute, per address: kQueryBaseCost at
                // admission, then the answer's bytes (granted before it runs)
  kSignIns,     // limits.signInPerMinute, per address (and per account, in the handler)
  kProcedures,  // limits.procedureRatePerMinute, per proven client (its DID or
                // token), else per address
};

// A gate of its own on how many of a method's streamed answers run at once.
enum class StreamGate {
  kNone,
  kExports,  // limits.maxConcurrentExports, and one per client
};

// Where a call runs (the HTTP front's lanes).
enum class MethodLane {
  kShared,    // the request workers (or the streams' lane for held answers)
  kSearches,  // the searches' lane: limits.maxConcurrentSearches workers of
              // their own at a lower CPU priority, four waiting a worker,
              // 429 beyond
};

struct ApiMethod {
  std::string_view nsid;
  MethodKind kind;
  MethodHandler handler;
  Auth auth;
  BodyLimit body;
  RateBucket bucket;
  Needs needs = Needs::kIndex;
  AnswerBound answer = AnswerBound::kPage;
  StreamGate gate = StreamGate::kNone;
  MethodLane lane = MethodLane::kShared;
};

// Every method, in the table's order (for tests that walk it).
std::span<const ApiMethod> api_methods();

// The 501 answer when `context` lacks what `method` needs, else nullopt.
std::optional<HttpResponse> unavailable(const AppContext& context, const ApiMethod& method);

const ApiMethod* find_method(std::string_view nsid);
// The 405 answer when `http_method` does not suit `method`, else nullopt.
std::optional<HttpResponse> wrong_http_method(const ApiMethod& method,
                                              std::string_view http_method);
// Checks the HTTP method and runs the handler.
HttpResponse call_method(Api& api, const ApiMethod& method, const XrpcCall& call);

}  // namespace bulleted::appview
