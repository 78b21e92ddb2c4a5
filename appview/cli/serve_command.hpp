// `bulleted-appview serve`: runs the app view until SIGTERM or SIGINT.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace bulleted::cli {

// Returns the process exit status (0 after a graceful shutdown).
int run_serve_command(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);

}  // namespace bulleted::cli
