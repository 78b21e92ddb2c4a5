// The project's one error type, and its one table: every error that crosses
// a module boundary is an Error (a stable code plus a message for people),
// and every refusal the server makes, the HTTP front's own included, takes
// its HTTP status and XRPC error name from error_status(). Nothing else
// decides statuses. (ordering/ keeps its own KeyError: it is std-only.)
#pragma once

#include <expected>
#include <span>
#include <string>
#include <string_view>

namespace bulleted {

enum class ErrorCode {
  kInvalidRequest,    // malformed input from a caller
  kNotFound,          // no such node, repo or path (or it is hidden)
  kInvalidNeighbour,  // a named neighbour is not a child of the target parent
  kStaleNeighbours,   // neighbours moved twice under the lock
  kRepoChanged,       // the repo moved on since the index saw it (a PDS swap failed)
  kWouldCycle,        // a move under the node itself or a descendant
  kExhausted,         // no order key fits in the gap
  kFutureCursor,      // a changes cursor beyond the index's change sequence
  kAuthRequired,      // no or bad credentials
  kForbidden,         // credentials for another repo
  kMethodNotAllowed,  // the wrong HTTP method for the route
  kLengthRequired,    // a body without a Content-Length
  kPayloadTooLarge,
  kRateLimited,
  kMethodNotImplemented,  // no such XRPC method, or not in this mode
  kUpstreamFailure,       // a PDS or resolver failed
  kUnavailable,           // database busy, read-only or full; not ready; shutting down
  kTooManyStreams,        // limits.maxStreams change streams are open
  kSchemaTooNew,          // the database was written by a newer binary
  kCorrupt,               // undecodable or inconsistent data
  kInternal,
};

// A code's row of the table: its identifier (as spelled here), the HTTP
// status and the XRPC error name it is answered with.
struct ErrorStatus {
  ErrorCode code;
  std::string_view id;
  int status;
  std::string_view name;
};
const ErrorStatus& error_status(ErrorCode code);
// Every row, in the enum's order (tests/schema/error_codes.txt holds them).
std::span<const ErrorStatus> error_table();

struct Error {
  ErrorCode code;
  std::string message;
  // kRateLimited, kUnavailable: seconds until the caller may try again
  // (Retry-After).
  int retry_after_seconds = 0;
  // kAuthRequired: a token was presented and refused (the challenge says
  // invalid_token), rather than none given.
  bool invalid_token = false;
};

template <class T>
using Result = std::expected<T, Error>;

inline std::unexpected<Error> fail(ErrorCode code, std::string message) {
  return std::unexpected(Error{code, std::move(message)});
}

}  // namespace bulleted
