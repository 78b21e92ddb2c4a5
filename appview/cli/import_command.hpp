// `bulleted-appview import FILE --repo DID [--parent RKEY] [--format opml|text]
//  [--server URL --token T] [--resume JOB]`: an import through a running app
// view's API, or straight into the local database.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace bulleted::cli {

int run_import_command(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);

}  // namespace bulleted::cli
