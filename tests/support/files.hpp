// Reading fixture files whole.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace bulleted::testing {

inline std::string fixture_path(const std::string& relative) {
  return std::string(BULLETED_FIXTURES_DIR) + "/" + relative;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline nlohmann::json read_json(const std::string& path) {
  return nlohmann::json::parse(read_file(path));
}

// The .bin frames of a capture folder, in file-name (= arrival) order.
inline std::vector<std::string> frame_files(const std::string& capture) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(fixture_path(capture + "/frames"))) {
    if (entry.path().extension() == ".bin") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) throw std::runtime_error("no frames in " + capture);
  return files;
}

}  // namespace bulleted::testing
