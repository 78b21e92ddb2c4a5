#include "appview/cli/serve_command.hpp"

#include <ostream>

#include "appview/cli/args.hpp"

namespace bulleted::cli {

int run_serve_command(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  auto args = parse_args(argv, ArgSpec{.valued = {"config", "port", "bind", "db", "mode",
                                                  "firehose", "plc", "handle-resolver"},
                                       .switches = {}});
  if (!args) {
    err << "error: " << args.error() << "\n";
    return 2;
  }
  out << "bulleted-appview: the HTTP server is not built yet; this build offers the order-key "
         "commands (`bulleted-appview keys --help`). Nothing is listening.\n";
  return 0;
}

}  // namespace bulleted::cli
