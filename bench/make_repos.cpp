// Writes getRepo CARs of realistic sizes for the backfill benchmark: repos of
// 10, 100, 1,000, 10,000 and 100,000 app.bulleted.node records (outlines
// with parents and sortKeys, texts of 20-80 characters), a real MST signed
// by each repo's own key (half P-256, half secp256k1), and as many repos of
// each size as make about the same number of records for the small sizes.
// DIR/<size>/<did>.car, and DIR/keys.json: {"did": "did:key:..."}.
// Usage: make_repos DIR
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "bench/signed_repo.hpp"
#include "ordering/order_key.hpp"
#include "ordering/tid.hpp"

int main(int argc, char** argv) {
  using namespace bulleted::firehose;
  if (argc < 2) {
    std::fprintf(stderr, "usage: make_repos DIR\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::mt19937 rng(7);
  auto jitter = bulleted::ordering::Mulberry32::from_seed(7);
  bulleted::ordering::TidClock clock(11);
  nlohmann::json keys = nlohmann::json::object();
  const std::string words =
      "the quick brown fox jumps over a lazy dog while planning next week's tasks ";
  // (records a repo, repos) per size.
  const std::vector<std::pair<int, int>> sizes = {
      {10, 200}, {100, 100}, {1000, 20}, {10000, 4}, {100000, 1}};
  std::size_t index = 0;
  for (const auto& [records, count] : sizes) {
    std::filesystem::create_directories(dir / std::to_string(records));
    for (int r = 0; r < count; ++r, ++index) {
      std::string secret(32, '\0');
      for (auto& byte : secret) byte = static_cast<char>(rng() & 0xff);
      secret[0] = 0x01;  // below either curve's order
      const KeyCurve curve = index % 2 == 0 ? KeyCurve::kSecp256k1 : KeyCurve::kP256;
      const std::string did = "did:plc:backfill" + std::to_string(100000 + index) + "abcdefghi";
      bulleted::bench::SignedRepo repo(did, *PrivateKey::from_bytes(curve, secret));
      keys[did] = repo.key().public_key().did_key();
      std::vector<std::string> rkeys;
      std::string last_key = "a0";
      // Written 1,000 records a commit, as an import would.
      for (int written = 0; written < records;) {
        std::vector<bulleted::bench::SignedRepo::Write> writes;
        for (; written < records && writes.size() < 1000; ++written) {
          const std::string rkey = clock.next().str();
          last_key = *bulleted::ordering::between(last_key, std::nullopt, jitter);
          DagMap record{{"$type", DagValue{std::string("app.bulleted.node")}},
                        {"text", DagValue{words.substr(0, 20 + rng() % 60)}},
                        {"sortKey", DagValue{last_key}},
                        {"createdAt", DagValue{std::string("2026-11-30T12:00:00.000Z")}}};
          if (!rkeys.empty() && rng() % 4 != 0) {
            record.push_back({"parent", DagValue{"at://" + did + "/app.bulleted.node/" +
                                                 rkeys[rng() % rkeys.size()]}});
          }
          rkeys.push_back(rkey);
          writes.push_back({"create", "app.bulleted.node/" + rkey,
                            encode_dag_cbor(DagValue{std::move(record)})});
        }
        (void)repo.commit(writes, clock.next().str(), 0);
      }
      std::ofstream(dir / std::to_string(records) / (did + ".car"), std::ios::binary) << repo.car();
    }
  }
  std::ofstream(dir / "keys.json") << keys.dump(1) << "\n";
  std::printf("{\"repos\":%zu}\n", index);
  return 0;
}
