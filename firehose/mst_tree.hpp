// A Merkle Search Tree that can be changed: keys put and removed, the root
// CID recomputed. Nodes are read from a block source only when an operation
// reaches them, so a partial tree (the blocks a firehose commit carries) is
// enough for the keys the commit touched and their neighbours; reaching a
// node the source lacks is kNotFound.
//
// The shape is the protocol's: a key's layer is mst_key_height(key); a node
// holds the keys of its layer in its range, with subtrees one layer down
// between them; the root is the highest layer present. So the root CID
// depends only on the set of (key, value) pairs, which is what makes
// inverting a commit's ops on its partial tree a proof of `prevData`.
//
// Not thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "firehose/cid.hpp"
#include "schema/error.hpp"

namespace bulleted::firehose {

// The block named by a CID, or nullopt when the source does not have it.
using MstBlockSource = std::function<std::optional<std::string_view>(const Cid&)>;
// Receives each node block the tree writes while computing its root.
using MstBlockSink = std::function<void(const Cid&, std::string&&)>;

class MstTree {
 public:
  // The empty tree.
  MstTree();
  // The tree whose root node is `root`, read through `source`.
  static Result<MstTree> load(const Cid& root, MstBlockSource source);

  MstTree(MstTree&&) noexcept;
  MstTree& operator=(MstTree&&) noexcept;
  ~MstTree();

  // The value under `key`, or nullopt when the tree has none.
  Result<std::optional<Cid>> get(std::string_view key);
  // Adds `key` or replaces its value.
  Result<void> put(std::string_view key, const Cid& value);
  // Removes `key`; kNotFound when it is absent.
  Result<void> remove(std::string_view key);

  // The root node's CID, writing every node changed since it was read (all
  // of them, for a tree built from empty) to `sink` when one is given.
  Result<Cid> root(const MstBlockSink& sink = nullptr);

  struct Node;

 private:
  std::shared_ptr<Node> root_;
  MstBlockSource source_;
};

}  // namespace bulleted::firehose
