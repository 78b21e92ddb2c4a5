// `bulleted-appview keys between|validate`: the order-key library on the
// command line, for operators and for scripts that check keys.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace bulleted::cli {

// Runs `keys ...` with the words after "keys". Returns the exit status:
// 0 success, 1 a key error (invalid input, out of order, exhausted),
// 2 bad arguments (usage printed to `err`).
int run_keys_command(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);

}  // namespace bulleted::cli
