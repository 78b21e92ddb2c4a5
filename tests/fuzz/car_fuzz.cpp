// libFuzzer target: CAR files and the MST walk over them, as getRepo and
// #sync deliver them. Every block a CAR hands out matches its CID.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "firehose/car.hpp"
#include "firehose/mst.hpp"

using namespace bulleted::firehose;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto car = CarFile::parse(bytes);
  if (!car) return 0;
  for (const auto& root : car->roots()) {
    if (auto block = car->block(root); block && !root.matches(*block)) std::abort();
    // The root as an MST node, and as a commit whose data names one.
    (void)walk_mst(*car, root, {.max_nodes = 10'000, .max_depth = 64});
  }
  return 0;
}
