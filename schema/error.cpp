#include "schema/error.hpp"

namespace bulleted {

std::string_view error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidRequest:
      return "InvalidRequest";
    case ErrorCode::kNotFound:
      return "NotFound";
    case ErrorCode::kInvalidNeighbour:
      return "InvalidNeighbour";
    case ErrorCode::kStaleNeighbours:
      return "StaleNeighbours";
    case ErrorCode::kRepoChanged:
      return "RepoChanged";
    case ErrorCode::kWouldCycle:
      return "WouldCycle";
    case ErrorCode::kExhausted:
      return "Exhausted";
    case ErrorCode::kAuthRequired:
      return "AuthRequired";
    case ErrorCode::kForbidden:
      return "Forbidden";
    case ErrorCode::kPayloadTooLarge:
      return "PayloadTooLarge";
    case ErrorCode::kRateLimited:
      return "RateLimited";
    case ErrorCode::kUpstreamFailure:
      return "UpstreamFailure";
    case ErrorCode::kUnavailable:
      return "Unavailable";
    case ErrorCode::kSchemaTooNew:
      return "SchemaTooNew";
    case ErrorCode::kCorrupt:
      return "Corrupt";
    case ErrorCode::kInternal:
      return "InternalServerError";
  }
  return "InternalServerError";
}

}  // namespace bulleted
