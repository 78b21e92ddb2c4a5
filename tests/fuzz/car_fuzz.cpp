// libFuzzer target: CAR files and the MST walk over them, as getRepo and
// #sync deliver them. Every block a CAR hands out matches its CID; the
// changeable MST loaded on any root reads, removes and re-adds keys without
// crashing, and undoing a put it made gives back the root it had.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "firehose/car.hpp"
#include "firehose/mst.hpp"
#include "firehose/mst_tree.hpp"
#include "firehose/verify.hpp"

using namespace bulleted::firehose;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto car = CarFile::parse(bytes);
  if (!car) return 0;
  for (const auto& root : car->roots()) {
    if (auto block = car->block(root); block && !root.matches(*block)) std::abort();
    // The root as an MST node, and as a commit whose data names one.
    auto entries = walk_mst(*car, root, {.max_nodes = 10'000, .max_depth = 64});
    (void)read_signed_commit(car->raw_block(root).value_or(""));
    auto tree = MstTree::load(root, [&](const Cid& cid) { return car->raw_block(cid); });
    if (!tree) continue;
    auto before = tree->root();
    const std::string key = "app.bulleted.node/fuzz";
    auto held = tree->get(key);
    if (!before || !held || held->has_value()) continue;
    if (!tree->put(key, root)) continue;
    if (tree->remove(key) && entries) {
      // A tree read whole and valid comes back to its own root.
      auto after = tree->root();
      if (after && !(*after == *before)) std::abort();
    }
  }
  return 0;
}
