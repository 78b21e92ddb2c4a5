// DAG-CBOR against the protocol's data-model fixtures, and the strictness
// rules on hand-made bytes.
#include "firehose/dag_cbor.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "firehose/cbor_reader.hpp"
#include "schema/base64.hpp"
#include "tests/support/files.hpp"

namespace bulleted::firehose {
namespace {

using nlohmann::json;

std::string bytes_of(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

TEST(DagCbor, InteropFixturesDecodeToTheirJsonAndCid) {
  const json fixtures =
      testing::read_json(testing::fixture_path("interop/data-model/data-model-fixtures.json"));
  ASSERT_FALSE(fixtures.empty());
  for (const auto& fixture : fixtures) {
    const auto bytes = schema::base64_decode(fixture["cbor_base64"].get<std::string>(),
                                             schema::Base64Alphabet::kStandard);
    ASSERT_TRUE(bytes.has_value());
    auto value = decode_dag_cbor(*bytes);
    ASSERT_TRUE(value.has_value()) << value.error().message;
    EXPECT_EQ(to_json(*value), fixture["json"]);
    EXPECT_EQ(Cid::of_dag_cbor(*bytes).str(), fixture["cid"].get<std::string>());
    // And back: JSON -> data model -> canonical bytes.
    auto from = from_json(fixture["json"]);
    ASSERT_TRUE(from.has_value()) << from.error().message;
    EXPECT_EQ(encode_dag_cbor(*from), *bytes);
  }
}

TEST(DagCbor, InteropValidAndInvalidJson) {
  const json valid =
      testing::read_json(testing::fixture_path("interop/data-model/data-model-valid.json"));
  const json invalid =
      testing::read_json(testing::fixture_path("interop/data-model/data-model-invalid.json"));
  ASSERT_FALSE(valid.empty());
  ASSERT_FALSE(invalid.empty());
  for (const auto& c : valid) {
    auto value = from_json(c["json"]);
    EXPECT_TRUE(value.has_value()) << c["note"] << ": " << value.error().message;
    if (value) {
      // What is valid also survives a round trip through bytes.
      auto back = decode_dag_cbor(encode_dag_cbor(*value));
      ASSERT_TRUE(back.has_value());
      EXPECT_EQ(encode_dag_cbor(*back), encode_dag_cbor(*value));
    }
  }
  for (const auto& c : invalid) EXPECT_FALSE(from_json(c["json"]).has_value()) << c["note"];
}

TEST(DagCbor, RefusesWhatIsNotStrictDagCbor) {
  const std::string cid_bytes(Cid::of_dag_cbor("x").bytes());
  std::string bad_tag = bytes_of({0xd8, 0x2b, 0x41, 0x00});  // tag 43
  struct Case {
    std::string bytes;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {bytes_of({0xbf, 0x61, 0x61, 0x01, 0xff}), "indefinite-length map"},
      {bytes_of({0x9f, 0x01, 0xff}), "indefinite-length array"},
      {bytes_of({0x7f, 0x61, 0x61, 0xff}), "indefinite-length text"},
      {bytes_of({0xf9, 0x3c, 0x00}), "floats"},
      {bytes_of({0xfb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0}), "floats"},
      {bytes_of({0xf7}), "undefined"},
      {bytes_of({0x18, 0x05}), "non-minimal"},
      {bytes_of({0x19, 0x00, 0x10}), "non-minimal"},
      {bytes_of({0x78, 0x01, 0x61}), "non-minimal"},
      {bytes_of({0xa2, 0x61, 0x62, 0x01, 0x61, 0x61, 0x02}), "canonical order"},
      {bytes_of({0xa2, 0x62, 0x61, 0x61, 0x01, 0x61, 0x62, 0x02}), "canonical order"},
      {bytes_of({0xa2, 0x61, 0x61, 0x01, 0x61, 0x61, 0x02}), "duplicate"},
      {bytes_of({0xa1, 0x01, 0x02}), "map keys must be text"},
      {bad_tag, "only tag 42"},
      {bytes_of({0xd8, 0x2a, 0x01}), "tag 42 must hold bytes"},
      {bytes_of({0xd8, 0x2a, 0x42, 0x01, 0x02}), "0x00"},
      {bytes_of({0x1b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}), "signed 64-bit"},
      {bytes_of({0x9a, 0xff, 0xff, 0xff, 0xff}), "longer than the input"},
      {bytes_of({0x62, 0xc3, 0x28}), "UTF-8"},
      {bytes_of({0x83, 0x01, 0x02}), "truncated"},
      {bytes_of({0x01, 0x02}), "bytes after the item"},
      {std::string(), "empty"},
  };
  for (const auto& c : cases) {
    auto value = decode_dag_cbor(c.bytes);
    ASSERT_FALSE(value.has_value()) << "accepted; expected " << c.reason;
    EXPECT_EQ(value.error().code, ErrorCode::kCorrupt);
    EXPECT_NE(value.error().message.find(c.reason), std::string::npos)
        << "'" << value.error().message << "' lacks '" << c.reason << "'";
  }
  // A CID behind tag 42 decodes.
  std::string link = bytes_of({0xd8, 0x2a, 0x58, static_cast<int>(cid_bytes.size() + 1), 0x00});
  link += cid_bytes;
  auto value = decode_dag_cbor(link);
  ASSERT_TRUE(value.has_value()) << value.error().message;
  ASSERT_NE(value->as_cid(), nullptr);
  EXPECT_EQ(value->as_cid()->bytes(), cid_bytes);
}

TEST(DagCbor, AMalformedBlobIsRefusedInCborAsInJson) {
  // Found by dag_cbor_fuzz: the CBOR side took a blob whose mimeType key was
  // misspelt, which its own JSON form then refused.
  const auto blob = [](const char* mime_key) {
    DagMap map;
    map.emplace_back("$type", DagValue{std::string("blob")});
    map.emplace_back("ref", DagValue{Cid::of_dag_cbor("\xa0")});
    map.emplace_back(mime_key, DagValue{std::string("image/jpeg")});
    map.emplace_back("size", DagValue{std::int64_t{10000}});
    std::sort(map.begin(), map.end(),
              [](const auto& a, const auto& b) { return canonical_key_less(a.first, b.first); });
    return encode_dag_cbor(DagValue{std::move(map)});
  };
  ASSERT_TRUE(decode_dag_cbor(blob("mimeType")).has_value());
  auto misspelt = decode_dag_cbor(blob("mikeType"));
  ASSERT_FALSE(misspelt.has_value());
  EXPECT_NE(misspelt.error().message.find("blob"), std::string::npos);
  const std::string crash = *schema::base64_decode(
      "o2Fh2CpYJQABcRIgZQYqWloA/BbXPGlEI3zLwVscSnI0SJM2iR0JF0GiOdBhYlggnFERjvLLiw9qm45JrqH9QTzyC2Lu"
      "1Xb4ne6+sBrCzI1hY6RjcmVm2CpYJQABVRIgQljP/3j2E2l2l1Y/kmyR5dNXTS6iWuftktbr/COjiJ5kc2l6ZRknEGUk"
      "dHlwZWRibG9iaG1pa2VUeXBlamltYWdlL2pwZWc=",
      schema::Base64Alphabet::kStandard);
  EXPECT_FALSE(decode_dag_cbor(crash).has_value());
  // The same fuzzer: $type that is not a string, and keys the JSON form
  // reserves, would not survive the trip through JSON either.
  const auto one = [](const char* key, DagValue value) {
    return encode_dag_cbor(DagValue{DagMap{{key, std::move(value)}}});
  };
  EXPECT_FALSE(decode_dag_cbor(one("$type", DagValue{DagArray{}})).has_value());
  EXPECT_FALSE(decode_dag_cbor(one("$type", DagValue{std::string()})).has_value());
  EXPECT_FALSE(decode_dag_cbor(one("$link", DagValue{std::string("bafy")})).has_value());
  EXPECT_FALSE(decode_dag_cbor(one("$bytes", DagValue{std::string("AAAA")})).has_value());
  EXPECT_TRUE(
      decode_dag_cbor(one("$type", DagValue{std::string("app.bulleted.node")})).has_value());
  EXPECT_TRUE(decode_dag_cbor(one("$other", DagValue{std::int64_t{1}})).has_value());
}

TEST(DagCbor, DeepNestingIsRefusedNotOverflowed) {
  std::string deep(100'000, static_cast<char>(0x81));  // [[[[...
  deep.push_back(0x01);
  auto value = decode_dag_cbor(deep);
  ASSERT_FALSE(value.has_value());
  EXPECT_NE(value.error().message.find("nested too deeply"), std::string::npos);
}

TEST(Cid, StringAndBinaryForms) {
  const Cid cid = Cid::of_dag_cbor("hello");
  EXPECT_EQ(cid.codec(), kCodecDagCbor);
  EXPECT_EQ(cid.hash_code(), kHashSha256);
  EXPECT_TRUE(cid.matches("hello"));
  EXPECT_FALSE(cid.matches("hello!"));
  auto parsed = Cid::parse(cid.str());
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(*parsed, cid);
  EXPECT_EQ(cid.str().substr(0, 7), "bafyrei");
  // A raw-codec CID (blobs) parses as well.
  auto raw = Cid::parse("bafkreiccldh766hwcnuxnf2wh6jgzepf2nlu2lvcllt63eww5p6chi4ity");
  ASSERT_TRUE(raw.has_value());
  EXPECT_EQ(raw->codec(), kCodecRaw);
  for (std::string bad : {"", "b", "Qmabc", "bafyrei!", "bafyreiccldh766"}) {
    EXPECT_FALSE(Cid::parse(bad).has_value()) << bad;
  }
  std::size_t pos = 0;
  EXPECT_FALSE(read_uvarint(bytes_of({0x80, 0x00}), pos).has_value());  // not minimal
  pos = 0;
  EXPECT_EQ(*read_uvarint(bytes_of({0x80, 0x01}), pos), 128u);
}

TEST(Cid, HeadersAreReadWhateverTheirVarintWidths) {
  const std::string digest(32, '\x07');
  const auto read = [](const std::string& bytes) {
    std::size_t consumed = 0;
    auto cid = Cid::read_prefix(bytes + "tail", consumed);
    EXPECT_TRUE(!cid || consumed == bytes.size()) << consumed;
    return cid;
  };
  // One-byte varints throughout, and a two-byte codec (dag-json, 0x0129).
  auto cbor = read(bytes_of({0x01, 0x71, 0x12, 0x20}) + digest);
  ASSERT_TRUE(cbor.has_value()) << cbor.error().message;
  EXPECT_EQ(cbor->codec(), kCodecDagCbor);
  EXPECT_EQ(cbor->digest(), digest);
  auto json = read(bytes_of({0x01, 0xa9, 0x02, 0x12, 0x20}) + digest);
  ASSERT_TRUE(json.has_value()) << json.error().message;
  EXPECT_EQ(json->codec(), 0x0129u);
  EXPECT_EQ(json->digest(), digest);
  // Another hash with a short digest; the identity hash of nothing.
  auto other = read(bytes_of({0x01, 0x55, 0x13, 0x03, 0x61, 0x62, 0x63}));
  ASSERT_TRUE(other.has_value()) << other.error().message;
  EXPECT_EQ(other->digest(), "abc");
  EXPECT_TRUE(read(bytes_of({0x01, 0x55, 0x00, 0x00})).has_value());
  // Refused: version 0 or 2, a sha2-256 digest of 31 bytes, a digest longer
  // than 64 bytes or than the input, a non-minimal varint.
  std::size_t consumed = 0;
  for (const std::string& bad :
       {bytes_of({0x00, 0x71, 0x12, 0x20}) + digest, bytes_of({0x02, 0x71, 0x12, 0x20}) + digest,
        bytes_of({0x01, 0x71, 0x12, 0x1f}) + digest,
        bytes_of({0x01, 0x55, 0x13, 0x41}) + digest + digest + "x",
        bytes_of({0x01, 0x71, 0x12, 0x20}) + digest.substr(1),
        bytes_of({0x81, 0x00, 0x71, 0x12, 0x20}) + digest}) {
    EXPECT_FALSE(Cid::read_prefix(bad, consumed).has_value()) << bad.size();
  }
}

}  // namespace
}  // namespace bulleted::firehose
