#include "appview/cli/common.hpp"

#include <cstdio>
#include <filesystem>
#include <ostream>

namespace bulleted::cli {

ArgSpec config_arg_spec() {
  ArgSpec spec;
  spec.valued.insert("config");
  for (const auto& flag : appview::config_flags()) spec.valued.insert(flag);
  return spec;
}

Result<appview::Config> load_config(const Args& args) {
  return appview::load_config(args.option("config"),
                              [&args](const std::string& name) { return args.option(name); });
}

std::optional<appview::Config> load_config_or_report(const Args& args, std::ostream& err) {
  auto config = load_config(args);
  if (!config) {
    err << "error: " << config.error().message << "\n";
    return std::nullopt;
  }
  return std::move(*config);
}

std::unique_ptr<schema::Store> open_store_or_report(const appview::Config& config,
                                                    std::ostream& err) {
  if (auto parent = std::filesystem::path(config.db_path).parent_path(); !parent.empty()) {
    std::error_code ignored;
    std::filesystem::create_directories(parent, ignored);
  }
  // Migrating an existing index may take a while: say what is happening.
  auto on_migration = [&err](const schema::MigrationProgress& step) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.1f s", step.seconds);
    err << "migrating the index to schema " << step.version << " (" << step.what << "): ";
    if (step.finished) {
      err << "done in " << seconds << "\n";
    } else if (step.total > 0) {
      err << step.done << " of " << step.total << " " << step.counted << ", " << seconds << "\n";
    } else {
      err << (step.seconds == 0 ? std::string("started") : std::string("working, ") + seconds)
          << "\n";
    }
    err.flush();
  };
  auto store = schema::Store::open(
      config.db_path, {.busy_timeout_ms = config.busy_timeout_ms, .on_migration = on_migration});
  if (!store) {
    err << "error: cannot open the database " << config.db_path << ": " << store.error().message
        << "\n";
    return nullptr;
  }
  return std::move(*store);
}

}  // namespace bulleted::cli
