// `bulleted-appview check`: the index's integrity report as JSON (SQLite's
// quick_check, node and tombstone counts, malformed keys, unattached and
// dangling nodes, repos by status and sync state). Exit 1 when SQLite finds
// corruption.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace bulleted::cli {

int run_check_command(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);

}  // namespace bulleted::cli
