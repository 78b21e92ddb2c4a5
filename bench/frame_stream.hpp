// The benchmark's frame stream file: frames one after another, each behind a
// 4-byte little-endian length.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace bulleted::bench {

inline std::vector<std::string> read_frame_stream(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> frames;
  unsigned char length[4];
  while (in.read(reinterpret_cast<char*>(length), 4)) {
    const std::uint32_t n = length[0] | (length[1] << 8) | (length[2] << 16) |
                            (static_cast<std::uint32_t>(length[3]) << 24);
    std::string frame(n, '\0');
    if (!in.read(frame.data(), n)) break;
    frames.push_back(std::move(frame));
  }
  return frames;
}

inline void append_frame(std::ofstream& out, const std::string& frame) {
  const auto n = static_cast<std::uint32_t>(frame.size());
  const char length[4] = {static_cast<char>(n & 0xFF), static_cast<char>((n >> 8) & 0xFF),
                          static_cast<char>((n >> 16) & 0xFF), static_cast<char>(n >> 24)};
  out.write(length, 4);
  out.write(frame.data(), n);
}

}  // namespace bulleted::bench
