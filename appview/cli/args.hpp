// Command-line arguments of the bulleted-appview subcommands.
//
// Splits argv into positionals and `--name value` options (also
// `--name=value`). Which options take a value is declared by the caller, so a
// missing value or an unknown option is an error the subcommand turns into
// its usage text and exit status 2.
#pragma once

#include <expected>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace bulleted::cli {

struct Args {
  std::vector<std::string> positionals;
  std::map<std::string, std::string> options;  // name without "--" -> value
  std::set<std::string> switches;              // options given without a value

  std::optional<std::string> option(const std::string& name) const;
  bool has(const std::string& name) const {
    return switches.contains(name) || options.contains(name);
  }
};

struct ArgSpec {
  std::set<std::string> valued;    // options that take a value
  std::set<std::string> switches;  // options that do not
};

// Parses `argv` (without the program and subcommand names). A lone "-" is a
// positional; "--" ends options.
std::expected<Args, std::string> parse_args(const std::vector<std::string>& argv,
                                            const ArgSpec& spec);

}  // namespace bulleted::cli
