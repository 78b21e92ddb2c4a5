// bulleted-appview: parses the subcommand and hands over to its module.
#include <iostream>
#include <string>
#include <vector>

#include "appview/cli/backfill_command.hpp"
#include "appview/cli/backup_command.hpp"
#include "appview/cli/check_command.hpp"
#include "appview/cli/import_command.hpp"
#include "appview/cli/keys_command.hpp"
#include "appview/cli/serve_command.hpp"
#include "appview/cli/token_command.hpp"

namespace {

constexpr const char* kUsage =
    "usage: bulleted-appview <command> [options]\n"
    "commands:\n"
    "  serve [--config FILE] [--port N] [--bind ADDR] [--db PATH] [--mode local|pds]\n"
    "        [--firehose URL] [--plc URL] [--handle-resolver URL]\n"
    "                            run the app view\n"
    "  token create --did DID    print a bearer token that may write DID's repo (local mode)\n"
    "  backfill DID [--pds URL]   index a whole repo from its PDS (getRepo)\n"
    "  import FILE --repo DID [--parent RKEY] [--format opml|text] [--server URL --token T]\n"
    "                            import a WorkFlowy export (OPML or plain text)\n"
    "  import --resume JOB       finish a local import that was interrupted\n"
    "  check                     print the index's integrity report (JSON)\n"
    "  backup DEST               copy the database to DEST while it is in use\n"
    "  keys between A B [--n N] [--seed S]\n"
    "                            print order keys strictly between A and B ('-' = open)\n"
    "  keys validate KEY...      print 'ok' or 'invalid: <reason>' for each key\n";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> words(argv + 1, argv + argc);
  if (words.empty() || words[0] == "--help" || words[0] == "-h" || words[0] == "help") {
    (words.empty() ? std::cerr : std::cout) << kUsage;
    return words.empty() ? 2 : 0;
  }
  const std::string command = words[0];
  const std::vector<std::string> rest(words.begin() + 1, words.end());
  if (command == "keys") return bulleted::cli::run_keys_command(rest, std::cout, std::cerr);
  if (command == "serve") return bulleted::cli::run_serve_command(rest, std::cout, std::cerr);
  if (command == "backfill") return bulleted::cli::run_backfill_command(rest, std::cout, std::cerr);
  if (command == "token") return bulleted::cli::run_token_command(rest, std::cout, std::cerr);
  if (command == "import") return bulleted::cli::run_import_command(rest, std::cout, std::cerr);
  if (command == "backup") return bulleted::cli::run_backup_command(rest, std::cout, std::cerr);
  if (command == "check") return bulleted::cli::run_check_command(rest, std::cout, std::cerr);
  std::cerr << "error: unknown command '" << command << "'\n" << kUsage;
  return 2;
}
