#include "firehose/mst.hpp"

#include <bit>
#include <unordered_set>

#include "firehose/dag_cbor.hpp"

namespace bulleted::firehose {
namespace {

Error corrupt(std::string message) {
  return Error{ErrorCode::kCorrupt, "MST: " + std::move(message)};
}

class Walker {
 public:
  Walker(const CarFile& car, const MstLimits& limits) : car_(car), limits_(limits) {}

  Result<void> visit(const Cid& cid, std::size_t depth) {
    if (depth > limits_.max_depth) return std::unexpected(corrupt("tree deeper than allowed"));
    if (++nodes_ > limits_.max_nodes) return std::unexpected(corrupt("more nodes than allowed"));
    if (!seen_.insert(std::string(cid.bytes())).second)
      return std::unexpected(corrupt("a node is reached twice"));
    auto block = car_.block(cid);
    if (!block) return std::unexpected(corrupt(block.error().message));
    auto node = decode_mst_node(*block);
    if (!node) return std::unexpected(node.error());
    if (node->left) {
      if (auto r = visit(*node->left, depth + 1); !r) return r;
    }
    for (auto& entry : node->entries) {
      if (!out_.empty() && !(out_.back().key < entry.key)) {
        return std::unexpected(corrupt("keys out of order at " + entry.key));
      }
      if (out_.size() >= limits_.max_entries) {
        return fail(ErrorCode::kPayloadTooLarge,
                    "the repo holds more than " + std::to_string(limits_.max_entries) + " records");
      }
      out_.push_back(MstEntry{std::move(entry.key), entry.value});
      if (entry.right) {
        if (auto r = visit(*entry.right, depth + 1); !r) return r;
      }
    }
    return {};
  }

  std::vector<MstEntry> take() { return std::move(out_); }

 private:
  const CarFile& car_;
  MstLimits limits_;
  std::size_t nodes_ = 0;
  std::unordered_set<std::string> seen_;
  std::vector<MstEntry> out_;
};

}  // namespace

Result<MstNodeData> decode_mst_node(std::string_view block) {
  auto node = decode_dag_cbor(block);
  if (!node) return std::unexpected(corrupt(node.error().message));
  const DagValue* left = node->find("l");
  const DagValue* entries = node->find("e");
  if (left == nullptr || entries == nullptr || entries->as_array() == nullptr ||
      node->as_map()->size() != 2) {
    return std::unexpected(corrupt("a node is {l, e}"));
  }
  MstNodeData out;
  if (const Cid* l = left->as_cid()) {
    out.left = *l;
  } else if (!left->is_null()) {
    return std::unexpected(corrupt("l is a CID or null"));
  }
  out.entries.reserve(entries->as_array()->size());
  std::string key;  // keys within a node are prefix-compressed against the previous one
  for (const auto& entry : *entries->as_array()) {
    const DagValue* p = entry.find("p");
    const DagValue* k = entry.find("k");
    const DagValue* v = entry.find("v");
    const DagValue* t = entry.find("t");
    if (p == nullptr || p->as_integer() == nullptr || k == nullptr || k->as_bytes() == nullptr ||
        v == nullptr || v->as_cid() == nullptr || t == nullptr || entry.as_map()->size() != 4) {
      return std::unexpected(corrupt("an entry is {p, k, v, t}"));
    }
    const std::int64_t prefix = *p->as_integer();
    if (prefix < 0 || static_cast<std::size_t>(prefix) > key.size()) {
      return std::unexpected(corrupt("prefix longer than the previous key"));
    }
    std::string next = key.substr(0, static_cast<std::size_t>(prefix)) + k->as_bytes()->data;
    if (!out.entries.empty() && !(key < next)) {
      return std::unexpected(corrupt("keys out of order at " + next));
    }
    key = std::move(next);
    MstNodeData::Entry item{key, *v->as_cid(), std::nullopt};
    if (const Cid* right = t->as_cid()) {
      item.right = *right;
    } else if (!t->is_null()) {
      return std::unexpected(corrupt("t is a CID or null"));
    }
    out.entries.push_back(std::move(item));
  }
  return out;
}

std::string encode_mst_node(const MstNodeData& node) {
  DagArray entries;
  entries.reserve(node.entries.size());
  std::string_view previous;
  for (const auto& entry : node.entries) {
    const std::size_t shared = common_prefix_length(previous, entry.key);
    DagMap map;
    map.emplace_back("k", DagBytes{entry.key.substr(shared)});
    map.emplace_back("p", static_cast<std::int64_t>(shared));
    map.emplace_back("t", entry.right ? DagValue(*entry.right) : DagValue(nullptr));
    map.emplace_back("v", entry.value);
    entries.emplace_back(std::move(map));
    previous = entry.key;
  }
  DagMap map;
  map.emplace_back("e", std::move(entries));
  map.emplace_back("l", node.left ? DagValue(*node.left) : DagValue(nullptr));
  return encode_dag_cbor(DagValue(std::move(map)));
}

Result<std::vector<MstEntry>> walk_mst(const CarFile& car, const Cid& root,
                                       const MstLimits& limits) {
  Walker walker(car, limits);
  if (auto r = walker.visit(root, 0); !r) return std::unexpected(r.error());
  return walker.take();
}

int mst_key_height(std::string_view key) {
  const std::string digest = sha256(key);
  int zeros = 0;
  for (unsigned char byte : digest) {
    if (byte == 0) {
      zeros += 8;
      continue;
    }
    zeros += std::countl_zero(byte);
    break;
  }
  return zeros / 2;
}

std::size_t common_prefix_length(std::string_view a, std::string_view b) {
  std::size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

}  // namespace bulleted::firehose
