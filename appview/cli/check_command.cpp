#include "appview/cli/check_command.hpp"

#include <nlohmann/json.hpp>
#include <ostream>

#include "appview/cli/common.hpp"

namespace bulleted::cli {

int run_check_command(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  auto args = parse_args(argv, config_arg_spec());
  if (!args || !args->positionals.empty()) {
    err << (args ? "" : "error: " + args.error() + "\n")
        << "usage: bulleted-appview check [--db PATH] [--config FILE]\n";
    return 2;
  }
  auto config = load_config_or_report(*args, err);
  if (!config) return 2;
  auto store = open_store_or_report(*config, err);
  if (!store) return 1;
  auto report = store->integrity_report();
  if (!report) {
    err << "error: " << report.error().message << "\n";
    return 1;
  }
  out << nlohmann::json{{"database", config->db_path},
                        {"schemaVersion", report->schema_version},
                        {"sqliteCheck", report->sqlite_check},
                        {"nodes", report->nodes},
                        {"tombstones", report->tombstones},
                        {"malformedSortKeys", report->malformed_keys},
                        {"unattachedNodes", report->unattached},
                        {"danglingNodes", report->dangling},
                        {"nodesInCycles", report->in_cycles},
                        {"wrongChildCounts", report->wrong_counts},
                        {"wrongPositionBlocks", report->wrong_blocks},
                        {"wrongRecordFields", report->wrong_record_fields},
                        {"notes", report->notes},
                        {"notesWaitingForTheirNode", report->notes_waiting},
                        {"wrongNotes", report->wrong_notes},
                        {"nodeTotal", report->kept_node_total == report->nodes ? "ok" : "differs"},
                        {"searchIndex", report->search_index_ok ? "ok" : "differs"},
                        {"reposByStatus", report->repos_by_status},
                        {"reposBySyncState", report->repos_by_sync_state}}
             .dump(2)
      << "\n";
  // A parent cycle takes its nodes out of every outline: reported as
  // corruption, like a damaged database.
  return report->ok() && report->in_cycles == 0 ? 0 : 1;
}

}  // namespace bulleted::cli
