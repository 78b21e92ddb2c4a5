// Writes a stream of realistic #commit frames, the shape a PDS sends: many
// repos, commits of 1 to 200 ops (creates, updates, deletes of
// app.bulleted.node records with parents and sortKeys), each with its signed
// commit block, MST nodes and record blocks in a CAR.
// Usage: make_frames OUT [COMMITS]   (default 5000 commits)
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "bench/frame_stream.hpp"
#include "firehose/car.hpp"
#include "firehose/dag_cbor.hpp"
#include "ordering/order_key.hpp"
#include "ordering/tid.hpp"

namespace {

using namespace bulleted::firehose;

DagValue text(std::string s) { return DagValue{std::move(s)}; }
DagValue integer(std::int64_t v) { return DagValue{v}; }

struct Repo {
  std::string did;
  std::optional<std::string> rev;
  std::vector<std::string> rkeys;
  std::string last_key = "a0";
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: make_frames OUT [COMMITS]\n");
    return 2;
  }
  const int commits = argc > 2 ? std::atoi(argv[2]) : 5000;
  std::ofstream out(argv[1], std::ios::binary);
  std::mt19937 rng(42);
  auto jitter = bulleted::ordering::Mulberry32::from_seed(42);
  bulleted::ordering::TidClock clock(7);
  std::vector<Repo> repos(50);
  for (std::size_t i = 0; i < repos.size(); ++i) {
    repos[i].did = "did:plc:benchrepo" + std::to_string(100000 + i) + "abcdefgh";
  }
  const std::string words =
      "the quick brown fox jumps over a lazy dog while planning next week's tasks ";
  std::size_t total_ops = 0;
  for (int c = 0; c < commits; ++c) {
    Repo& repo = repos[rng() % repos.size()];
    const int kind = static_cast<int>(rng() % 100);
    const int op_count = kind < 80   ? 1
                         : kind < 95 ? 2 + static_cast<int>(rng() % 19)
                                     : 100 + static_cast<int>(rng() % 101);
    const std::string rev = clock.next().str();
    DagArray ops;
    std::vector<std::pair<Cid, std::string>> blocks;
    for (int o = 0; o < op_count; ++o) {
      const int action = repo.rkeys.size() < 5 ? 0 : static_cast<int>(rng() % 10);
      if (action == 9) {  // delete
        const std::size_t victim = rng() % repo.rkeys.size();
        const std::string rkey = repo.rkeys[victim];
        repo.rkeys.erase(repo.rkeys.begin() + static_cast<std::ptrdiff_t>(victim));
        ops.push_back(DagValue{DagMap{{"cid", DagValue{nullptr}},
                                      {"path", text("app.bulleted.node/" + rkey)},
                                      {"prev", DagValue{Cid::of_dag_cbor(rkey)}},
                                      {"action", text("delete")}}});
        continue;
      }
      const bool update = action >= 7;
      const std::string rkey = update ? repo.rkeys[rng() % repo.rkeys.size()] : clock.next().str();
      if (!update) repo.rkeys.push_back(rkey);
      repo.last_key = *bulleted::ordering::between(repo.last_key, std::nullopt, jitter);
      DagMap record{{"$type", text("app.bulleted.node")},
                    {"text", text(words.substr(0, 20 + rng() % (words.size() - 20)))},
                    {"sortKey", text(repo.last_key)},
                    {"createdAt", text("2026-11-30T12:00:00.000Z")}};
      if (repo.rkeys.size() > 1 && rng() % 3 != 0) {
        record.push_back({"parent", text("at://" + repo.did + "/app.bulleted.node/" +
                                         repo.rkeys[rng() % (repo.rkeys.size() - 1)])});
      }
      const std::string block = encode_dag_cbor(DagValue{std::move(record)});
      const Cid cid = Cid::of_dag_cbor(block);
      DagMap op{{"cid", DagValue{cid}},
                {"path", text("app.bulleted.node/" + rkey)},
                {"action", text(update ? "update" : "create")}};
      if (update) op.push_back({"prev", DagValue{Cid::of_dag_cbor(rkey + "old")}});
      ops.push_back(DagValue{std::move(op)});
      blocks.emplace_back(cid, block);
    }
    total_ops += ops.size();
    // MST nodes along the changed paths, and the signed commit.
    for (int m = 0; m < 3; ++m) {
      const std::string node = encode_dag_cbor(
          DagValue{DagMap{{"e", DagValue{DagArray{DagValue{DagMap{
                                    {"k", DagValue{DagBytes{"app.bulleted.node/" + rev}}},
                                    {"p", integer(0)},
                                    {"t", DagValue{nullptr}},
                                    {"v", DagValue{Cid::of_dag_cbor(rev + std::to_string(m))}}}}}}},
                          {"l", DagValue{nullptr}}}});
      blocks.emplace_back(Cid::of_dag_cbor(node), node);
    }
    const std::string commit =
        encode_dag_cbor(DagValue{DagMap{{"did", text(repo.did)},
                                        {"rev", text(rev)},
                                        {"sig", DagValue{DagBytes{std::string(64, 's')}}},
                                        {"data", DagValue{blocks.back().first}},
                                        {"prev", DagValue{nullptr}},
                                        {"version", integer(3)}}});
    const Cid commit_cid = Cid::of_dag_cbor(commit);
    blocks.insert(blocks.begin() + static_cast<std::ptrdiff_t>(rng() % (blocks.size() + 1)),
                  {commit_cid, commit});
    DagMap body{{"ops", DagValue{std::move(ops)}},
                {"rev", text(rev)},
                {"seq", integer(c + 1)},
                {"repo", text(repo.did)},
                {"time", text("2026-11-30T12:00:00.000Z")},
                {"blobs", DagValue{DagArray{}}},
                {"since", repo.rev ? text(*repo.rev) : DagValue{nullptr}},
                {"blocks", DagValue{DagBytes{write_car(commit_cid, blocks)}}},
                {"commit", DagValue{commit_cid}},
                {"rebase", DagValue{false}},
                {"tooBig", DagValue{false}}};
    repo.rev = rev;
    std::string frame =
        encode_dag_cbor(DagValue{DagMap{{"t", text("#commit")}, {"op", integer(1)}}});
    frame += encode_dag_cbor(DagValue{std::move(body)});
    bulleted::bench::append_frame(out, frame);
  }
  std::printf("{\"commits\":%d,\"ops\":%zu}\n", commits, total_ops);
  return 0;
}
