// Every captured frame decodes to what the reference decoder saw; damaged
// frames are errors, never crashes.
#include "firehose/frame.hpp"

#include <gtest/gtest.h>

#include <random>

#include "firehose/car.hpp"
#include "firehose/dag_cbor.hpp"
#include "firehose/mst.hpp"
#include "firehose/records.hpp"
#include "tests/support/files.hpp"

namespace bulleted::firehose {
namespace {

using nlohmann::json;

std::vector<json> jsonl(const std::string& path) {
  std::vector<json> lines;
  std::istringstream in(testing::read_file(path));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(json::parse(line));
  }
  return lines;
}

void expect_capture_decodes(const std::string& capture) {
  const auto files = testing::frame_files(capture);
  const auto expected = jsonl(testing::fixture_path(capture + "/frames.jsonl"));
  ASSERT_EQ(files.size(), expected.size()) << capture;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const json& want = expected[i];
    auto event = decode_frame(testing::read_file(files[i]));
    ASSERT_TRUE(event.has_value()) << files[i] << ": " << event.error().message;
    const json& header = want["header"];
    const json& body = want["body"];
    if (header["op"] == -1) {
      ASSERT_TRUE(std::holds_alternative<ErrorEvent>(*event)) << files[i];
      EXPECT_EQ(std::get<ErrorEvent>(*event).error, body["error"]);
      continue;
    }
    const std::string type = header["t"];
    EXPECT_EQ("#" + std::string(event_type_name(*event)), type) << files[i];
    if (body.contains("seq")) {
      EXPECT_EQ(event_seq(*event), body["seq"].get<std::int64_t>());
    }
    if (auto* commit = std::get_if<CommitEvent>(&*event)) {
      EXPECT_EQ(commit->repo, body["repo"]);
      EXPECT_EQ(commit->rev, body["rev"]);
      EXPECT_EQ(commit->ops.size(), body["ops"].size());
      EXPECT_EQ(commit->blocks.size(), body["blocks"]["$bytesLength"].get<std::size_t>());
      EXPECT_EQ(commit->since.has_value(), !body["since"].is_null());
      EXPECT_EQ(commit->commit->str(), body["commit"]["$link"]);
      // The commit block is the CAR's root and decodes.
      auto car = CarFile::parse(commit->blocks);
      ASSERT_TRUE(car.has_value()) << car.error().message;
      ASSERT_EQ(car->roots().size(), 1u);
      EXPECT_EQ(car->roots()[0], *commit->commit);
      EXPECT_TRUE(car->block(*commit->commit).has_value());
      // Record blocks are found by CID and hash to it.
      auto records = commit_records(*commit);
      ASSERT_TRUE(records.has_value()) << records.error().message;
      EXPECT_FALSE(records->gap.has_value()) << files[i] << ": " << *records->gap;
    }
    if (auto* account = std::get_if<AccountEvent>(&*event)) {
      EXPECT_EQ(account->active, body["active"].get<bool>());
    }
    if (auto* info = std::get_if<InfoEvent>(&*event)) {
      EXPECT_EQ(info->name, body["name"]);
    }
  }
}

TEST(Frames, ReplayFromZeroDecodes) { expect_capture_decodes("firehose/replay-cursor0"); }
TEST(Frames, LiveCaptureDecodes) { expect_capture_decodes("firehose/live"); }
TEST(Frames, ReplayFromThirtyDecodes) { expect_capture_decodes("firehose/replay-cursor30"); }
TEST(Frames, ErrorAndInfoFramesDecode) {
  expect_capture_decodes("firehose/future-cursor");
  expect_capture_decodes("firehose/invalid-cursor");
  expect_capture_decodes("firehose/outdated-cursor");
  auto future = decode_frame(testing::read_file(testing::frame_files("firehose/future-cursor")[0]));
  ASSERT_TRUE(std::holds_alternative<ErrorEvent>(*future));
  EXPECT_EQ(std::get<ErrorEvent>(*future).error, "FutureCursor");
}

TEST(Frames, UnknownTypesAreSkippable) {
  // {"t": "#future", "op": 1} {"x": 1}
  std::string frame = "\xa2\x61t\x67#future\x62op\x01";
  frame += "\xa1\x61x\x01";
  auto event = decode_frame(frame);
  ASSERT_TRUE(event.has_value()) << event.error().message;
  ASSERT_TRUE(std::holds_alternative<UnknownEvent>(*event));
  EXPECT_EQ(std::get<UnknownEvent>(*event).type, "#future");
}

// Truncated at every byte offset, with random byte flips, and with lengths
// that lie: an error each time, never a crash or a hang.
TEST(Frames, DamagedFramesAreErrors) {
  const auto files = testing::frame_files("firehose/replay-cursor0");
  std::mt19937 rng(2026);
  std::size_t truncations = 0;
  for (std::size_t pick : {std::size_t{0}, std::size_t{9}, std::size_t{24}, files.size() - 1}) {
    const std::string frame = testing::read_file(files[pick]);
    for (std::size_t cut = 0; cut < frame.size(); ++cut) {
      auto event = decode_frame(std::string_view(frame).substr(0, cut));
      if (event) {
        // Cutting inside the CAR bytes' payload is impossible without changing
        // the length header, so any success must still be a whole frame.
        ADD_FAILURE() << "truncated frame " << pick << " at " << cut << " decoded";
      }
      ++truncations;
    }
  }
  EXPECT_GT(truncations, 1000u);
  std::size_t flips_decoded = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string frame = testing::read_file(files[rng() % files.size()]);
    for (int f = 0; f < 1 + static_cast<int>(rng() % 4); ++f) {
      frame[rng() % frame.size()] = static_cast<char>(rng());
    }
    auto event = decode_frame(frame);
    if (event) {
      ++flips_decoded;
      if (auto* commit = std::get_if<CommitEvent>(&*event)) (void)commit_records(*commit);
    }
  }
  // Some flips land in text and still decode; most must not.
  EXPECT_LT(flips_decoded, 3000u);
  // A body claiming 4 GiB of bytes.
  std::string huge = "\xa2\x61t\x67#commit\x62op\x01";
  huge += "\xa1\x66\x62locks\x5a\xff\xff\xff\xff";
  EXPECT_FALSE(decode_frame(huge).has_value());
}

// A commit that writes one path twice carries the final block only: the
// earlier op's missing block is not a gap; a missing block with nothing after
// it is.
TEST(Frames, OnlyTheFinalBlockOfAPathWrittenTwiceIsNeeded) {
  const std::string record = encode_dag_cbor(
      DagValue{DagMap{{"$type", DagValue{std::string("app.bulleted.node")}},
                      {"text", DagValue{std::string("v2")}},
                      {"sortKey", DagValue{std::string("a0")}},
                      {"createdAt", DagValue{std::string("2026-11-30T12:00:00.000Z")}}}});
  const Cid final_cid = Cid::of_dag_cbor(record);
  const Cid earlier_cid = Cid::of_dag_cbor("an earlier version");
  const std::string commit_block =
      encode_dag_cbor(DagValue{DagMap{{"did", DagValue{std::string("did:plc:a")}}}});
  const Cid commit_cid = Cid::of_dag_cbor(commit_block);
  CommitEvent commit;
  commit.repo = "did:plc:a";
  commit.rev = "3n3jhhxt23f2j";
  commit.blocks = write_car(commit_cid, {{commit_cid, commit_block}, {final_cid, record}});
  commit.ops = {CommitOp{"update", "app.bulleted.node", "x", earlier_cid, std::nullopt},
                CommitOp{"update", "app.bulleted.node", "x", final_cid, std::nullopt}};
  auto records = commit_records(commit);
  ASSERT_TRUE(records.has_value()) << records.error().message;
  EXPECT_FALSE(records->gap.has_value()) << *records->gap;
  ASSERT_EQ(records->ops.size(), 1u);
  EXPECT_EQ(records->ops[0].record->text, "v2");
  // The same missing block as the last word on the path is a gap.
  commit.ops = {CommitOp{"update", "app.bulleted.node", "x", earlier_cid, std::nullopt}};
  EXPECT_TRUE(commit_records(commit)->gap.has_value());
}

TEST(Car, RepoCarWalksToTheReferenceMst) {
  const std::string bytes =
      testing::read_file(testing::fixture_path("firehose/run/alice-repo.car"));
  const json reference =
      testing::read_json(testing::fixture_path("firehose/run/alice-repo.car.json"));
  auto car = CarFile::parse(bytes);
  ASSERT_TRUE(car.has_value()) << car.error().message;
  EXPECT_EQ(car->roots()[0].str(), reference["roots"][0]);
  EXPECT_EQ(car->block_count(), reference["blocks"].get<std::size_t>());
  auto snapshot = read_repo(bytes, reference["commit"]["did"].get<std::string>());
  ASSERT_TRUE(snapshot.has_value()) << snapshot.error().message;
  EXPECT_EQ(snapshot->rev, reference["commit"]["rev"]);
  ASSERT_EQ(snapshot->records.size(), reference["entries"].size());
  for (std::size_t i = 0; i < snapshot->records.size(); ++i) {
    const auto& entry = reference["entries"][i];
    EXPECT_EQ("app.bulleted.node/" + snapshot->records[i].rkey, entry["key"]);
    EXPECT_EQ(snapshot->records[i].cid, entry["cid"]);
    ASSERT_TRUE(snapshot->records[i].record.has_value());
    EXPECT_EQ(snapshot->records[i].record->text, entry["record"]["text"]);
  }
  // Someone else's DID is refused.
  EXPECT_FALSE(read_repo(bytes, "did:plc:someoneelse").has_value());
  // A repo with more records than allowed is refused as too large.
  const std::size_t records = reference["entries"].size();
  ASSERT_GT(records, 2u);
  EXPECT_TRUE(read_repo(bytes, reference["commit"]["did"].get<std::string>(), records).has_value());
  auto over = read_repo(bytes, reference["commit"]["did"].get<std::string>(), records - 1);
  ASSERT_FALSE(over.has_value());
  EXPECT_EQ(over.error().code, ErrorCode::kPayloadTooLarge);
  // A record proof (commit, MST path, record) parses too.
  auto proof = CarFile::parse(
      testing::read_file(testing::fixture_path("firehose/run/alice-root-record-proof.car")));
  EXPECT_TRUE(proof.has_value());
}

TEST(Car, DamagedCarsAreErrors) {
  const std::string bytes =
      testing::read_file(testing::fixture_path("firehose/run/alice-repo.car"));
  const std::string did = testing::read_json(
      testing::fixture_path("firehose/run/alice-repo.car.json"))["commit"]["did"];
  for (std::size_t cut = 0; cut < bytes.size(); cut += 7) {
    EXPECT_FALSE(read_repo(std::string_view(bytes).substr(0, cut), did).has_value()) << cut;
  }
  std::mt19937 rng(4);
  for (int round = 0; round < 500; ++round) {
    std::string damaged = bytes;
    damaged[100 + rng() % (damaged.size() - 100)] ^= static_cast<char>(1 + rng() % 255);
    // A flipped block no longer hashes to its CID: the walk or the record read fails.
    EXPECT_FALSE(read_repo(damaged, did).has_value()) << round;
  }
}

TEST(Mst, InteropKeyHeightsAndPrefixes) {
  const json heights = testing::read_json(testing::fixture_path("interop/mst/key_heights.json"));
  ASSERT_FALSE(heights.empty());
  for (const auto& c : heights)
    EXPECT_EQ(mst_key_height(c["key"].get<std::string>()), c["height"]) << c["key"];
  const json prefixes = testing::read_json(testing::fixture_path("interop/mst/common_prefix.json"));
  ASSERT_FALSE(prefixes.empty());
  for (const auto& c : prefixes) {
    EXPECT_EQ(common_prefix_length(c["left"].get<std::string>(), c["right"].get<std::string>()),
              c["len"]);
  }
}

}  // namespace
}  // namespace bulleted::firehose
