// getOutline's walk over a real index: pre-order, one limit across levels,
// the depth bound, the byte bound, and NotFound for whatever is not shown.
#include <gtest/gtest.h>

#include "schema/note_record.hpp"
#include "schema/outline_record.hpp"
#include "schema/store.hpp"
#include "tests/support/index_fixture.hpp"
#include "tests/support/store_fixtures.hpp"

namespace bulleted::schema {
namespace {

using testing::NodeSpec;
using testing::upsert;

constexpr const char* kAlice = "did:plc:alice";

class OutlineTest : public testing::IndexTest {
 protected:
  // a (b (c (d)), e), f: two top-level bullets, a chain three deep under a.
  void SetUp() override {
    IndexTest::SetUp();
    apply({upsert({.rkey = "a", .sort_key = "a0"}),
           upsert({.rkey = "b", .parent_rkey = "a", .sort_key = "a0"}),
           upsert({.rkey = "c", .parent_rkey = "b", .sort_key = "a0"}),
           upsert({.rkey = "d", .parent_rkey = "c", .sort_key = "a0"}),
           upsert({.rkey = "e", .parent_rkey = "a", .sort_key = "a1"}),
           upsert({.rkey = "f", .sort_key = "a1"})});
  }
  OutlinePage walk(OutlineQuery query) {
    auto page = store_->read().outline(query);
    EXPECT_TRUE(page.has_value()) << page.error().message;
    return page ? std::move(*page) : OutlinePage{};
  }
  static std::vector<std::string> rkeys(const OutlinePage& page) {
    std::vector<std::string> out;
    for (const auto& row : page.nodes) out.push_back(row.rkey);
    return out;
  }
};

TEST_F(OutlineTest, PreOrderWithinTheDepth) {
  auto all = walk({.did = kAlice, .depth = 5, .limit = 100});
  EXPECT_EQ(rkeys(all), (std::vector<std::string>{"a", "b", "c", "d", "e", "f"}));
  EXPECT_EQ(all.stop, OutlineStop::kComplete);
  EXPECT_FALSE(all.root.has_value());
  auto two = walk({.did = kAlice, .depth = 2, .limit = 100});
  EXPECT_EQ(rkeys(two), (std::vector<std::string>{"a", "b", "e", "f"}));
  EXPECT_EQ(two.stop, OutlineStop::kDepth) << "b has children the depth left out";
  EXPECT_EQ(two.nodes[1].child_count, 1);
}

TEST_F(OutlineTest, OneLimitAcrossAllLevels) {
  auto three = walk({.did = kAlice, .depth = 5, .limit = 3});
  EXPECT_EQ(rkeys(three), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(three.stop, OutlineStop::kLimit);
  // Exactly as many rows as there are: nothing was left out.
  auto six = walk({.did = kAlice, .depth = 5, .limit = 6});
  EXPECT_EQ(six.nodes.size(), 6u);
  EXPECT_EQ(six.stop, OutlineStop::kComplete);
  // The limit ends the walk even when the depth cut a branch before it.
  auto cut = walk({.did = kAlice, .depth = 1, .limit = 1});
  EXPECT_EQ(rkeys(cut), (std::vector<std::string>{"a"}));
  EXPECT_EQ(cut.stop, OutlineStop::kLimit);
}

TEST_F(OutlineTest, AZoomedWalkStartsUnderItsRoot) {
  auto zoomed = walk({.did = kAlice, .root_rkey = "a", .depth = 1, .limit = 10});
  ASSERT_TRUE(zoomed.root.has_value());
  EXPECT_EQ(zoomed.root->rkey, "a");
  EXPECT_EQ(rkeys(zoomed), (std::vector<std::string>{"b", "e"}));
  EXPECT_EQ(zoomed.stop, OutlineStop::kDepth);
  auto leaf = walk({.did = kAlice, .root_rkey = "d", .depth = 5, .limit = 10});
  EXPECT_TRUE(leaf.nodes.empty());
  EXPECT_EQ(leaf.stop, OutlineStop::kComplete);
}

TEST_F(OutlineTest, TheByteBoundEndsTheWalkAsTheLimitDoes) {
  apply({upsert({.rkey = "big", .sort_key = "a2", .text = std::string(50'000, 'x')})});
  auto page = walk({.did = kAlice, .depth = 5, .limit = 100, .max_bytes = 20'000});
  EXPECT_EQ(rkeys(page), (std::vector<std::string>{"a", "b", "c", "d", "e", "f"}));
  EXPECT_EQ(page.stop, OutlineStop::kLimit);
  // A first row is always given, whatever it weighs.
  auto first =
      walk({.did = kAlice, .root_rkey = std::nullopt, .depth = 1, .limit = 100, .max_bytes = 10});
  EXPECT_EQ(first.nodes.size(), 1u);
}

TEST_F(OutlineTest, AParentCycleUnderAZoomIsBoundedByTheDepth) {
  apply({upsert({.rkey = "x", .parent_rkey = "y", .sort_key = "a0"}),
         upsert({.rkey = "y", .parent_rkey = "x", .sort_key = "a0"})});
  auto page = walk({.did = kAlice, .root_rkey = "x", .depth = 5, .limit = 100});
  EXPECT_EQ(rkeys(page), (std::vector<std::string>{"y", "x", "y", "x", "y"}));
  EXPECT_EQ(page.stop, OutlineStop::kDepth);
}

TEST_F(OutlineTest, UnknownHiddenAndMissingAreAllNotFound) {
  for (const OutlineQuery& query :
       {OutlineQuery{.did = "did:plc:nobody"}, OutlineQuery{.did = kAlice, .root_rkey = "zz"}}) {
    auto page = store_->read().outline(query);
    ASSERT_FALSE(page.has_value()) << query.did;
    EXPECT_EQ(page.error().code, ErrorCode::kNotFound);
  }
  ApplyBatch hide;
  hide.statuses.emplace_back(kAlice, RepoStatus::kTakendown);
  ASSERT_TRUE(store_->apply(hide).has_value());
  auto hidden = store_->read().outline({.did = kAlice});
  ASSERT_FALSE(hidden.has_value());
  EXPECT_EQ(hidden.error().code, ErrorCode::kNotFound);
}

TEST_F(OutlineTest, TheHandleIsTheLastOneSeen) {
  EXPECT_FALSE(walk({.did = kAlice}).handle.has_value());
  ApplyBatch named;
  named.handles.emplace_back(kAlice, "alice.example.com");
  ASSERT_TRUE(store_->apply(named).has_value());
  EXPECT_EQ(walk({.did = kAlice}).handle, "alice.example.com");
}

RecordOp outline_op(const std::string& rkey, nlohmann::json json, std::uint64_t rev) {
  json["$type"] = "app.bulleted.outline";
  json["createdAt"] = "2026-11-30T12:00:00.000Z";
  auto parsed = parse_outline_record(json, kAlice, rkey);
  EXPECT_TRUE(parsed.has_value()) << parsed.error();
  RecordOp op;
  op.collection = Collection::kOutline;
  op.did = kAlice;
  op.rkey = rkey;
  op.rev = testing::rev(rev);
  op.cid = "bafyoutline" + rkey + std::to_string(rev);
  op.outline = std::move(*parsed);
  return op;
}

TEST_F(OutlineTest, TheOutlineRecordInEffectIsTheNearestOrTheForests) {
  EXPECT_FALSE(walk({.did = kAlice}).outline.has_value());
  apply({outline_op("self", {{"title", "Everything"}}, 1),
         outline_op("under-b", {{"title", "Bee"}, {"root", testing::node_uri(kAlice, "b")}}, 1)});
  auto whole = walk({.did = kAlice});
  ASSERT_TRUE(whole.outline.has_value());
  EXPECT_EQ(whole.outline_rkey, "self");
  EXPECT_EQ(whole.outline->title, "Everything");
  EXPECT_EQ(walk({.did = kAlice, .root_rkey = "b"}).outline_rkey, "under-b") << "written here";
  EXPECT_EQ(walk({.did = kAlice, .root_rkey = "d"}).outline_rkey, "under-b") << "inherited";
  EXPECT_EQ(walk({.did = kAlice, .root_rkey = "e"}).outline_rkey, "self") << "outside it";
  // A newer rev replaces, an older one does not; a delete leaves the forest's.
  apply({outline_op("under-b", {{"title", "Bees"}, {"root", testing::node_uri(kAlice, "b")}}, 3)});
  apply({outline_op("under-b", {{"title", "Old"}, {"root", testing::node_uri(kAlice, "b")}}, 2)});
  EXPECT_EQ(walk({.did = kAlice, .root_rkey = "c"}).outline->title, "Bees");
  RecordOp gone = testing::remove(kAlice, "under-b", 4);
  gone.collection = Collection::kOutline;
  apply({gone});
  EXPECT_EQ(walk({.did = kAlice, .root_rkey = "c"}).outline_rkey, "self");
  apply({outline_op("under-b", {{"title", "Replayed"}, {"root", testing::node_uri(kAlice, "b")}},
                    3)});
  EXPECT_EQ(walk({.did = kAlice, .root_rkey = "c"}).outline_rkey, "self") << "the tombstone holds";
}

TEST_F(OutlineTest, MirrorsCommentsAndPoliciesAreKeptByRevWithTombstones) {
  auto kept = [&](Collection collection, const std::string& rkey, nlohmann::json json,
                  std::uint64_t rev) {
    json["$type"] = std::string(collection_name(collection));
    json["createdAt"] = "2026-11-30T12:00:00.000Z";
    auto parsed = parse_kept_record(collection_name(collection), json, kAlice, rkey);
    EXPECT_TRUE(parsed.has_value()) << parsed.error();
    RecordOp op;
    op.collection = collection;
    op.did = kAlice;
    op.rkey = rkey;
    op.rev = testing::rev(rev);
    op.cid = "bafykept" + rkey + std::to_string(rev);
    op.kept = std::move(*parsed);
    return op;
  };
  apply({kept(Collection::kMirror, "m1",
              {{"original", "at://did:plc:bob/app.bulleted.node/3kabc"}, {"sortKey", "a5"}}, 2),
         kept(Collection::kComment, "c1",
              {{"subject", testing::node_uri(kAlice, "a")}, {"text", "hi"}}, 2),
         kept(Collection::kCommentPolicy, "self", {{"allow", nlohmann::json::array()}}, 2)});
  auto records = store_->read().indexed_records(kAlice);
  ASSERT_TRUE(records.has_value());
  std::vector<std::pair<Collection, std::string>> kinds;
  for (const auto& r : *records) {
    if (r.collection != Collection::kNode) kinds.emplace_back(r.collection, r.rkey);
  }
  EXPECT_EQ(kinds, (std::vector<std::pair<Collection, std::string>>{
                       {Collection::kMirror, "m1"},
                       {Collection::kComment, "c1"},
                       {Collection::kCommentPolicy, "self"}}));
  RecordOp gone = testing::remove(kAlice, "c1", 3);
  gone.collection = Collection::kComment;
  apply({gone, kept(Collection::kComment, "c1",
                    {{"subject", testing::node_uri(kAlice, "a")}, {"text", "replayed"}}, 2)});
  auto dump = store_->read().dump();
  ASSERT_TRUE(dump.has_value());
  EXPECT_EQ(dump->find("kept\tdid:plc:alice\tapp.bulleted.comment\tc1"), std::string::npos)
      << "deleted, and the tombstone holds";
  EXPECT_NE(dump->find("record_tombstone\tdid:plc:alice\tapp.bulleted.comment\tc1"),
            std::string::npos);
  EXPECT_NE(dump->find("kept\tdid:plc:alice\tapp.bulleted.mirror\tm1"), std::string::npos);
}

RecordOp mirror_op(const std::string& rkey, nlohmann::json json, std::uint64_t rev) {
  json["$type"] = "app.bulleted.mirror";
  json["createdAt"] = "2026-11-30T12:00:00.000Z";
  if (!json.contains("original")) json["original"] = "at://did:plc:bob/app.bulleted.node/3kabc";
  auto parsed = parse_kept_record(kMirrorCollection, json, kAlice, rkey);
  EXPECT_TRUE(parsed.has_value()) << parsed.error();
  RecordOp op;
  op.collection = Collection::kMirror;
  op.did = kAlice;
  op.rkey = rkey;
  op.rev = testing::rev(rev);
  op.cid = "bafymirror" + rkey + std::to_string(rev);
  op.kept = std::move(*parsed);
  return op;
}

RecordOp mirror_delete(const std::string& rkey, std::uint64_t rev) {
  RecordOp op = testing::remove(kAlice, rkey, rev);
  op.collection = Collection::kMirror;
  return op;
}

TEST_F(OutlineTest, AMirrorIsARowOfItsParentsSiblingGroupInKeyOrder) {
  apply({mirror_op("m", {{"parent", testing::node_uri(kAlice, "a")}, {"sortKey", "a0V"}}, 1)});
  auto all = walk({.did = kAlice, .depth = 5, .limit = 100});
  EXPECT_EQ(rkeys(all), (std::vector<std::string>{"a", "b", "c", "d", "m", "e", "f"}));
  EXPECT_EQ(all.nodes[4].child_count, 0);
  auto m = store_->read().node(kAlice, "m");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->mirror_of, "at://did:plc:bob/app.bulleted.node/3kabc");
  EXPECT_EQ(m->text, "");
  EXPECT_EQ(m->uri(), "at://did:plc:alice/app.bulleted.mirror/m");
  EXPECT_EQ(all.nodes[0].child_count, 3) << "a's children: b, the mirror, e";
  auto page = store_->read().children({.did = kAlice, .parent_rkey = "a"});
  ASSERT_TRUE(page.has_value());
  ASSERT_EQ(page->nodes.size(), 3u);
  EXPECT_EQ(page->nodes[1].rkey, "m");
  EXPECT_EQ(page->nodes[1].mirror_of, m->mirror_of);
  // At the top level, without a parent; a malformed key sorts last.
  apply({mirror_op("top", {{"sortKey", "not a key"}}, 1)});
  EXPECT_EQ(rkeys(walk({.did = kAlice, .depth = 1, .limit = 100})),
            (std::vector<std::string>{"a", "f", "top"}));
}

TEST_F(OutlineTest, AMirrorHasNoChildrenAndNoNoteOfItsOwn) {
  apply({mirror_op("m", {{"sortKey", "a5"}}, 1),
         upsert({.rkey = "under", .parent_rkey = "m", .sort_key = "a0", .text = "hidden"})});
  auto all = walk({.did = kAlice, .depth = 5, .limit = 100});
  EXPECT_EQ(rkeys(all), (std::vector<std::string>{"a", "b", "c", "d", "e", "f", "m"}))
      << "what names a mirror's key as its parent is not walked into";
  EXPECT_EQ(all.nodes.back().child_count, 0);
  RecordOp note;
  note.collection = Collection::kNote;
  note.did = kAlice;
  note.rkey = "m";
  note.rev = testing::rev(2);
  note.cid = "bafynote";
  note.note = make_note(kAlice, "m", "not a mirror's", "2026-11-30T12:00:00.000Z");
  apply({note});
  auto row = store_->read().node(kAlice, "m");
  ASSERT_TRUE(row.has_value());
  EXPECT_FALSE(row->note.has_value());
}

TEST_F(OutlineTest, AMirrorsRowFollowsItsRecordByRevAndLeavesWithItsDelete) {
  apply({mirror_op("m", {{"parent", testing::node_uri(kAlice, "a")}, {"sortKey", "a0V"}}, 2)});
  apply({mirror_op("m", {{"sortKey", "a9"}}, 1)});  // older: ignored
  EXPECT_EQ(walk({.did = kAlice, .depth = 1, .limit = 100}).nodes[0].child_count, 3);
  apply({mirror_op("m", {{"sortKey", "a9"}}, 3)});  // moved to the top level
  EXPECT_EQ(rkeys(walk({.did = kAlice, .depth = 1, .limit = 100})),
            (std::vector<std::string>{"a", "f", "m"}));
  auto before = store_->read().changes(kAlice, "0", 100, kUnboundedBytes);
  ASSERT_TRUE(before.has_value());
  apply({mirror_delete("m", 4), mirror_op("m", {{"sortKey", "a9"}}, 3)});
  EXPECT_EQ(rkeys(walk({.did = kAlice, .depth = 1, .limit = 100})),
            (std::vector<std::string>{"a", "f"}))
      << "deleted, and the replay stays out";
  auto after = store_->read().changes(kAlice, before->cursor, 100, kUnboundedBytes);
  ASSERT_TRUE(after.has_value());
  ASSERT_EQ(after->changes.size(), 1u);
  EXPECT_TRUE(after->changes[0].deleted);
  EXPECT_EQ(after->changes[0].rkey, "m");
}

TEST_F(OutlineTest, ANodeAndAMirrorAtOneKeyAreTheNodesRow) {
  // A mirror at a node's key never takes its row.
  apply({mirror_op("b", {{"sortKey", "a9"}}, 5)});
  auto b = store_->read().node(kAlice, "b");
  ASSERT_TRUE(b.has_value());
  EXPECT_FALSE(b->mirror_of.has_value());
  EXPECT_EQ(b->text, "text");
  // A node where a mirror was takes the row, whatever the revs; the
  // mirror's delete then leaves the node, and the node's delete a mirror.
  apply({mirror_op("k", {{"sortKey", "a9"}}, 5)});
  apply({upsert({.rkey = "k", .sort_key = "a8", .text = "a node", .rev = 2})});
  auto k = store_->read().node(kAlice, "k");
  ASSERT_TRUE(k.has_value());
  EXPECT_FALSE(k->mirror_of.has_value());
  EXPECT_EQ(k->text, "a node");
  apply({mirror_delete("k", 6)});
  EXPECT_TRUE(store_->read().node(kAlice, "k").has_value());
  apply({mirror_op("j", {{"sortKey", "a9"}}, 5), testing::remove(kAlice, "j", 6)});
  auto j = store_->read().node(kAlice, "j");
  ASSERT_TRUE(j.has_value());
  EXPECT_TRUE(j->mirror_of.has_value());
}

TEST(KeptRecordTest, ThePublishedRequiredFieldsAndTheirTypes) {
  const nlohmann::json mirror = {{"$type", "app.bulleted.mirror"},
                                 {"original", "at://did:plc:bob/app.bulleted.node/3kabc"},
                                 {"sortKey", "a0"},
                                 {"createdAt", "2026-11-30T12:00:00.000Z"}};
  EXPECT_TRUE(parse_kept_record(kMirrorCollection, mirror, kAlice, "3kmir").has_value());
  auto post = mirror;
  post["original"] = "at://did:plc:bob/app.bsky.feed.post/3kabc";
  EXPECT_FALSE(parse_kept_record(kMirrorCollection, post, kAlice, "3kmir").has_value());
  auto unkeyed = mirror;
  unkeyed.erase("sortKey");
  EXPECT_FALSE(parse_kept_record(kMirrorCollection, unkeyed, kAlice, "3kmir").has_value());
  const nlohmann::json policy = {{"$type", "app.bulleted.commentPolicy"},
                                 {"allow", nlohmann::json::array()},
                                 {"createdAt", "2026-11-30T12:00:00.000Z"}};
  EXPECT_TRUE(parse_kept_record(kCommentPolicyCollection, policy, kAlice, "self").has_value());
  EXPECT_FALSE(parse_kept_record(kCommentPolicyCollection, policy, kAlice, "3kpol").has_value())
      << "a policy of a subtree names its root";
  const nlohmann::json comment = {{"$type", "app.bulleted.comment"},
                                  {"subject", "at://did:plc:bob/app.bulleted.node/3kabc"},
                                  {"createdAt", "2026-11-30T12:00:00.000Z"}};
  EXPECT_FALSE(parse_kept_record(kCommentCollection, comment, kAlice, "3kcom").has_value())
      << "no text";
}

TEST(OutlineRecordTest, RootExactlyWhenTheKeyIsNotSelfAndInTheSameRepo) {
  const nlohmann::json base = {{"$type", "app.bulleted.outline"},
                               {"createdAt", "2026-11-30T12:00:00.000Z"}};
  EXPECT_TRUE(parse_outline_record(base, kAlice, "self").has_value());
  EXPECT_FALSE(parse_outline_record(base, kAlice, "3kabc").has_value()) << "no root";
  auto rooted = base;
  rooted["root"] = "at://did:plc:alice/app.bulleted.node/3kabc";
  EXPECT_FALSE(parse_outline_record(rooted, kAlice, "self").has_value()) << "self with a root";
  auto parsed = parse_outline_record(rooted, kAlice, "3kabd");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->root_rkey, "3kabc");
  rooted["root"] = "at://did:plc:bob/app.bulleted.node/3kabc";
  EXPECT_FALSE(parse_outline_record(rooted, kAlice, "3kabd").has_value()) << "another repo's";
  auto titled = base;
  titled["title"] = std::string(kMaxOutlineTitleBytes + 1, 'x');
  EXPECT_FALSE(parse_outline_record(titled, kAlice, "self").has_value()) << "past the cap";
  titled["title"] = "Fine";
  titled["image"] = {{"$type", "blob"},
                     {"ref", {{"$link", "bafkreiexample"}}},
                     {"mimeType", "image/png"},
                     {"size", 100}};
  auto imaged = parse_outline_record(titled, kAlice, "self");
  ASSERT_TRUE(imaged.has_value());
  EXPECT_EQ(imaged->image_cid, "bafkreiexample");
}

}  // namespace
}  // namespace bulleted::schema
