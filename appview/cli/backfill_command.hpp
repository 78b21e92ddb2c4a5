// `bulleted-appview backfill DID [--pds URL]`: fetches a repo with
// com.atproto.sync.getRepo and brings the index to its state (creates,
// updates and deletes), the same resync the firehose consumer runs.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace bulleted::cli {

int run_backfill_command(const std::vector<std::string>& argv, std::ostream& out,
                         std::ostream& err);

}  // namespace bulleted::cli
