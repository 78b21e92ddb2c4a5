// Notes as records of their own (app.bulleted.note at the node's key): the
// index attaches each to its node whatever order they arrive in, by rev,
// with tombstones, and falls back to an earlier build's inline note.
#include <gtest/gtest.h>

#include "schema/note_record.hpp"
#include "schema/search_query.hpp"
#include "schema/store.hpp"
#include "tests/support/index_fixture.hpp"
#include "tests/support/store_fixtures.hpp"
#include "tests/support/store_internals.hpp"

namespace bulleted::schema {
namespace {

using testing::NodeSpec;
using testing::upsert;

constexpr const char* kAlice = "did:plc:alice";

RecordOp note_op(const std::string& rkey, const std::string& text, std::uint64_t rev,
                 const std::string& did = kAlice) {
  RecordOp op;
  op.kind = OpKind::kCreate;
  op.collection = Collection::kNote;
  op.did = did;
  op.rkey = rkey;
  op.rev = testing::rev(rev);
  op.cid = "bafynote" + rkey + "-" + std::to_string(rev);
  op.note = make_note(did, rkey, text, "2026-11-30T12:00:00.000Z");
  return op;
}

RecordOp note_delete(const std::string& rkey, std::uint64_t rev) {
  RecordOp op = testing::remove(kAlice, rkey, rev);
  op.collection = Collection::kNote;
  return op;
}

class NoteStoreTest : public testing::IndexTest {
 protected:
  std::optional<std::string> served(const std::string& rkey) {
    auto row = store_->read().node(kAlice, rkey);
    EXPECT_TRUE(row.has_value()) << row.error().message;
    return row ? row->note : std::nullopt;
  }
  std::int64_t change_seq(const std::string& rkey) {
    auto row = store_->read().node(kAlice, rkey);
    EXPECT_TRUE(row.has_value());
    return row ? row->change_seq : -1;
  }
  std::size_t found(std::string_view q) {
    auto query = parse_search_query(q);
    EXPECT_TRUE(query.has_value());
    SearchRequest request;
    request.did = kAlice;
    request.q = std::string(q);
    request.query = *query;
    auto page = store_->read().search(request);
    EXPECT_TRUE(page.has_value()) << page.error().message;
    return page ? page->results.size() : 0;
  }
};

TEST_F(NoteStoreTest, ANoteIsServedAsItsNodesNoteAndSearchedAndChangesTheNode) {
  apply({upsert({.rkey = "a", .rev = 1})});
  const auto before = change_seq("a");
  EXPECT_EQ(served("a"), std::nullopt);
  apply({note_op("a", "remember the lighthouse", 2)});
  EXPECT_EQ(served("a"), "remember the lighthouse");
  EXPECT_GT(change_seq("a"), before) << "a change of the node, for getChanges and streams";
  EXPECT_EQ(found("lighthouse"), 1u);
  apply({note_op("a", "the harbour instead", 3)});
  EXPECT_EQ(served("a"), "the harbour instead");
  EXPECT_EQ(found("lighthouse"), 0u);
  EXPECT_EQ(found("harbour"), 1u);
  auto report = store_->integrity_report();
  ASSERT_TRUE(report.has_value());
  EXPECT_TRUE(report->search_index_ok);
  EXPECT_EQ(report->notes, 1);
  EXPECT_EQ(report->wrong_notes, 0);
  EXPECT_TRUE(report->ok());
}

TEST_F(NoteStoreTest, ANoteBeforeItsNodeIsAttachedWhenTheNodeComes) {
  apply({note_op("a", "early", 1)});
  EXPECT_FALSE(store_->read().node(kAlice, "a").has_value());
  auto waiting = store_->integrity_report();
  ASSERT_TRUE(waiting.has_value());
  EXPECT_EQ(waiting->notes_waiting, 1) << "check counts a note whose node has not come";
  apply({upsert({.rkey = "a", .rev = 2})});
  EXPECT_EQ(served("a"), "early");
  EXPECT_EQ(found("early"), 1u);
}

TEST_F(NoteStoreTest, RevsDecideAndADeleteLeavesATombstone) {
  apply({upsert({.rkey = "a", .rev = 1}), note_op("a", "newer", 5)});
  apply({note_op("a", "older", 4)});
  EXPECT_EQ(served("a"), "newer") << "an older rev never replaces a newer one";
  apply({note_delete("a", 6)});
  EXPECT_EQ(served("a"), std::nullopt);
  EXPECT_EQ(found("newer"), 0u);
  apply({note_op("a", "replayed", 5)});
  EXPECT_EQ(served("a"), std::nullopt) << "the tombstone holds against a replay";
  apply({note_op("a", "written again", 7)});
  EXPECT_EQ(served("a"), "written again");
}

TEST_F(NoteStoreTest, AnEarlierBuildsInlineNoteIsServedUntilANoteRecordComesAndAfterItGoes) {
  RecordOp node = upsert({.rkey = "a", .rev = 1});
  node.record->note = "inline";
  apply({node});
  EXPECT_EQ(served("a"), "inline");
  apply({note_op("a", "record", 2)});
  EXPECT_EQ(served("a"), "record") << "the note record wins";
  // The node written again (a move) keeps the note record's text.
  RecordOp moved = upsert({.rkey = "a", .sort_key = "a5", .rev = 3});
  moved.kind = OpKind::kUpdate;
  moved.record->note = "inline";
  apply({moved});
  EXPECT_EQ(served("a"), "record");
  apply({note_delete("a", 4)});
  EXPECT_EQ(served("a"), "inline");
}

TEST_F(NoteStoreTest, ANodesDeleteLeavesItsNoteRecordAndTheNodesReturnFindsIt) {
  apply({upsert({.rkey = "a", .rev = 1}), note_op("a", "kept", 2)});
  apply({testing::remove(kAlice, "a", 3)});
  EXPECT_FALSE(store_->read().node(kAlice, "a").has_value());
  auto records = store_->read().indexed_records(kAlice);
  ASSERT_TRUE(records.has_value());
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ(records->front().collection, Collection::kNote);
  apply({upsert({.rkey = "a", .rev = 4})});
  EXPECT_EQ(served("a"), "kept");
}

TEST_F(NoteStoreTest, ANoteNeverReachesAnotherReposNode) {
  apply({upsert({.did = "did:plc:bob", .rkey = "a", .rev = 1}), note_op("a", "alice's", 2)});
  auto bob = store_->read().node("did:plc:bob", "a");
  ASSERT_TRUE(bob.has_value());
  EXPECT_EQ(bob->note, std::nullopt);
}

TEST_F(NoteStoreTest, ADeletedRepoTakesItsNotesAndTombstones) {
  apply({upsert({.rkey = "a", .rev = 1}), note_op("a", "gone", 2), note_op("b", "b's", 2),
         note_delete("c", 3)});
  ApplyBatch batch;
  batch.statuses.emplace_back(kAlice, RepoStatus::kDeleted);
  ASSERT_TRUE(store_->apply(batch).has_value());
  auto dump = store_->read().dump();
  ASSERT_TRUE(dump.has_value());
  EXPECT_EQ(dump->find("note\t"), std::string::npos) << *dump;
  EXPECT_EQ(dump->find("record_tombstone\t"), std::string::npos) << *dump;
}

TEST_F(NoteStoreTest, AnIndexOfSchema14KeepsItsInlineNotesAndItsReposAreReadAgainForTheirNotes) {
  RecordOp node = upsert({.rkey = "a", .rev = 1});
  node.record->note = "written inline by an earlier build";
  ApplyBatch batch;
  batch.ops = {node, upsert({.did = "did:plc:bob", .rkey = "b", .rev = 1})};
  batch.repo_revs = {{kAlice, testing::rev(1)}, {"did:plc:bob", testing::rev(1)}};
  ASSERT_TRUE(store_->apply(batch).has_value());
  ASSERT_TRUE(testing::rewind_schema(*store_, 14).has_value());
  reopen("index.db");
  EXPECT_EQ(served("a"), "written inline by an earlier build");
  auto marked = store_->want_resync_for_new_collections();
  ASSERT_TRUE(marked.has_value()) << marked.error().message;
  EXPECT_EQ(*marked, 2);
  auto unsynced = store_->read().unsynced_repos();
  ASSERT_TRUE(unsynced.has_value());
  EXPECT_EQ(unsynced->size(), 2u);
  // Once: a restart marks nothing more.
  marked = store_->want_resync_for_new_collections();
  ASSERT_TRUE(marked.has_value());
  EXPECT_EQ(*marked, 0);
  // Repos first seen now are read for everything.
  ApplyBatch carol;
  carol.ops = {upsert({.did = "did:plc:carol", .rkey = "c", .rev = 1})};
  carol.repo_revs = {{"did:plc:carol", testing::rev(1)}};
  ASSERT_TRUE(store_->apply(carol).has_value());
  marked = store_->want_resync_for_new_collections();
  ASSERT_TRUE(marked.has_value());
  EXPECT_EQ(*marked, 0);
}

TEST(NoteRecordTest, TheSubjectMustNameTheNodeAtTheNotesOwnAddress) {
  nlohmann::json json = {{"$type", "app.bulleted.note"},
                         {"subject", "at://did:plc:alice/app.bulleted.node/3kabc"},
                         {"text", "t"},
                         {"createdAt", "2026-11-30T12:00:00.000Z"}};
  EXPECT_TRUE(parse_note_record(json, "did:plc:alice", "3kabc").has_value());
  for (const auto& [did, rkey] : {std::pair{"did:plc:alice", "3kabd"}, {"did:plc:bob", "3kabc"}}) {
    auto parsed = parse_note_record(json, did, rkey);
    ASSERT_FALSE(parsed.has_value()) << did << " " << rkey;
    EXPECT_NE(parsed.error().find("subject"), std::string::npos);
  }
  json["subject"] = "at://did:plc:alice/app.bulleted.note/3kabc";
  EXPECT_FALSE(parse_note_record(json, "did:plc:alice", "3kabc").has_value());
  json.erase("subject");
  EXPECT_FALSE(parse_note_record(json, "did:plc:alice", "3kabc").has_value());
}

TEST(NoteRecordTest, AsWrittenItHasThePublishedFields) {
  const NoteRecord note = make_note("did:plc:alice", "3kabc", "body", "2026-11-30T12:00:00.000Z");
  const auto json = to_json(note);
  EXPECT_EQ(json.at("$type"), "app.bulleted.note");
  EXPECT_EQ(json.at("subject"), "at://did:plc:alice/app.bulleted.node/3kabc");
  EXPECT_EQ(json.at("text"), "body");
  EXPECT_EQ(json.at("createdAt"), "2026-11-30T12:00:00.000Z");
  EXPECT_FALSE(json.contains("facets"));
  auto back = parse_note_record(json, "did:plc:alice", "3kabc");
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->text, "body");
}

}  // namespace
}  // namespace bulleted::schema
