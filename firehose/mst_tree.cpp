#include "firehose/mst_tree.hpp"

#include "firehose/mst.hpp"

namespace bulleted::firehose {

namespace detail {
// A node's contents in order: leaves (a key and its value) and, between
// them, subtrees one layer down. Never two subtrees side by side.
struct MstItem {
  std::shared_ptr<MstTree::Node> tree;  // null for a leaf
  std::string key;
  Cid value;
  bool leaf() const { return tree == nullptr; }
};
}  // namespace detail

struct MstTree::Node {
  int layer = 0;
  bool loaded = false;
  std::optional<Cid> cid;  // set while the node is as read (or as last written)
  std::vector<detail::MstItem> items;
};

namespace {

using detail::MstItem;
using NodePtr = std::shared_ptr<MstTree::Node>;

Error corrupt(std::string message) {
  return Error{ErrorCode::kCorrupt, "MST: " + std::move(message)};
}

NodePtr unloaded(const Cid& cid, int layer) {
  auto node = std::make_shared<MstTree::Node>();
  node->layer = layer;
  node->cid = cid;
  return node;
}

NodePtr fresh(int layer, std::vector<MstItem> items) {
  auto node = std::make_shared<MstTree::Node>();
  node->layer = layer;
  node->loaded = true;
  node->items = std::move(items);
  return node;
}

MstItem tree_item(NodePtr node) { return MstItem{std::move(node), {}, {}}; }

// The index of the first leaf whose key is >= `key` (items.size() if none).
std::size_t lower_leaf(const MstTree::Node& node, std::string_view key) {
  for (std::size_t i = 0; i < node.items.size(); ++i) {
    if (node.items[i].leaf() && node.items[i].key >= key) return i;
  }
  return node.items.size();
}

class Ops {
 public:
  explicit Ops(const MstBlockSource& source) : source_(source) {}

  Result<MstNodeData> read(const Cid& cid) {
    std::optional<std::string_view> block = source_ ? source_(cid) : std::nullopt;
    if (!block) return fail(ErrorCode::kNotFound, "MST: node " + cid.str() + " is not at hand");
    if (!cid.matches(*block)) return std::unexpected(corrupt("node " + cid.str() + " mis-hashed"));
    return decode_mst_node(*block);
  }

  Result<void> load(MstTree::Node& node) {
    if (node.loaded) return {};
    if (node.layer < 0) return std::unexpected(corrupt("a subtree below layer 0"));
    auto data = read(*node.cid);
    if (!data) return std::unexpected(data.error());
    const int below = node.layer - 1;
    if (data->left) node.items.push_back(tree_item(unloaded(*data->left, below)));
    for (auto& entry : data->entries) {
      if (mst_key_height(entry.key) != node.layer) {
        return std::unexpected(corrupt("key " + entry.key + " is on the wrong layer"));
      }
      node.items.push_back(MstItem{nullptr, std::move(entry.key), entry.value});
      if (entry.right) node.items.push_back(tree_item(unloaded(*entry.right, below)));
    }
    // Only the empty tree's root holds nothing, and MstTree::load reads that one itself.
    if (node.items.empty()) return std::unexpected(corrupt("an empty subtree"));
    node.loaded = true;
    return {};
  }

  Result<std::optional<Cid>> get(const NodePtr& node, std::string_view key) {
    if (auto r = load(*node); !r) return std::unexpected(r.error());
    const std::size_t i = lower_leaf(*node, key);
    if (i < node->items.size() && node->items[i].key == key) return node->items[i].value;
    if (i > 0 && !node->items[i - 1].leaf()) return get(node->items[i - 1].tree, key);
    return std::optional<Cid>();
  }

  // Splits a node's keys around `key` (which it does not hold): the part
  // below and the part above, either null when empty.
  Result<std::pair<NodePtr, NodePtr>> split(const NodePtr& node, std::string_view key) {
    if (auto r = load(*node); !r) return std::unexpected(r.error());
    const std::size_t i = lower_leaf(*node, key);
    std::vector<MstItem> left(node->items.begin(), node->items.begin() + i);
    std::vector<MstItem> right(node->items.begin() + i, node->items.end());
    if (!left.empty() && !left.back().leaf()) {
      auto halves = split(left.back().tree, key);
      if (!halves) return halves;
      left.pop_back();
      if (halves->first) left.push_back(tree_item(halves->first));
      if (halves->second) right.insert(right.begin(), tree_item(halves->second));
    }
    return std::make_pair(left.empty() ? nullptr : fresh(node->layer, std::move(left)),
                          right.empty() ? nullptr : fresh(node->layer, std::move(right)));
  }

  // Puts `key` into the subtree `node`; returns the subtree's new top (a new
  // node above it when the key's layer is higher).
  Result<NodePtr> put(const NodePtr& node, std::string_view key, int key_layer, const Cid& value) {
    if (auto r = load(*node); !r) return std::unexpected(r.error());
    node->cid.reset();
    const std::size_t i = lower_leaf(*node, key);
    if (i < node->items.size() && node->items[i].key == key) {
      node->items[i].value = value;
      return node;
    }
    if (key_layer == node->layer) {
      MstItem leaf{nullptr, std::string(key), value};
      if (i > 0 && !node->items[i - 1].leaf()) {
        auto halves = split(node->items[i - 1].tree, key);
        if (!halves) return std::unexpected(halves.error());
        std::vector<MstItem> middle;
        if (halves->first) middle.push_back(tree_item(halves->first));
        middle.push_back(std::move(leaf));
        if (halves->second) middle.push_back(tree_item(halves->second));
        node->items.erase(node->items.begin() + static_cast<std::ptrdiff_t>(i - 1));
        node->items.insert(node->items.begin() + static_cast<std::ptrdiff_t>(i - 1),
                           std::make_move_iterator(middle.begin()),
                           std::make_move_iterator(middle.end()));
      } else {
        node->items.insert(node->items.begin() + static_cast<std::ptrdiff_t>(i), std::move(leaf));
      }
      return node;
    }
    if (key_layer < node->layer) {
      if (i > 0 && !node->items[i - 1].leaf()) {
        auto below = put(node->items[i - 1].tree, key, key_layer, value);
        if (!below) return below;
        node->items[i - 1].tree = *below;
      } else {
        auto below = put(fresh(node->layer - 1, {}), key, key_layer, value);
        if (!below) return below;
        node->items.insert(node->items.begin() + static_cast<std::ptrdiff_t>(i), tree_item(*below));
      }
      return node;
    }
    // The key belongs above this node: split it around the key and raise
    // each half to the layer just under the key's.
    auto halves = split(node, key);
    if (!halves) return std::unexpected(halves.error());
    auto [left, right] = *halves;
    for (int layer = node->layer + 1; layer < key_layer; ++layer) {
      if (left) left = fresh(layer, {tree_item(left)});
      if (right) right = fresh(layer, {tree_item(right)});
    }
    std::vector<MstItem> items;
    if (left) items.push_back(tree_item(left));
    items.push_back(MstItem{nullptr, std::string(key), value});
    if (right) items.push_back(tree_item(right));
    return fresh(key_layer, std::move(items));
  }

  // Joins two neighbouring subtrees of one layer (all of `a` below `b`).
  Result<NodePtr> merge(const NodePtr& a, const NodePtr& b) {
    if (auto r = load(*a); !r) return std::unexpected(r.error());
    if (auto r = load(*b); !r) return std::unexpected(r.error());
    std::vector<MstItem> items = a->items;
    auto rest = b->items.begin();
    if (!items.empty() && !items.back().leaf() && rest != b->items.end() && !rest->leaf()) {
      auto joined = merge(items.back().tree, rest->tree);
      if (!joined) return joined;
      items.back().tree = *joined;
      ++rest;
    }
    items.insert(items.end(), rest, b->items.end());
    return fresh(a->layer, std::move(items));
  }

  // Removes `key` from the subtree `node`, which may be left empty.
  Result<void> remove(const NodePtr& node, std::string_view key) {
    if (auto r = load(*node); !r) return r;
    node->cid.reset();
    auto& items = node->items;
    const std::size_t i = lower_leaf(*node, key);
    if (i < items.size() && items[i].key == key) {
      const bool tree_before = i > 0 && !items[i - 1].leaf();
      const bool tree_after = i + 1 < items.size() && !items[i + 1].leaf();
      if (tree_before && tree_after) {
        auto joined = merge(items[i - 1].tree, items[i + 1].tree);
        if (!joined) return std::unexpected(joined.error());
        items[i - 1].tree = *joined;
        items.erase(items.begin() + static_cast<std::ptrdiff_t>(i),
                    items.begin() + static_cast<std::ptrdiff_t>(i + 2));
      } else {
        items.erase(items.begin() + static_cast<std::ptrdiff_t>(i));
      }
      return {};
    }
    if (i == 0 || items[i - 1].leaf()) {
      return fail(ErrorCode::kNotFound, "MST: no key " + std::string(key));
    }
    const NodePtr& below = items[i - 1].tree;
    if (auto r = remove(below, key); !r) return r;
    if (below->items.empty()) items.erase(items.begin() + static_cast<std::ptrdiff_t>(i - 1));
    return {};
  }

  Result<Cid> write(MstTree::Node& node, const MstBlockSink& sink) {
    if (node.cid) return *node.cid;
    MstNodeData data;
    for (std::size_t i = 0; i < node.items.size(); ++i) {
      const MstItem& item = node.items[i];
      if (item.leaf()) {
        data.entries.push_back(MstNodeData::Entry{item.key, item.value, std::nullopt});
        continue;
      }
      auto cid = write(*item.tree, sink);
      if (!cid) return cid;
      if (data.entries.empty()) {
        data.left = *cid;
      } else {
        data.entries.back().right = *cid;
      }
    }
    std::string block = encode_mst_node(data);
    const Cid cid = Cid::of_dag_cbor(block);
    if (sink) sink(cid, std::move(block));
    node.cid = cid;
    return cid;
  }

 private:
  const MstBlockSource& source_;
};

}  // namespace

MstTree::MstTree() : root_(fresh(0, {})) {}
MstTree::MstTree(MstTree&&) noexcept = default;
MstTree& MstTree::operator=(MstTree&&) noexcept = default;
MstTree::~MstTree() = default;

Result<MstTree> MstTree::load(const Cid& root, MstBlockSource source) {
  MstTree tree;
  tree.source_ = std::move(source);
  auto data = Ops(tree.source_).read(root);
  if (!data) return std::unexpected(data.error());
  // The root is the node of the highest layer holding a key: a root with no
  // keys is the empty tree, never a stand-in for the subtree below it.
  if (data->entries.empty()) {
    if (data->left) return std::unexpected(corrupt("a root holding no key, only a subtree"));
    tree.root_->cid = root;
    return tree;
  }
  tree.root_ = unloaded(root, mst_key_height(data->entries.front().key));
  return tree;
}

Result<std::optional<Cid>> MstTree::get(std::string_view key) {
  return Ops(source_).get(root_, key);
}

Result<void> MstTree::put(std::string_view key, const Cid& value) {
  auto top = Ops(source_).put(root_, key, mst_key_height(key), value);
  if (!top) return std::unexpected(top.error());
  root_ = *top;
  return {};
}

Result<void> MstTree::remove(std::string_view key) {
  Ops ops(source_);
  if (auto r = ops.remove(root_, key); !r) return r;
  // A root left holding a single subtree gives way to it.
  while (root_->items.size() == 1 && !root_->items.front().leaf()) {
    NodePtr below = root_->items.front().tree;
    if (auto r = ops.load(*below); !r) return r;
    root_ = below;
  }
  if (root_->items.empty()) root_ = fresh(0, {});
  return {};
}

Result<Cid> MstTree::root(const MstBlockSink& sink) { return Ops(source_).write(*root_, sink); }

}  // namespace bulleted::firehose
