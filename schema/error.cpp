#include "schema/error.hpp"

#include <array>

namespace bulleted {
namespace {

// The one table. Conflict names are those of the lexicons; a repo that
// changed under a write is a 409 StaleNeighbours for the client (refetch and
// re-apply), like neighbours that moved.
constexpr std::array<ErrorStatus, 21> kTable = {{
    {ErrorCode::kInvalidRequest, "kInvalidRequest", 400, "InvalidRequest"},
    {ErrorCode::kNotFound, "kNotFound", 404, "NotFound"},
    {ErrorCode::kInvalidNeighbour, "kInvalidNeighbour", 400, "InvalidNeighbour"},
    {ErrorCode::kStaleNeighbours, "kStaleNeighbours", 409, "StaleNeighbours"},
    {ErrorCode::kRepoChanged, "kRepoChanged", 409, "StaleNeighbours"},
    {ErrorCode::kWouldCycle, "kWouldCycle", 400, "WouldCycle"},
    {ErrorCode::kExhausted, "kExhausted", 409, "Exhausted"},
    {ErrorCode::kFutureCursor, "kFutureCursor", 400, "FutureCursor"},
    {ErrorCode::kAuthRequired, "kAuthRequired", 401, "AuthRequired"},
    {ErrorCode::kForbidden, "kForbidden", 403, "Forbidden"},
    {ErrorCode::kMethodNotAllowed, "kMethodNotAllowed", 405, "InvalidRequest"},
    {ErrorCode::kLengthRequired, "kLengthRequired", 411, "InvalidRequest"},
    {ErrorCode::kPayloadTooLarge, "kPayloadTooLarge", 413, "PayloadTooLarge"},
    {ErrorCode::kRateLimited, "kRateLimited", 429, "RateLimitExceeded"},
    {ErrorCode::kMethodNotImplemented, "kMethodNotImplemented", 501, "MethodNotImplemented"},
    {ErrorCode::kUpstreamFailure, "kUpstreamFailure", 502, "UpstreamFailure"},
    {ErrorCode::kUnavailable, "kUnavailable", 503, "Unavailable"},
    {ErrorCode::kTooManyStreams, "kTooManyStreams", 503, "TooManyStreams"},
    {ErrorCode::kSchemaTooNew, "kSchemaTooNew", 500, "InternalServerError"},
    {ErrorCode::kCorrupt, "kCorrupt", 500, "InternalServerError"},
    {ErrorCode::kInternal, "kInternal", 500, "InternalServerError"},
}};

constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < kTable.size(); ++i) {
    if (static_cast<std::size_t>(kTable[i].code) != i) return false;
  }
  return static_cast<std::size_t>(ErrorCode::kInternal) + 1 == kTable.size();
}
static_assert(in_enum_order(), "one row per ErrorCode, in the enum's order");

}  // namespace

const ErrorStatus& error_status(ErrorCode code) { return kTable[static_cast<std::size_t>(code)]; }

std::span<const ErrorStatus> error_table() { return kTable; }

}  // namespace bulleted
