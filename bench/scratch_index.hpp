// A benchmark's scratch SQLite index: removed with its WAL and shared-memory
// files before a run starts and after it ends.
#pragma once

#include <filesystem>
#include <string>

namespace bulleted::bench {

inline void remove_index(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

}  // namespace bulleted::bench
