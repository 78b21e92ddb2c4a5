// The Merkle Search Tree of a repo: walking it yields every (key, record CID)
// in ascending key order. Keys are "<collection>/<rkey>".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "firehose/car.hpp"
#include "firehose/cid.hpp"
#include "schema/error.hpp"

namespace bulleted::firehose {

struct MstEntry {
  std::string key;
  Cid value;
};

struct MstLimits {
  std::size_t max_nodes = 1'000'000;
  std::size_t max_depth = 128;
};

// In-order walk from `root`. Refuses missing nodes, cycles, keys that do not
// strictly ascend, and prefix lengths past the previous key.
Result<std::vector<MstEntry>> walk_mst(const CarFile& car, const Cid& root,
                                       const MstLimits& limits = {});

// The layer of a key: leading zero bits of sha256(key), divided by two.
int mst_key_height(std::string_view key);

// Bytes two keys share at the start.
std::size_t common_prefix_length(std::string_view a, std::string_view b);

}  // namespace bulleted::firehose
