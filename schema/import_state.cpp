#include "schema/import_state.hpp"

#include "schema/enum_names.hpp"

namespace bulleted::schema {

namespace {

constexpr EnumNames<ImportState, 4> kImportStateNames{{{
    {ImportState::kRunning, "running"},
    {ImportState::kWaiting, "waiting"},
    {ImportState::kDone, "done"},
    {ImportState::kFailed, "failed"},
}}};
static_assert(kImportStateNames.covers(ImportState::kFailed));

}  // namespace

std::string_view to_string(ImportState state) { return kImportStateNames.name(state); }

std::optional<ImportState> parse_import_state(std::string_view name) {
  return kImportStateNames.parse(name);
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
