// `bulleted-appview backup DEST`: a consistent copy of the database while the
// server keeps running (SQLite's online backup).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace bulleted::cli {

int run_backup_command(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);

}  // namespace bulleted::cli
