// Errors that cross module boundaries: a stable code plus a message for
// people. The HTTP layer maps each code to an XRPC error name and status in
// one table (appview/); nothing else decides statuses.
#pragma once

#include <expected>
#include <string>
#include <string_view>

namespace bulleted {

enum class ErrorCode {
  kInvalidRequest,    // malformed input from a caller
  kNotFound,          // no such node or repo (or it is hidden)
  kInvalidNeighbour,  // a named neighbour is not a child of the target parent
  kStaleNeighbours,   // neighbours moved twice under the lock
  kRepoChanged,       // the repo moved on since the index saw it (a PDS swap failed)
  kWouldCycle,        // a move under the node itself or a descendant
  kExhausted,         // no order key fits in the gap
  kAuthRequired,      // no or bad credentials
  kForbidden,         // credentials for another repo
  kPayloadTooLarge,
  kRateLimited,
  kUpstreamFailure,  // a PDS or resolver failed
  kUnavailable,      // database busy, read-only or full; not ready
  kSchemaTooNew,     // the database was written by a newer binary
  kCorrupt,          // undecodable or inconsistent data
  kInternal,
};

// The stable name of a code ("InvalidRequest", "NotFound", ...).
std::string_view error_code_name(ErrorCode code);

struct Error {
  ErrorCode code;
  std::string message;
  // kRateLimited: seconds until the caller may try again (Retry-After).
  int retry_after_seconds = 0;
};

template <class T>
using Result = std::expected<T, Error>;

inline std::unexpected<Error> fail(ErrorCode code, std::string message) {
  return std::unexpected(Error{code, std::move(message)});
}

}  // namespace bulleted
