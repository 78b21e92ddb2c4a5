#include "appview/cli/common.hpp"

#include <filesystem>
#include <ostream>

namespace bulleted::cli {

std::optional<appview::Config> load_config_or_report(const Args& args, std::ostream& err) {
  auto config = appview::load_config(args);
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
  auto store = schema::Store::open(config.db_path, {.busy_timeout_ms = config.busy_timeout_ms});
  if (!store) {
    err << "error: cannot open the database " << config.db_path << ": " << store.error().message
        << "\n";
    return nullptr;
  }
  return std::move(*store);
}

}  // namespace bulleted::cli
