// The migrations that add the kept child counts (schema 6), the counted
// blocks of positions (schema 7) and the served facets and lengths of the
// records (schema 8) to an existing index, timed on a 1,000,000-node index:
// 1,000 top-level nodes of 999 children each (every group large enough for
// blocks; one child in ten with a facet), written at the newest schema and
// taken back to schema 5 (the counts' and blocks' tables and the two
// columns dropped), then opened again as an upgrade would, with its
// progress printed.
//
// Usage: migration_bench [PARENTS] [DB_PATH]   (default 1000 parents)
#include <chrono>
#include <cstdio>
#include <string>

#include "bench/node_ops.hpp"
#include "bench/scratch_index.hpp"
#include "ordering/order_key.hpp"
#include "ordering/random_source.hpp"
#include "schema/sqlite.hpp"
#include "schema/store.hpp"
#include "schema/syntax.hpp"
#include "tests/support/store_internals.hpp"

namespace {

using namespace bulleted;
using Clock = std::chrono::steady_clock;

const std::string kDid = "did:plc:migrationbench0000000000";

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int parents = argc > 1 ? std::atoi(argv[1]) : 1000;
  const std::string path = argc > 2 ? argv[2] : "/tmp/bulleted-migration-bench.db";
  constexpr int kChildren = 999;
  bench::remove_index(path);
  {
    auto store = schema::Store::open(path);
    if (!store) return 1;
    const auto t0 = Clock::now();
    auto jitter = ordering::Mulberry32::from_seed(1);
    auto top_keys = *ordering::n_between(std::nullopt, std::nullopt, parents, jitter);
    auto child_keys = *ordering::n_between(std::nullopt, std::nullopt, kChildren, jitter);
    schema::ApplyBatch batch;
    auto flush = [&] {
      if (!(*store)->apply(batch)) std::exit(1);
      batch.ops.clear();
    };
    for (int p = 0; p < parents; ++p) {
      const std::string parent = "p" + std::to_string(100000 + p);
      batch.ops.push_back(bench::node_op(kDid, parent, std::nullopt, top_keys[p]));
      for (int c = 0; c < kChildren; ++c) {
        batch.ops.push_back(
            bench::node_op(kDid, parent + "c" + std::to_string(1000 + c), parent, child_keys[c]));
        if (c % 10 == 0) {
          batch.ops.back().record->facets = nlohmann::json::array(
              {{{"index", {{"byteStart", 2}, {"byteEnd", 8}}},
                {"features", nlohmann::json::array({{{"$type", "app.bulleted.format#bold"}}})}}});
        }
      }
      if (batch.ops.size() >= 10000) flush();
    }
    flush();
    std::printf("index: %lld nodes written in %.1f s\n",
                static_cast<long long>(*(*store)->read().node_count()), since(t0));
    // Back to schema 5: every later step's tables and columns dropped
    // (tests/support/store_internals.hpp), schema 6's counts too.
    if (!bulleted::testing::rewind_schema(**store, 5) ||
        !bulleted::testing::database_of(**store).exec("DROP TABLE group_counts; VACUUM;")) {
      return 1;
    }
  }
  const auto t0 = Clock::now();
  auto store = schema::Store::open(
      path, {.on_migration = [](const schema::MigrationProgress& step) {
        if (step.finished) {
          std::printf("schema %d (%.*s): done in %.2f s", step.version,
                      static_cast<int>(step.what.size()), step.what.data(), step.seconds);
          if (step.total > 0) {
            std::printf(", %lld of %lld %.*s", static_cast<long long>(step.done),
                        static_cast<long long>(step.total), static_cast<int>(step.counted.size()),
                        step.counted.data());
          }
          std::printf("\n");
        } else if (step.total > 0) {
          std::printf("schema %d: %lld of %lld %.*s, %.1f s\n", step.version,
                      static_cast<long long>(step.done), static_cast<long long>(step.total),
                      static_cast<int>(step.counted.size()), step.counted.data(), step.seconds);
        } else if (step.seconds >= 1) {
          std::printf("schema %d: working, %.1f s\n", step.version, step.seconds);
        }
        std::fflush(stdout);
      }});
  if (!store) {
    std::fprintf(stderr, "the upgrade failed: %s\n", store.error().message.c_str());
    return 1;
  }
  std::printf("opened with migrations 6 to %d in %.2f s\n", schema::Store::schema_version(),
              since(t0));
  const auto t1 = Clock::now();
  auto report = (*store)->integrity_report();
  if (!report) return 1;
  auto blocks =
      bulleted::testing::database_of(**store).prepare("SELECT count(*) FROM order_blocks");
  if (!blocks || !*(*blocks)->step()) return 1;
  std::printf("blocks built: %lld\n", static_cast<long long>((*blocks)->integer(0)));
  std::printf(
      "check: %.2f s, %lld nodes, wrong child counts %lld, wrong blocks %lld, wrong record fields "
      "%lld\n",
      since(t1), static_cast<long long>(report->nodes),
      static_cast<long long>(report->wrong_counts), static_cast<long long>(report->wrong_blocks),
      static_cast<long long>(report->wrong_record_fields));
  store->reset();
  bench::remove_index(path);
  return report->ok() ? 0 : 1;
}
