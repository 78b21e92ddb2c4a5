// From repo data to store ops: the ops of a commit on the collections the
// index keeps (app.bulleted.node, and app.bulleted.note at a node's key),
// and the records of a whole repo (a getRepo CAR) diffed against the index.
//
// A record that fails validation becomes a delete at its rev (the record in
// the repo is not a valid node or note, so no older version may be shown),
// and its reason is reported for logs and counters. A note whose subject is
// not the node at its own address is such a record.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "firehose/frame.hpp"
#include "firehose/verify.hpp"
#include "schema/error.hpp"
#include "schema/node_record.hpp"
#include "schema/store.hpp"

namespace bulleted::firehose {

// A record block (DAG-CBOR) as a node record; the error is a reason.
std::expected<schema::NodeRecord, std::string> parse_record_block(
    std::string_view block, DecodePath path = DecodePath::kBest);

// The DAG-CBOR block of a node record, written from its fields in canonical
// key order (note, text, $type, facets, parent, sortKey, completed,
// createdAt: shorter keys first, then bytewise): the bytes
// parse_record_block reads back, and what the record's CID is of. Only its
// facets, checked already, pass through the data model; kInvalidRequest
// if they do not fit it.
Result<std::string> encode_record_block(const schema::NodeRecord& record);

// A note record block (DAG-CBOR) found at `did`/`rkey`, and the block of a
// note record as written (canonical key order), what its CID is of.
std::expected<schema::NoteRecord, std::string> parse_note_block(std::string_view block,
                                                                std::string_view did,
                                                                std::string_view rkey);
Result<std::string> encode_note_block(const schema::NoteRecord& note);
// The block of any other record this app view writes (a mirror), from its
// JSON form.
Result<std::string> encode_json_block(const nlohmann::json& json);
// An outline record block found at `did`/`rkey` (through the data model's
// JSON form: a blob's ref as {"$link"}).
// A mirror, comment or comment policy block (schema::parse_kept_record).
std::expected<nlohmann::json, std::string> parse_kept_block(schema::Collection collection,
                                                            std::string_view block,
                                                            std::string_view did,
                                                            std::string_view rkey);
std::expected<schema::OutlineRecord, std::string> parse_outline_block(std::string_view block,
                                                                      std::string_view did,
                                                                      std::string_view rkey);

struct CommitRecords {
  std::vector<schema::RecordOp> ops;
  std::vector<std::string> rejected;  // one reason per rejected record
  bool read_car = false;              // false when no op touched a node or note
  // Set when the commit cannot be applied as it stands (a record block that
  // should be present is not): the repo must be re-synced.
  std::optional<std::string> gap;
  // The commit checked against its blocks (all but the signature); set
  // whenever the CAR was read.
  std::optional<Verified<SignedCommit>> proof;
};

// The store ops of a commit's node and note ops, in order. kCorrupt when the
// CAR cannot be read.
Result<CommitRecords> commit_records(const CommitEvent& commit);

// The proof of a commit's CAR (check_commit_proof), for a commit whose
// records were not read ahead.
Verified<SignedCommit> check_commit_blocks(const CommitEvent& commit);

// Reads a commit's records and checks its proof now, keeping both in the
// event (and dropping its CAR bytes), so that the thread that indexes it only
// checks the signature and applies: the consumer calls this on the socket's
// thread. A commit with no node or note op keeps its bytes (its repo may
// be one the index tracks, whose every commit is verified; the indexing
// thread knows). Other events are left as they are.
void predecode_records(FirehoseEvent& event);
void predecode_records(CommitEvent& commit);

struct RepoSnapshot {
  std::string did;
  std::string rev;
  std::string commit_cid;  // the root: the commit the snapshot is of
  SignedCommit commit;     // its signature is checked by whoever has the key
  struct Record {
    std::string rkey;
    std::string cid;
    std::optional<schema::NodeRecord> record;  // a node; nullopt: rejected
    schema::Collection collection = schema::Collection::kNode;
    std::optional<schema::NoteRecord> note;        // a note; nullopt: rejected
    std::optional<schema::OutlineRecord> outline;  // an outline record; nullopt: rejected
    std::optional<nlohmann::json> kept;            // a kept record; nullopt: rejected
    bool valid() const { return record || note || outline || kept; }
  };
  std::vector<Record> records;
  std::vector<std::string> rejected;
};

// Reads a whole repo (com.atproto.sync.getRepo): the commit named by the root,
// an MST walk through blocks that hash to their CIDs, and every
// app.bulleted.node and app.bulleted.note record. The commit must be `expected_did`'s.
// More records than `max_records` is kPayloadTooLarge.
Result<RepoSnapshot> read_repo(std::string_view car_bytes, std::string_view expected_did,
                               std::size_t max_records = 10'000'000);

// The ops that turn the index's view of a repo into `snapshot`: creates and
// updates for records that are new or changed, deletes for records the repo
// no longer has. All at the snapshot's rev, so anything newer wins.
std::vector<schema::RecordOp> resync_ops(const RepoSnapshot& snapshot,
                                         const std::vector<schema::IndexedRecord>& indexed);

}  // namespace bulleted::firehose
