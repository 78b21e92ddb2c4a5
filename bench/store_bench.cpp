// Index benchmarks: apply throughput (node ops per second, batched) and
// children-page latency on a 100,000-node index. Prints JSON lines.
// Usage: store_bench [DB_PATH]   (default: a file under /tmp, removed after)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "bench/node_ops.hpp"
#include "bench/scratch_index.hpp"
#include "ordering/order_key.hpp"
#include "ordering/tid.hpp"
#include "schema/store.hpp"
#include "schema/syntax.hpp"

namespace {

using bulleted::schema::ApplyBatch;
using bulleted::schema::RecordOp;
using bulleted::schema::Store;
using Clock = std::chrono::steady_clock;

constexpr int kParents = 100;
constexpr int kChildrenPerParent = 999;  // 100 + 100 * 999 = 100,000 nodes
const std::string kDid = "did:plc:benchmarkuser0000000000";

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(p * static_cast<double>(values.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "/tmp/bulleted-store-bench.db";
  bulleted::bench::remove_index(path);
  auto store = Store::open(path);
  if (!store) {
    std::fprintf(stderr, "open: %s\n", store.error().message.c_str());
    return 1;
  }
  bulleted::ordering::TidClock clock(1);
  auto jitter = bulleted::ordering::Mulberry32::from_seed(1);
  const auto parent_keys =
      *bulleted::ordering::n_between(std::nullopt, std::nullopt, kParents, jitter);
  const auto child_keys =
      *bulleted::ordering::n_between(std::nullopt, std::nullopt, kChildrenPerParent, jitter);

  // Build the whole stream first: only apply() is timed.
  std::vector<RecordOp> ops;
  ops.reserve(kParents * (kChildrenPerParent + 1));
  std::vector<std::string> parents;
  for (int p = 0; p < kParents; ++p) {
    parents.push_back(clock.next().str());
    ops.push_back(bulleted::bench::node_op(kDid, parents.back(), std::nullopt, parent_keys[p],
                                           clock.next().str()));
    for (int c = 0; c < kChildrenPerParent; ++c) {
      ops.push_back(bulleted::bench::node_op(kDid, clock.next().str(), parents.back(),
                                             child_keys[c], clock.next().str()));
    }
  }
  constexpr std::size_t kBatch = 1000;
  const auto start = Clock::now();
  for (std::size_t i = 0; i < ops.size(); i += kBatch) {
    ApplyBatch batch;
    batch.ops.assign(ops.begin() + static_cast<std::ptrdiff_t>(i),
                     ops.begin() + static_cast<std::ptrdiff_t>(std::min(ops.size(), i + kBatch)));
    batch.cursor = std::make_pair(std::string("bench"), static_cast<std::int64_t>(i));
    if (auto r = (*store)->apply(batch); !r) {
      std::fprintf(stderr, "apply: %s\n", r.error().message.c_str());
      return 1;
    }
  }
  const double apply_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("%s\n",
              nlohmann::json{{"benchmark", "apply"},
                             {"nodes", ops.size()},
                             {"batchSize", kBatch},
                             {"seconds", apply_seconds},
                             {"opsPerSecond", static_cast<double>(ops.size()) / apply_seconds}}
                  .dump()
                  .c_str());

  // Children pages of 100 at random offsets of random groups: a first page
  // then a cursor page, as a scrolling client does.
  std::mt19937 rng(5);
  std::vector<double> first_us;
  std::vector<double> cursor_us;
  for (int i = 0; i < 5000; ++i) {
    const std::string& parent = parents[rng() % parents.size()];
    bool reverse = rng() % 2 == 0;
    auto t0 = Clock::now();
    auto page = (*store)->read().children(
        {.did = kDid, .parent_rkey = parent, .limit = 100, .reverse = reverse});
    auto t1 = Clock::now();
    if (!page || page->nodes.size() != 100 || !page->cursor) return 1;
    auto next = (*store)->read().children({.did = kDid,
                                           .parent_rkey = parent,
                                           .limit = 100,
                                           .cursor = page->cursor,
                                           .reverse = reverse});
    auto t2 = Clock::now();
    if (!next || next->nodes.size() != 100) return 1;
    first_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    cursor_us.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());
  }
  for (auto& [name, samples] :
       {std::pair{"childrenFirstPage", first_us}, std::pair{"childrenCursorPage", cursor_us}}) {
    std::printf("%s\n", nlohmann::json{{"benchmark", name},
                                       {"indexNodes", ops.size()},
                                       {"pageSize", 100},
                                       {"samples", samples.size()},
                                       {"p50Microseconds", percentile(samples, 0.50)},
                                       {"p99Microseconds", percentile(samples, 0.99)}}
                            .dump()
                            .c_str());
  }
  store->reset();
  bulleted::bench::remove_index(path);
  return 0;
}
