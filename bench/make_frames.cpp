// Writes a stream of #commit frames as a PDS sends them: 50 repos, each a
// real MST with commits signed by the repo's own key (half P-256, half
// secp256k1), `prevData` and each op's `prev`, the CAR holding the new nodes,
// the nodes the Sync 1.1 inversion reads and the record blocks. Commits have
// 1 to 200 ops (creates, updates, deletes of app.bulleted.node records with
// parents and sortKeys). Each repo's first commit has no `since`.
//
// With --network the stream is shaped like the relay's: 95% of the frames
// are commits of 2,000 other repos writing app.bsky.feed.like records (real
// repos too, signed), 5% the app.bulleted.node commits above.
//
// Next to OUT it writes OUT.keys.json, the key directory both the C++ and
// the JavaScript consumers read: {"did": "did:key:..."}; and with --cars DIR,
// each node repo's final getRepo CAR as DIR/<did>.car.
// Usage: make_frames OUT [COMMITS] [--cars DIR] [--network]   (default 5000
// frames)
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
    std::fprintf(stderr, "usage: make_frames OUT [COMMITS] [--cars DIR] [--network]\n");
    return 2;
  }
  int commits = 5000;
  std::string cars_dir;
  bool network = false;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--cars") == 0 && i + 1 < argc) {
      cars_dir = argv[++i];
    } else if (std::strcmp(argv[i], "--network") == 0) {
      network = true;
    } else {
      commits = std::atoi(argv[i]);
    }
  }
  std::ofstream out(argv[1], std::ios::binary);
  std::mt19937 rng(42);
  auto jitter = bulleted::ordering::Mulberry32::from_seed(42);
  bulleted::ordering::TidClock clock(7);
  nlohmann::json keys = nlohmann::json::object();
  // Keys from the seed, so that every run writes the same stream.
  auto make_repo = [&](const std::string& did, std::size_t i) {
    std::string secret(32, '\0');
    for (auto& byte : secret) byte = static_cast<char>(rng() & 0xff);
    secret[0] = 0x01;  // below either curve's order
    const KeyCurve curve = i % 2 == 0 ? KeyCurve::kSecp256k1 : KeyCurve::kP256;
    SignedRepo repo(did, *PrivateKey::from_bytes(curve, secret));
    keys[did] = repo.key().public_key().did_key();
    return repo;
  };
  std::vector<Repo> repos;
  for (std::size_t i = 0; i < 50; ++i) {
    repos.push_back(Repo{
        make_repo("did:plc:benchrepo" + std::to_string(100000 + i) + "abcdefgh", i), {}, "a0"});
  }
  std::vector<SignedRepo> others;
  for (std::size_t i = 0; network && i < 2000; ++i) {
    others.push_back(make_repo("did:plc:otherrepo" + std::to_string(100000 + i) + "abcdefg", i));
  }
  std::size_t node_commits = 0;
  std::ofstream(std::string(argv[1]) + ".keys.json") << keys.dump(1) << "\n";
  const std::string words =
      "the quick brown fox jumps over a lazy dog while planning next week's tasks ";
  std::size_t total_ops = 0;
  for (int c = 0; c < commits; ++c) {
    if (network && rng() % 100 >= 5) {
      // A like, as most of the network's commits are.
      SignedRepo& other = others[rng() % others.size()];
      const std::string rkey = clock.next().str();
      DagMap like{
          {"$type", text("app.bsky.feed.like")},
          {"subject",
           DagValue{DagMap{
               {"cid", text("bafyreig2fjxi3rptqdgylg7e5hmjl6mcke7rn2b6cugzlqq3i4zu6rq52q")},
               {"uri", text("at://did:plc:z72i7hdynmk6r22z27h6tvur/app.bsky.feed.post/" + rkey)}}}},
          {"createdAt", text("2026-11-30T12:00:00.000Z")}};
      bulleted::bench::append_frame(out,
                                    other.commit({{"create", "app.bsky.feed.like/" + rkey,
                                                   encode_dag_cbor(DagValue{std::move(like)})}},
                                                 clock.next().str(), c + 1));
      continue;
    }
    ++node_commits;
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
  std::printf("{\"commits\":%d,\"nodeCommits\":%zu,\"ops\":%zu}\n", commits, node_commits,
              total_ops);
  return 0;
}
