// Forward-only schema migrations, applied when a Store opens its file. The
// version lives in SQLite's user_version; each step runs in its own
// transaction.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "schema/error.hpp"

namespace bulleted::schema {

class Database;

// The newest version this binary knows.
int latest_schema_version();

// Where a migration step is: reported when it starts, every few seconds
// while it runs, and when it has finished; never for a new file.
struct MigrationProgress {
  int version = 0;                     // the version the step reaches
  std::string_view what;               // what it adds
  std::int64_t done = 0;               // of what the step counts, if it counts
  std::int64_t total = 0;              // 0: the step does not count
  std::string_view counted = "nodes";  // what done and total count
  bool finished = false;
  double seconds = 0;  // since the step started
};

// Brings the file up to latest_schema_version(); a newer file is
// kSchemaTooNew and is left untouched.
Result<void> migrate(Database& db,
                     const std::function<void(const MigrationProgress&)>& progress = {});

}  // namespace bulleted::schema
