// Backfill throughput on getRepo CARs (bench/make_repos), size by size:
// verify (every block hashed to its CID, the MST walked from the signed
// commit's `data`, every app.bulleted.node record read and validated, the
// signature checked against DIR/keys.json), best of 3 passes; then verify +
// apply, as a backfill does (Ingestor::resync_from_car into a fresh SQLite
// index), once. Prints a JSON line a size.
// Usage: backfill_bench DIR [DB_PATH]
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench/key_directory.hpp"
#include "bench/scratch_index.hpp"
#include "firehose/ingestor.hpp"
#include "firehose/records.hpp"
#include "schema/store.hpp"

using namespace bulleted;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: backfill_bench DIR [DB_PATH]\n");
    return 2;
  }
  spdlog::set_level(spdlog::level::warn);  // a line a repo resynced otherwise
  const std::filesystem::path dir = argv[1];
  bench::KeyDirectory keys((dir / "keys.json").string());
  if (keys.size() == 0) {
    std::fprintf(stderr, "no key directory at %s/keys.json\n", argv[1]);
    return 2;
  }
  const std::string path = argc > 2 ? argv[2] : "/tmp/bulleted-backfill-bench.db";
  bench::remove_index(path);
  auto store = schema::Store::open(path);
  if (!store) return 1;
  firehose::FirehoseMetrics metrics;
  firehose::Ingestor ingestor(**store, {.keys = &keys}, metrics);
  if (!ingestor.start()) return 1;

  std::vector<std::filesystem::path> groups;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_directory()) groups.push_back(entry.path());
  }
  std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
    return std::stol(a.filename().string()) < std::stol(b.filename().string());
  });
  for (const auto& group : groups) {
    std::vector<std::pair<std::string, std::string>> cars;  // did, bytes
    std::size_t bytes = 0;
    for (const auto& entry : std::filesystem::directory_iterator(group)) {
      std::ifstream in(entry.path(), std::ios::binary);
      std::ostringstream content;
      content << in.rdbuf();
      cars.emplace_back(entry.path().stem().string(), content.str());
      bytes += cars.back().second.size();
    }
    double best = 1e9;
    std::size_t records = 0;
    for (int pass = 0; pass < 3; ++pass) {
      records = 0;
      const auto t0 = Clock::now();
      for (const auto& [did, car] : cars) {
        auto snapshot = firehose::read_repo(car, did);
        if (!snapshot || !snapshot->rejected.empty()) return 1;
        auto key = keys.key(did, false);
        if (!key || !firehose::check_signature(snapshot->commit, *key)) return 1;
        records += snapshot->records.size();
      }
      best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
    }
    const auto t0 = Clock::now();
    const auto applied_before = metrics.ops_applied.load();
    for (const auto& [did, car] : cars) {
      if (!ingestor.resync_from_car(car, did)) return 1;
    }
    const double apply = std::chrono::duration<double>(Clock::now() - t0).count();
    const auto applied = metrics.ops_applied.load() - applied_before;
    const double repos = static_cast<double>(cars.size());
    std::printf("%s\n",
                nlohmann::json{{"benchmark", "backfill"},
                               {"implementation", "cpp"},
                               {"recordsPerRepo", std::stol(group.filename().string())},
                               {"repos", cars.size()},
                               {"records", records},
                               {"megabytes", static_cast<double>(bytes) / 1e6},
                               {"seconds", best},
                               {"reposPerSecond", repos / best},
                               {"recordsPerSecond", static_cast<double>(records) / best},
                               {"applySeconds", apply},
                               {"recordsApplied", applied},
                               {"applyReposPerSecond", repos / apply},
                               {"applyRecordsPerSecond", static_cast<double>(applied) / apply}}
                    .dump()
                    .c_str());
  }
  store->reset();
  bench::remove_index(path);
  return 0;
}
