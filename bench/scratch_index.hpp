// A benchmark's scratch SQLite index: removed with its WAL and shared-memory
// files before a run starts and after it ends.
#pragma once

#include <filesystem>
#include <string>

#include "schema/sqlite.hpp"

namespace bulleted::bench {

inline void remove_index(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

// The triggers that keep child counts (schema 6) and position blocks
// (schema 7), dropped: what an index would cost to write without them.
inline constexpr const char* kUpkeepTriggers =
    "DROP TRIGGER nodes_count_insert; DROP TRIGGER nodes_count_delete;"
    " DROP TRIGGER nodes_count_move; DROP TRIGGER nodes_blocks_insert;"
    " DROP TRIGGER nodes_blocks_delete; DROP TRIGGER nodes_blocks_move;"
    " DROP TRIGGER group_counts_empty;";

inline bool drop_upkeep_triggers(schema::Database& db) {
  return db.exec(kUpkeepTriggers).has_value();
}

}  // namespace bulleted::bench
