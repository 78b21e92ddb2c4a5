// Writes a stream of #commit frames as a PDS sends them: 50 repos, each a
// real MST with commits signed by the repo's own key (half P-256, half
// secp256k1), `prevData` and each op's `prev`, the CAR holding the new nodes,
// the nodes the Sync 1.1 inversion reads and the record blocks. Commits have
// 1 to 200 ops (creates, updates, deletes of app.bulleted.node records with
// parents and sortKeys). Each repo's first commit has no `since`.
//
// Next to OUT it writes OUT.keys.json, the key directory both the C++ and
// the JavaScript consumers read: {"did": "did:key:..."}; and with --cars DIR,
// each repo's final getRepo CAR as DIR/<did>.car.
// Usage: make_frames OUT [COMMITS] [--cars DIR]   (default 5000 commits)
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "bench/frame_stream.hpp"
#include "bench/signed_repo.hpp"
#include "ordering/order_key.hpp"
#include "ordering/tid.hpp"

namespace {

using namespace bulleted::firehose;
using bulleted::bench::SignedRepo;

DagValue text(std::string s) { return DagValue{std::move(s)}; }

struct Repo {
  SignedRepo signed_repo;
  std::vector<std::string> rkeys;
  std::string last_key = "a0";
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: make_frames OUT [COMMITS] [--cars DIR]\n");
    return 2;
  }
  int commits = 5000;
  std::string cars_dir;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--cars") == 0 && i + 1 < argc) {
      cars_dir = argv[++i];
    } else {
      commits = std::atoi(argv[i]);
    }
  }
  std::ofstream out(argv[1], std::ios::binary);
  std::mt19937 rng(42);
  auto jitter = bulleted::ordering::Mulberry32::from_seed(42);
  bulleted::ordering::TidClock clock(7);
  std::vector<Repo> repos;
  nlohmann::json keys = nlohmann::json::object();
  for (std::size_t i = 0; i < 50; ++i) {
    // Keys from the seed, so that every run writes the same stream.
    std::string secret(32, '\0');
    for (auto& byte : secret) byte = static_cast<char>(rng() & 0xff);
    secret[0] = 0x01;  // below either curve's order
    const KeyCurve curve = i % 2 == 0 ? KeyCurve::kSecp256k1 : KeyCurve::kP256;
    const std::string did = "did:plc:benchrepo" + std::to_string(100000 + i) + "abcdefgh";
    repos.push_back(Repo{SignedRepo(did, *PrivateKey::from_bytes(curve, secret)), {}, "a0"});
    keys[did] = repos.back().signed_repo.key().public_key().did_key();
  }
  std::ofstream(std::string(argv[1]) + ".keys.json") << keys.dump(1) << "\n";
  const std::string words =
      "the quick brown fox jumps over a lazy dog while planning next week's tasks ";
  std::size_t total_ops = 0;
  for (int c = 0; c < commits; ++c) {
    Repo& repo = repos[rng() % repos.size()];
    const std::string& did = repo.signed_repo.did();
    const int kind = static_cast<int>(rng() % 100);
    const int op_count = kind < 80   ? 1
                         : kind < 95 ? 2 + static_cast<int>(rng() % 19)
                                     : 100 + static_cast<int>(rng() % 101);
    std::vector<SignedRepo::Write> writes;
    std::set<std::string> touched;  // a path once per commit, as a PDS writes
    for (int o = 0; o < op_count; ++o) {
      const int action = repo.rkeys.size() < 5 ? 0 : static_cast<int>(rng() % 10);
      if (action == 9) {  // delete
        const std::size_t victim = rng() % repo.rkeys.size();
        const std::string rkey = repo.rkeys[victim];
        if (touched.contains(rkey)) continue;
        touched.insert(rkey);
        repo.rkeys.erase(repo.rkeys.begin() + static_cast<std::ptrdiff_t>(victim));
        writes.push_back({"delete", "app.bulleted.node/" + rkey, {}});
        continue;
      }
      const bool update = action >= 7;
      const std::string rkey = update ? repo.rkeys[rng() % repo.rkeys.size()] : clock.next().str();
      if (touched.contains(rkey)) continue;
      touched.insert(rkey);
      if (!update) repo.rkeys.push_back(rkey);
      repo.last_key = *bulleted::ordering::between(repo.last_key, std::nullopt, jitter);
      DagMap record{{"$type", text("app.bulleted.node")},
                    {"text", text(words.substr(0, 20 + rng() % (words.size() - 20)))},
                    {"sortKey", text(repo.last_key)},
                    {"createdAt", text("2026-11-30T12:00:00.000Z")}};
      if (repo.rkeys.size() > 1 && rng() % 3 != 0) {
        record.push_back({"parent", text("at://" + did + "/app.bulleted.node/" +
                                         repo.rkeys[rng() % (repo.rkeys.size() - 1)])});
      }
      writes.push_back({update ? "update" : "create", "app.bulleted.node/" + rkey,
                        encode_dag_cbor(DagValue{std::move(record)})});
    }
    total_ops += writes.size();
    bulleted::bench::append_frame(out, repo.signed_repo.commit(writes, clock.next().str(), c + 1));
  }
  if (!cars_dir.empty()) {
    std::filesystem::create_directories(cars_dir);
    for (const auto& repo : repos) {
      if (!repo.signed_repo.rev()) continue;
      std::ofstream(cars_dir + "/" + repo.signed_repo.did() + ".car", std::ios::binary)
          << repo.signed_repo.car();
    }
  }
  std::printf("{\"commits\":%d,\"ops\":%zu}\n", commits, total_ops);
  return 0;
}
