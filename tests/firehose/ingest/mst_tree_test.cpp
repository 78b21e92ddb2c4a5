// The changeable MST against the protocol's commit-proof vectors
// (interop/firehose): trees built from their keys have the stated roots, and
// inverting each commit on only the blocks of its proof gives the root
// before it. Then shape properties: any insertion order, any removals, the
// same tree as building the final key set directly.
#include "firehose/mst_tree.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "firehose/car.hpp"
#include "firehose/mst.hpp"
#include "tests/support/files.hpp"

namespace bulleted::firehose {
namespace {

using nlohmann::json;
using Blocks = std::map<std::string, std::string>;  // CID string -> block

Cid cid_of(const json& text) {
  auto cid = Cid::parse(text.get<std::string>());
  EXPECT_TRUE(cid.has_value()) << text;
  return *cid;
}

MstBlockSource source_of(const Blocks& blocks) {
  return [&blocks](const Cid& cid) -> std::optional<std::string_view> {
    auto it = blocks.find(cid.str());
    if (it == blocks.end()) return std::nullopt;
    return std::string_view(it->second);
  };
}

// A tree of `keys` built from empty, every node block kept in `blocks`.
Cid build(const std::vector<std::string>& keys, const Cid& value, Blocks& blocks) {
  MstTree tree;
  for (const auto& key : keys) EXPECT_TRUE(tree.put(key, value).has_value()) << key;
  auto root =
      tree.root([&](const Cid& cid, std::string&& block) { blocks[cid.str()] = std::move(block); });
  EXPECT_TRUE(root.has_value());
  return *root;
}

TEST(MstTree, CommitProofFixturesInvertOnTheirProofBlocksAlone) {
  const json fixtures =
      testing::read_json(testing::fixture_path("interop/firehose/commit-proof-fixtures.json"));
  ASSERT_GE(fixtures.size(), 6u);
  for (const auto& fixture : fixtures) {
    SCOPED_TRACE(fixture["comment"].get<std::string>());
    const Cid leaf = cid_of(fixture["leafValue"]);
    std::vector<std::string> before = fixture["keys"].get<std::vector<std::string>>();
    std::set<std::string> after_set(before.begin(), before.end());
    for (const auto& key : fixture["adds"]) after_set.insert(key.get<std::string>());
    for (const auto& key : fixture["dels"]) after_set.erase(key.get<std::string>());
    const std::vector<std::string> after(after_set.begin(), after_set.end());

    Blocks ignored;
    EXPECT_EQ(build(before, leaf, ignored).str(), fixture["rootBeforeCommit"]);
    Blocks after_blocks;
    const Cid after_root = build(after, leaf, after_blocks);
    ASSERT_EQ(after_root.str(), fixture["rootAfterCommit"]);

    // The same commit applied to the tree before it.
    {
      MstTree tree;
      for (const auto& key : before) ASSERT_TRUE(tree.put(key, leaf).has_value());
      for (const auto& key : fixture["adds"]) {
        ASSERT_TRUE(tree.put(key.get<std::string>(), leaf).has_value());
      }
      for (const auto& key : fixture["dels"]) {
        ASSERT_TRUE(tree.remove(key.get<std::string>()).has_value());
      }
      EXPECT_EQ(tree.root()->str(), fixture["rootAfterCommit"]);
    }

    Blocks proof;
    for (const auto& cid : fixture["blocksInProof"]) {
      auto it = after_blocks.find(cid.get<std::string>());
      if (it != after_blocks.end()) proof.insert(*it);
    }
    auto invert = [&](const Blocks& blocks) -> Result<Cid> {
      auto tree = MstTree::load(after_root, source_of(blocks));
      if (!tree) return std::unexpected(tree.error());
      for (const auto& key : fixture["adds"]) {
        auto present = tree->get(key.get<std::string>());
        if (!present) return std::unexpected(present.error());
        EXPECT_TRUE(present->has_value());
        if (auto r = tree->remove(key.get<std::string>()); !r) return std::unexpected(r.error());
      }
      for (const auto& key : fixture["dels"]) {
        if (auto r = tree->put(key.get<std::string>(), leaf); !r) {
          return std::unexpected(r.error());
        }
      }
      return tree->root();
    };
    auto inverted = invert(proof);
    ASSERT_TRUE(inverted.has_value()) << inverted.error().message;
    EXPECT_EQ(inverted->str(), fixture["rootBeforeCommit"]);
    // Without a block of the proof the inversion either still finds the
    // same root (this tree knows each node's layer from its parent, so it
    // reads fewer neighbours than some) or says a node is missing; never a
    // different root. The new root itself is always needed.
    std::size_t needed = 0;
    for (const auto& [cid, block] : proof) {
      Blocks fewer = proof;
      fewer.erase(cid);
      auto without = invert(fewer);
      if (without) {
        EXPECT_EQ(without->str(), fixture["rootBeforeCommit"]) << "without " << cid;
      } else {
        EXPECT_EQ(without.error().code, ErrorCode::kNotFound) << without.error().message;
        ++needed;
      }
      if (cid == after_root.str()) {
        EXPECT_FALSE(without.has_value());
      }
    }
    EXPECT_GE(needed, 1u);
  }
}

TEST(MstTree, AnyOrderOfPutsAndRemovesGivesTheTreeOfTheFinalKeys) {
  const Cid value = Cid::of_dag_cbor("a record");
  std::vector<std::string> keys;
  std::istringstream in(testing::read_file(testing::fixture_path("interop/mst/example_keys.txt")));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) keys.push_back(line);
  }
  ASSERT_GT(keys.size(), 100u);
  std::mt19937 random(7);
  for (int round = 0; round < 8; ++round) {
    std::shuffle(keys.begin(), keys.end(), random);
    const std::size_t keep = keys.size() / 3 + static_cast<std::size_t>(round) * 12;
    std::vector<std::string> kept(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(keep));
    std::sort(kept.begin(), kept.end());
    Blocks blocks;
    const Cid expected = build(kept, value, blocks);

    MstTree tree;
    for (const auto& key : keys) ASSERT_TRUE(tree.put(key, value).has_value());
    // A root taken half way leaves written nodes behind: later changes must
    // still write the changed ones.
    ASSERT_TRUE(tree.root().has_value());
    std::vector<std::string> removed(keys.begin() + static_cast<std::ptrdiff_t>(keep), keys.end());
    std::shuffle(removed.begin(), removed.end(), random);
    for (const auto& key : removed) ASSERT_TRUE(tree.remove(key).has_value()) << key;
    EXPECT_EQ(tree.root()->str(), expected.str()) << "round " << round;

    // The built tree reads back: every kept key present, removed ones absent,
    // and a walk lists exactly the kept keys in order.
    auto loaded = MstTree::load(expected, source_of(blocks));
    ASSERT_TRUE(loaded.has_value());
    for (std::size_t i = 0; i < 20; ++i) {
      auto hit = loaded->get(kept[i * kept.size() / 20]);
      ASSERT_TRUE(hit.has_value());
      EXPECT_TRUE(hit->has_value());
      auto miss = loaded->get(removed[i % removed.size()]);
      ASSERT_TRUE(miss.has_value());
      EXPECT_FALSE(miss->has_value());
    }
    std::vector<std::pair<Cid, std::string>> car_blocks;
    for (const auto& [cid, block] : blocks) car_blocks.emplace_back(*Cid::parse(cid), block);
    const std::string car_bytes = write_car(expected, car_blocks);
    auto car = CarFile::parse(car_bytes);
    ASSERT_TRUE(car.has_value());
    auto walked = walk_mst(*car, expected);
    ASSERT_TRUE(walked.has_value()) << walked.error().message;
    ASSERT_EQ(walked->size(), kept.size());
    for (std::size_t i = 0; i < kept.size(); ++i) EXPECT_EQ((*walked)[i].key, kept[i]);
  }
}

TEST(MstTree, UpdatesReplaceValuesAndRemovingEverythingLeavesTheEmptyTree) {
  MstTree empty;
  const std::string empty_root = empty.root()->str();
  MstTree tree;
  const Cid one = Cid::of_dag_cbor("one");
  const Cid two = Cid::of_dag_cbor("two");
  std::vector<std::string> keys;
  for (int i = 0; i < 300; ++i) keys.push_back("app.bulleted.node/k" + std::to_string(i));
  for (const auto& key : keys) ASSERT_TRUE(tree.put(key, one).has_value());
  const std::string with_one = tree.root()->str();
  ASSERT_TRUE(tree.put(keys[17], two).has_value());
  EXPECT_NE(tree.root()->str(), with_one);
  EXPECT_EQ(tree.get(keys[17])->value(), two);
  ASSERT_TRUE(tree.put(keys[17], one).has_value());
  EXPECT_EQ(tree.root()->str(), with_one);
  EXPECT_EQ(tree.remove("app.bulleted.node/absent").error().code, ErrorCode::kNotFound);
  for (const auto& key : keys) ASSERT_TRUE(tree.remove(key).has_value());
  EXPECT_EQ(tree.root()->str(), empty_root);
}

TEST(MstTree, NodesThatLieAboutTheirShapeAreRefused) {
  // A node block whose key belongs on another layer: the tree it claims to
  // be cannot be the canonical one, so nothing may be computed from it.
  const Cid value = Cid::of_dag_cbor("v");
  std::string low_key;   // a key of layer 0 ...
  std::string high_key;  // ... and one above it
  for (int i = 0; low_key.empty() || high_key.empty(); ++i) {
    const std::string key = "app.bulleted.node/x" + std::to_string(i);
    if (mst_key_height(key) == 0 && low_key.empty()) low_key = key;
    if (mst_key_height(key) >= 1 && high_key.empty()) high_key = key;
  }
  MstNodeData node;
  node.entries.push_back({std::min(low_key, high_key), value, std::nullopt});
  node.entries.push_back({std::max(low_key, high_key), value, std::nullopt});
  Blocks blocks;
  const std::string block = encode_mst_node(node);
  const Cid root = Cid::of_dag_cbor(block);
  blocks[root.str()] = block;
  auto tree = MstTree::load(root, source_of(blocks));
  ASSERT_TRUE(tree.has_value());
  auto got = tree->get(low_key);
  ASSERT_FALSE(got.has_value());
  EXPECT_EQ(got.error().code, ErrorCode::kCorrupt);
  // A block that does not hash to the CID that names it.
  Blocks swapped{{root.str(), encode_mst_node(MstNodeData{})}};
  EXPECT_FALSE(MstTree::load(root, source_of(swapped)).has_value());
}

TEST(MstTree, EmptyNodesOutsideTheEmptyTreeAreRefused) {
  // The canonical tree never holds a node with nothing in it, and its root
  // always holds a key (or is the empty tree). Trees that break either rule
  // would not come back to their own root after a put and its undoing.
  const Cid value = Cid::of_dag_cbor("v");
  std::string low_key;  // a key of layer 0
  for (int i = 0; low_key.empty(); ++i) {
    const std::string key = "app.bulleted.node/y" + std::to_string(i);
    if (mst_key_height(key) == 0) low_key = key;
  }
  Blocks blocks;
  auto keep = [&blocks](const MstNodeData& node) {
    std::string block = encode_mst_node(node);
    const Cid cid = Cid::of_dag_cbor(block);
    blocks[cid.str()] = std::move(block);
    return cid;
  };
  MstNodeData leaf;
  leaf.entries.push_back({low_key, value, std::nullopt});
  const Cid leaf_cid = keep(leaf);

  // A root with no key above a real subtree.
  MstNodeData hollow;
  hollow.left = leaf_cid;
  auto over = MstTree::load(keep(hollow), source_of(blocks));
  ASSERT_FALSE(over.has_value());
  EXPECT_EQ(over.error().code, ErrorCode::kCorrupt);

  // An empty layer-0 node hung below a key of layer 1.
  std::string high_key;
  for (int i = 0; high_key.empty(); ++i) {
    const std::string key = "app.bulleted.node/z" + std::to_string(i);
    if (mst_key_height(key) == 1) high_key = key;
  }
  MstNodeData top;
  top.entries.push_back({high_key, value, keep(MstNodeData{})});
  auto tree = MstTree::load(keep(top), source_of(blocks));
  ASSERT_TRUE(tree.has_value());
  auto got = tree->get(high_key + "~");  // a key after high_key walks into the empty node
  ASSERT_FALSE(got.has_value());
  EXPECT_EQ(got.error().code, ErrorCode::kCorrupt);

  // The empty tree itself loads, and is empty.
  const Cid empty = keep(MstNodeData{});
  auto none = MstTree::load(empty, source_of(blocks));
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->get(low_key)->has_value());
  EXPECT_EQ(none->root()->str(), empty.str());
}

}  // namespace
}  // namespace bulleted::firehose
