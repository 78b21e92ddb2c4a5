#include "appview/cli/token_command.hpp"

#include <filesystem>
#include <ostream>

#include "appview/cli/args.hpp"
#include "appview/cli/common.hpp"
#include "appview/config.hpp"
#include "appview/xrpc/api.hpp"
#include "schema/store.hpp"
#include "schema/syntax.hpp"

namespace bulleted::cli {

int run_token_command(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  constexpr const char* kUsage =
      "usage: bulleted-appview token create --did DID [--db PATH] [--config FILE]\n";
  ArgSpec spec = config_arg_spec();
  spec.valued.insert("did");
  auto args = parse_args(argv, spec);
  if (!args || args->positionals.size() != 1 || args->positionals[0] != "create") {
    err << (args ? "" : "error: " + args.error() + "\n") << kUsage;
    return 2;
  }
  auto did = args->option("did");
  if (!did || !schema::Did::parse(*did)) {
    err << "error: --did must be a DID\n" << kUsage;
    return 2;
  }
  auto config = load_config_or_report(*args, err);
  if (!config) return 2;
  auto store = open_store_or_report(*config, err);
  if (!store) return 1;
  const std::string token = appview::new_token();
  if (auto r = store->tokens().add(appview::token_digest(token), *did); !r) {
    err << "error: " << r.error().message << "\n";
    return 1;
  }
  out << token << "\n";
  return 0;
}

}  // namespace bulleted::cli
