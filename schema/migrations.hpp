// Forward-only schema migrations, applied when a Store opens its file. The
// version lives in SQLite's user_version; each step runs in its own
// transaction.
#pragma once

#include "schema/error.hpp"

namespace bulleted::schema {

class Database;

// The newest version this binary knows.
int latest_schema_version();

// Brings the file up to latest_schema_version(); a newer file is
// kSchemaTooNew and is left untouched.
Result<void> migrate(Database& db);

}  // namespace bulleted::schema
