// The Merkle Search Tree of a repo: walking it yields every (key, record CID)
// in ascending key order. Keys are "<collection>/<rkey>".
#pragma once

#include <optional>
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

// One node as stored: a left subtree, then entries in key order, each with
// the subtree to its right. Keys here are whole (the block stores each one
// as a suffix after the prefix it shares with the previous key).
struct MstNodeData {
  struct Entry {
    std::string key;
    Cid value;
    std::optional<Cid> right;
  };
  std::optional<Cid> left;
  std::vector<Entry> entries;
};

// Reads a node block: {l, e: [{p, k, v, t}]}, keys strictly ascending, each
// prefix no longer than the previous key. kCorrupt with "MST: ..." otherwise.
Result<MstNodeData> decode_mst_node(std::string_view block);
// The node's canonical block (prefix-compressed keys).
std::string encode_mst_node(const MstNodeData& node);

struct MstLimits {
  std::size_t max_nodes = 1'000'000;
  std::size_t max_depth = 128;
  std::size_t max_entries = 10'000'000;  // keys (records) in the whole tree
};

// In-order walk from `root`. Refuses missing nodes, cycles, keys that do not
// strictly ascend, and prefix lengths past the previous key (kCorrupt); more
// entries than `max_entries` is kPayloadTooLarge.
Result<std::vector<MstEntry>> walk_mst(const CarFile& car, const Cid& root,
                                       const MstLimits& limits = {});

// The layer of a key: leading zero bits of sha256(key), divided by two.
int mst_key_height(std::string_view key);

// Bytes two keys share at the start.
std::size_t common_prefix_length(std::string_view a, std::string_view b);

}  // namespace bulleted::firehose
