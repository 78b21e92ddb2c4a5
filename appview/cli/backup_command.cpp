#include "appview/cli/backup_command.hpp"

#include <filesystem>
#include <ostream>

#include "appview/cli/args.hpp"
#include "appview/cli/common.hpp"
#include "appview/cli/progress.hpp"
#include "appview/config.hpp"

namespace bulleted::cli {

int run_backup_command(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  constexpr const char* kUsage =
      "usage: bulleted-appview backup DEST [--compact] [--db PATH] [--config FILE]\n";
  ArgSpec spec = config_arg_spec();
  spec.switches.insert("compact");
  auto args = parse_args(argv, spec);
  if (!args || args->positionals.size() != 1) {
    err << (args ? "" : "error: " + args.error() + "\n") << kUsage;
    return 2;
  }
  auto config = load_config_or_report(*args, err);
  if (!config) return 2;
  auto store = open_store_or_report(*config, err);
  if (!store) return 1;
  const std::string destination = args->positionals[0];
  if (args->has("compact")) {
    // The live pages only: the copy is what the file would be after VACUUM.
    err << "compacting " << config->db_path << " into " << destination << "...\n";
    if (auto copied = store->compact_into(destination); !copied) {
      err << "error: " << copied.error().message << "\n";
      return 1;
    }
    out << "backed up " << config->db_path << " to " << destination << " (compacted, "
        << std::filesystem::file_size(destination) << " bytes)\n";
    return 0;
  }
  std::optional<Progress> progress;
  int total = 0;
  auto copied = store->backup(destination, [&](int done, int pages) {
    if (!progress) progress.emplace(err, stderr_is_terminal(), pages, "pages");
    total = pages;
    progress->update(done);
  });
  if (!copied) {
    err << "error: " << copied.error().message << "\n";
    return 1;
  }
  if (progress) progress->finish(total);
  out << "backed up " << config->db_path << " to " << destination << " (" << total << " pages)\n";
  return 0;
}

}  // namespace bulleted::cli
