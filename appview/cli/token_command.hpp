// `bulleted-appview token create --did DID`: a bearer token for local mode,
// bound to one repo. Only its SHA-256 digest is stored; the token is printed
// once.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace bulleted::cli {

int run_token_command(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);

}  // namespace bulleted::cli
