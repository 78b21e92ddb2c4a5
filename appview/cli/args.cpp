#include "appview/cli/args.hpp"

namespace bulleted::cli {

std::optional<std::string> Args::option(const std::string& name) const {
  auto it = options.find(name);
  if (it == options.end()) return std::nullopt;
  return it->second;
}

std::expected<Args, std::string> parse_args(const std::vector<std::string>& argv,
                                            const ArgSpec& spec) {
  Args args;
  bool options_done = false;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& word = argv[i];
    if (options_done || word.size() < 3 || word.rfind("--", 0) != 0) {
      if (!options_done && word == "--") {
        options_done = true;
        continue;
      }
      args.positionals.push_back(word);
      continue;
    }
    std::string name = word.substr(2);
    std::optional<std::string> value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    if (spec.switches.contains(name)) {
      if (value) return std::unexpected("--" + name + " takes no value");
      args.switches.insert(name);
      continue;
    }
    if (!spec.valued.contains(name)) return std::unexpected("unknown option --" + name);
    if (!value) {
      if (i + 1 >= argv.size()) return std::unexpected("--" + name + " needs a value");
      value = argv[++i];
    }
    args.options[name] = *value;
  }
  return args;
}

}  // namespace bulleted::cli
