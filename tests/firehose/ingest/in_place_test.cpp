// The in-place readers of #commit frames and record blocks, held to the
// generic decoder: the same event and the same record wherever they read,
// and the generic decoder's answer (event or reason) wherever they hand over,
// damaged input included.
#include <gtest/gtest.h>

#include <random>

#include "firehose/car.hpp"
#include "firehose/cbor_reader.hpp"
#include "firehose/dag_cbor.hpp"
#include "firehose/frame.hpp"
#include "firehose/records.hpp"
#include "tests/support/describe_decoded.hpp"
#include "tests/support/files.hpp"

namespace bulleted::firehose {
namespace {

using testing::describe;

std::vector<std::string> captured_frames() {
  std::vector<std::string> frames;
  for (const char* capture :
       {"firehose/replay-cursor0", "firehose/live", "firehose/replay-cursor30"}) {
    for (const auto& file : testing::frame_files(capture))
      frames.push_back(testing::read_file(file));
  }
  return frames;
}

// The record blocks of every captured commit.
std::vector<std::string> captured_records(const std::vector<std::string>& frames) {
  std::vector<std::string> records;
  for (const auto& frame : frames) {
    auto event = decode_frame(frame, DecodePath::kGeneric);
    const auto* commit = event ? std::get_if<CommitEvent>(&*event) : nullptr;
    if (commit == nullptr) continue;
    auto car = CarFile::parse(commit->blocks);
    if (!car) continue;
    for (const CommitOp& op : commit->ops) {
      if (!op.cid) continue;
      if (auto block = car->block(*op.cid)) records.emplace_back(*block);
    }
  }
  return records;
}

TEST(InPlace, ReadsEveryCapturedCommitAndRecordAsTheGenericDecoderDoes) {
  const auto frames = captured_frames();
  std::size_t commits = 0;
  for (const auto& frame : frames) {
    const auto generic = decode_frame(frame, DecodePath::kGeneric);
    ASSERT_TRUE(generic.has_value()) << generic.error().message;
    EXPECT_EQ(describe(decode_frame(frame)), describe(generic));
    if (!std::holds_alternative<CommitEvent>(*generic)) {
      EXPECT_FALSE(decode_frame(frame, DecodePath::kInPlace).has_value());
      continue;
    }
    const auto in_place = decode_frame(frame, DecodePath::kInPlace);
    ASSERT_TRUE(in_place.has_value()) << "a well-formed commit was handed over";
    EXPECT_EQ(describe(in_place), describe(generic));
    ++commits;
  }
  EXPECT_GT(commits, 40u);
  const auto records = captured_records(frames);
  ASSERT_GT(records.size(), 40u);
  for (const auto& block : records) {
    const auto generic = parse_record_block(block, DecodePath::kGeneric);
    ASSERT_TRUE(generic.has_value()) << generic.error();
    const auto in_place = parse_record_block(block, DecodePath::kInPlace);
    ASSERT_TRUE(in_place.has_value()) << in_place.error();
    EXPECT_EQ(describe(in_place), describe(generic));
  }
}

TEST(InPlace, DamagedInputGetsTheGenericDecodersAnswer) {
  const auto frames = captured_frames();
  const auto records = captured_records(frames);
  std::mt19937 rng(4);
  const auto damage = [&rng](std::string bytes) {
    if (rng() % 4 == 0) return bytes.substr(0, rng() % bytes.size());
    for (int f = 0; f < 1 + static_cast<int>(rng() % 3); ++f) {
      bytes[rng() % bytes.size()] = static_cast<char>(rng());
    }
    return bytes;
  };
  std::size_t frames_in_place = 0;
  std::size_t records_in_place = 0;
  for (int round = 0; round < 20'000; ++round) {
    const std::string frame = damage(frames[rng() % frames.size()]);
    const auto generic = describe(decode_frame(frame, DecodePath::kGeneric));
    ASSERT_EQ(describe(decode_frame(frame)), generic) << "round " << round;
    if (auto in_place = decode_frame(frame, DecodePath::kInPlace)) {
      ASSERT_EQ(describe(in_place), generic) << "round " << round;
      ++frames_in_place;
    }
    const std::string block = damage(records[rng() % records.size()]);
    const auto record = describe(parse_record_block(block, DecodePath::kGeneric));
    ASSERT_EQ(describe(parse_record_block(block)), record) << "round " << round;
    if (auto in_place = parse_record_block(block, DecodePath::kInPlace)) {
      ASSERT_EQ(describe(in_place), record) << "round " << round;
      ++records_in_place;
    }
  }
  // Damage inside texts and CAR bytes leaves many inputs readable in place:
  // the comparison above ran on them.
  EXPECT_GT(frames_in_place, 1000u);
  EXPECT_GT(records_in_place, 1000u);
}

std::string record_block(DagMap fields) {
  std::sort(fields.begin(), fields.end(),
            [](const auto& a, const auto& b) { return canonical_key_less(a.first, b.first); });
  return encode_dag_cbor(DagValue{std::move(fields)});
}

DagMap plain_record() {
  return {{"$type", DagValue{std::string("app.bulleted.node")}},
          {"text", DagValue{std::string("hello")}},
          {"sortKey", DagValue{std::string("a0")}},
          {"createdAt", DagValue{std::string("2026-11-30T12:00:00.000Z")}}};
}

TEST(InPlace, RecordsOutsideTheCommonCaseAreLeftToTheGenericDecoder) {
  // Facets are read in place, and come out as the generic decoder has them.
  DagMap with_facets = plain_record();
  with_facets.emplace_back(
      "facets",
      DagValue{DagArray{DagValue{DagMap{
          {"index", DagValue{DagMap{{"byteStart", DagValue{std::int64_t{0}}},
                                    {"byteEnd", DagValue{std::int64_t{5}}}}}},
          {"features", DagValue{DagArray{DagValue{DagMap{
                           {"$type", DagValue{std::string("app.bulleted.format#bold")}}}}}}}}}}});
  const std::string facets = record_block(with_facets);
  auto in_place = parse_record_block(facets, DecodePath::kInPlace);
  ASSERT_TRUE(in_place.has_value()) << in_place.error();
  EXPECT_TRUE(in_place->facets.is_array());
  EXPECT_EQ(describe(in_place), describe(parse_record_block(facets, DecodePath::kGeneric)));
  // A facet that breaks the rules (no byte range, a CID for a link) is
  // dropped alike by both.
  DagMap bad_facets = plain_record();
  bad_facets.emplace_back(
      "facets", DagValue{DagArray{DagValue{DagMap{{"index", DagValue{std::int64_t{1}}},
                                                  {"link", DagValue{Cid::of_dag_cbor("x")}}}}}});
  const std::string bad = record_block(bad_facets);
  auto bad_in_place = parse_record_block(bad, DecodePath::kInPlace);
  ASSERT_TRUE(bad_in_place.has_value()) << bad_in_place.error();
  EXPECT_TRUE(bad_in_place->facets.is_null());
  EXPECT_EQ(describe(bad_in_place), describe(parse_record_block(bad, DecodePath::kGeneric)));

  // More fields than the in-place reader holds: handed over, still parsed.
  DagMap many = plain_record();
  for (int i = 0; i < 16; ++i) many.emplace_back("extra" + std::to_string(i), DagValue{nullptr});
  const std::string wide = record_block(many);
  EXPECT_FALSE(parse_record_block(wide, DecodePath::kInPlace).has_value());
  ASSERT_TRUE(parse_record_block(wide).has_value());
  EXPECT_EQ(describe(parse_record_block(wide)),
            describe(parse_record_block(wide, DecodePath::kGeneric)));

  // A key the JSON form reserves, a nested map with an empty $type, and a
  // record that calls itself a blob: handed over, and the generic reason
  // stands.
  DagMap reserved = plain_record();
  reserved.emplace_back("$link", DagValue{std::string("x")});
  DagMap nested = plain_record();
  nested.emplace_back("extra", DagValue{DagMap{{"$type", DagValue{std::string()}}}});
  DagMap blob = plain_record();
  blob[0].second = DagValue{std::string("blob")};
  for (const DagMap& fields : {reserved, nested, blob}) {
    const std::string block = record_block(fields);
    EXPECT_FALSE(parse_record_block(block, DecodePath::kInPlace).has_value());
    const auto generic = parse_record_block(block, DecodePath::kGeneric);
    ASSERT_FALSE(generic.has_value());
    EXPECT_EQ(describe(parse_record_block(block)), describe(generic));
  }
}

// A commit frame whose one op carries an extra field nested `depth` arrays
// deep.
std::string commit_frame_with_nesting(int depth) {
  DagValue nested{std::int64_t{1}};
  for (int i = 0; i < depth; ++i) nested = DagValue{DagArray{std::move(nested)}};
  const DagMap op{{"cid", DagValue{Cid::of_dag_cbor("x")}},
                  {"path", DagValue{std::string("app.bulleted.node/3lbyg5kdj4c2a")}},
                  {"extra", std::move(nested)},
                  {"action", DagValue{std::string("create")}}};
  const DagMap body{{"ops", DagValue{DagArray{DagValue{op}}}},
                    {"rev", DagValue{std::string("3lbyg5kdj4c2b")}},
                    {"seq", DagValue{std::int64_t{7}}},
                    {"repo", DagValue{std::string("did:plc:abcdefghijklmnopqrstuvwx")}},
                    {"time", DagValue{std::string("2026-11-30T12:00:00.000Z")}},
                    {"blocks", DagValue{DagBytes{"car"}}}};
  return encode_dag_cbor(DagValue{
             DagMap{{"t", DagValue{std::string("#commit")}}, {"op", DagValue{std::int64_t{1}}}}}) +
         encode_dag_cbor(DagValue{body});
}

TEST(InPlace, NestingIsCountedFromTheFrameBodyAsTheGenericDecoderCountsIt) {
  // The op's extra field sits inside three collections (body, ops, op): 61
  // more arrays reach the 64 limit, 62 pass it.
  for (int depth : {61, 62}) {
    const std::string frame = commit_frame_with_nesting(depth);
    const auto generic = decode_frame(frame, DecodePath::kGeneric);
    EXPECT_EQ(generic.has_value(), depth == 61) << depth;
    EXPECT_EQ(describe(decode_frame(frame)), describe(generic)) << depth;
    EXPECT_EQ(decode_frame(frame, DecodePath::kInPlace).has_value(), depth == 61) << depth;
  }
}

}  // namespace
}  // namespace bulleted::firehose
