// What the subcommands that touch the database share: reading the
// configuration (errors printed, exit status 2) and opening the store (its
// folder created first).
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>

#include "appview/cli/args.hpp"
#include "appview/config.hpp"
#include "schema/store.hpp"

namespace bulleted::cli {

// The flags every subcommand that reads the configuration accepts:
// `--config FILE` and one per configuration key (appview::config_flags()).
ArgSpec config_arg_spec();

// The configuration from `--config FILE`, the environment and the flags.
Result<appview::Config> load_config(const Args& args);

// The configuration, or nullopt after printing the problem to `err`.
std::optional<appview::Config> load_config_or_report(const Args& args, std::ostream& err);

// Opens (creating) the configured database; nullopt after printing the
// problem to `err`.
std::unique_ptr<schema::Store> open_store_or_report(const appview::Config& config,
                                                    std::ostream& err);

}  // namespace bulleted::cli
