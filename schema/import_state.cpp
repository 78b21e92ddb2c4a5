#include "schema/import_state.hpp"

namespace bulleted::schema {

std::string_view to_string(ImportState state) {
  switch (state) {
    case ImportState::kRunning:
      return "running";
    case ImportState::kWaiting:
      return "waiting";
    case ImportState::kDone:
      return "done";
    case ImportState::kFailed:
      return "failed";
  }
  return "failed";
}

std::optional<ImportState> parse_import_state(std::string_view name) {
  for (auto state :
       {ImportState::kRunning, ImportState::kWaiting, ImportState::kDone, ImportState::kFailed}) {
    if (to_string(state) == name) return state;
  }
  return std::nullopt;
}

bool allowed_transition(ImportState from, ImportState to) {
  switch (from) {
    case ImportState::kRunning:
      return true;  // on, done, waiting or failed
    case ImportState::kWaiting:
      return to == ImportState::kRunning || to == ImportState::kFailed;
    case ImportState::kFailed:
      return to == ImportState::kRunning;  // an operator's resume
    case ImportState::kDone:
      return false;
  }
  return false;
}

}  // namespace bulleted::schema
