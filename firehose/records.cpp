#include "firehose/records.hpp"

#include <array>
#include <cstring>
#include <map>
#include <set>

#include "firehose/car.hpp"
#include "firehose/cbor_reader.hpp"
#include "firehose/dag_cbor.hpp"
#include "firehose/mst.hpp"
#include "schema/syntax.hpp"

namespace bulleted::firehose {
namespace {

schema::RecordOp delete_op(const std::string& did, const std::string& rkey, const std::string& rev,
                           schema::Collection collection = schema::Collection::kNode) {
  schema::RecordOp op;
  op.kind = schema::OpKind::kDelete;
  op.collection = collection;
  op.did = did;
  op.rkey = rkey;
  op.rev = rev;
  return op;
}

}  // namespace

namespace {

// A decoded record as the record validator's field source.
class DagRecordFields final : public schema::RecordFields {
 public:
  explicit DagRecordFields(const DagValue& value) : value_(value) {}
  bool is_object() const override { return value_.as_map() != nullptr; }
  schema::RecordField get(std::string_view name) const override {
    using Kind = schema::RecordField::Kind;
    const DagValue* field = value_.find(name);
    if (field == nullptr) return {};
    if (field->is_null()) return {Kind::kNull};
    if (const bool* b = field->as_bool()) return {Kind::kBool, *b};
    if (const std::string* s = field->as_text()) return {Kind::kString, false, *s};
    if (field->as_array() != nullptr) return {Kind::kArray};
    return {Kind::kOther};
  }
  nlohmann::json facets_json() const override { return to_json(*value_.find("facets")); }
  nlohmann::json rest_facets_json() const override {
    return to_json(*value_.find(schema::kTextRestFacetsField));
  }

 private:
  const DagValue& value_;
};

// A record block read in place: the top-level map's fields as views into
// the block, nothing copied, nested values checked (and facets kept).
// read() takes only a plain map of at most 16 fields; anything else (a blob
// at the top, a key the JSON form reserves, a rule broken) is left to the
// generic decoder, which gives the same answer or the reason.
class BlockRecordFields final : public schema::RecordFields {
 public:
  bool read(std::string_view block) {
    using Kind = schema::RecordField::Kind;
    CborReader reader(block);
    CborItem item;
    if (!reader.next(item) || item.kind != CborKind::kMap || item.size > fields_.size()) {
      return false;
    }
    const std::size_t entries = item.size;
    std::string_view previous;
    for (std::size_t i = 0; i < entries; ++i) {
      std::string_view key;
      if (!read_map_entry(reader, i, previous, key, item) || text_is(key, "$link") ||
          text_is(key, "$bytes")) {
        return false;
      }
      Field& field = fields_[count_++];
      field.key = key.data();
      field.key_size = key.size();
      field.text = item.data.data();
      field.text_size = item.data.size();
      field.boolean = item.integer != 0;
      switch (item.kind) {
        case CborKind::kText:
          field.kind = Kind::kString;
          break;
        case CborKind::kBool:
          field.kind = Kind::kBool;
          break;
        case CborKind::kNull:
          field.kind = Kind::kNull;
          break;
        case CborKind::kArray:
        case CborKind::kMap: {
          auto value = read_dag_value(reader, item, 1);
          if (!value) return false;
          field.kind = item.kind == CborKind::kArray ? Kind::kArray : Kind::kOther;
          if (text_is(key, "facets")) facets_ = std::move(*value);
          if (key == schema::kTextRestFacetsField) rest_facets_ = std::move(*value);
          break;
        }
        default:
          field.kind = Kind::kOther;
      }
      if (text_is(key, "$type") &&
          (field.kind != Kind::kString || item.data.empty() || text_is(item.data, "blob"))) {
        return false;
      }
    }
    return reader.at_end();
  }

  bool is_object() const override { return true; }
  schema::RecordField get(std::string_view name) const override {
    for (std::size_t i = 0; i < count_; ++i) {
      const Field& field = fields_[i];
      if (field.key_size != name.size() || std::memcmp(field.key, name.data(), name.size()) != 0) {
        continue;
      }
      const bool text = field.kind == schema::RecordField::Kind::kString;
      return {field.kind, field.boolean,
              text ? std::string_view(field.text, field.text_size) : std::string_view()};
    }
    return {};
  }
  nlohmann::json facets_json() const override { return to_json(facets_); }
  nlohmann::json rest_facets_json() const override { return to_json(rest_facets_); }

 private:
  // Plain members only, left uninitialized until read: no clearing of 16
  // fields for every record.
  struct Field {
    const char* key;
    const char* text;
    std::size_t key_size;
    std::size_t text_size;
    schema::RecordField::Kind kind;
    bool boolean;
  };
  std::array<Field, 16> fields_;
  std::size_t count_ = 0;
  DagValue facets_;
  DagValue rest_facets_;
};

}  // namespace

std::expected<schema::NodeRecord, std::string> parse_record_block(std::string_view block,
                                                                  DecodePath path) {
  if (path != DecodePath::kGeneric) {
    if (BlockRecordFields fields; fields.read(block)) return schema::parse_node_record(fields);
    if (path == DecodePath::kInPlace) return std::unexpected("not read in place");
  }
  auto value = decode_dag_cbor(block);
  if (!value) return std::unexpected(value.error().message);
  return schema::parse_node_record(DagRecordFields(*value));
}

Result<std::string> encode_record_block(const schema::NodeRecord& record) {
  constexpr unsigned kText = 3;
  constexpr unsigned kMap = 5;
  const schema::WrittenText written = schema::written_text(record.text, record.facets);
  // The data model's reader takes a record (an object): facets go in one.
  auto dag_of = [](const nlohmann::json& facets) -> Result<std::optional<DagValue>> {
    if (!facets.is_array()) return std::optional<DagValue>();
    auto value = from_json(nlohmann::json{{"facets", facets}});
    if (!value) return std::unexpected(value.error());
    return std::optional<DagValue>(*value->find("facets"));
  };
  auto facets = dag_of(written.facets);
  if (!facets) return std::unexpected(facets.error());
  auto rest_facets = dag_of(written.rest_facets);
  if (!rest_facets) return std::unexpected(rest_facets.error());
  std::string out;
  auto text = [&out](std::string_view value) {
    append_cbor_head(out, kText, value.size());
    out += value;
  };
  const auto completed_at = record.completed_since();
  const std::size_t entries =
      3 + (record.note ? 1 : 0) + (*facets ? 1 : 0) + (record.layout ? 1 : 0) +
      (record.parent ? 1 : 0) + (record.display ? 1 : 0) + (record.sort_key ? 1 : 0) +
      (completed_at ? 1 : 0) + (written.rest.empty() ? 0 : 1) + (*rest_facets ? 1 : 0);
  append_cbor_head(out, kMap, entries);
  // DAG-CBOR's order: shorter keys first, then byte order.
  if (record.note) {
    text("note");
    text(*record.note);
  }
  text("text");
  text(written.text);
  text("$type");
  text(schema::kNodeCollection);
  if (*facets) {
    text("facets");
    append_dag_cbor(out, **facets);
  }
  if (record.layout) {
    text("layout");
    text(*record.layout);
  }
  if (record.parent) {
    text("parent");
    text(*record.parent);
  }
  if (record.display) {
    text("display");
    text(*record.display);
  }
  if (record.sort_key) {
    text("sortKey");
    text(*record.sort_key);
  }
  if (!written.rest.empty()) {
    text(schema::kTextRestField);
    text(written.rest);
  }
  text("createdAt");
  text(record.created_at);
  if (completed_at) {
    text("completedAt");
    text(*completed_at);
  }
  if (*rest_facets) {
    text(schema::kTextRestFacetsField);
    append_dag_cbor(out, **rest_facets);
  }
  return out;
}

std::expected<schema::NoteRecord, std::string> parse_note_block(std::string_view block,
                                                                std::string_view did,
                                                                std::string_view rkey) {
  if (BlockRecordFields fields; fields.read(block))
    return schema::parse_note_record(fields, did, rkey);
  auto value = decode_dag_cbor(block);
  if (!value) return std::unexpected(value.error().message);
  return schema::parse_note_record(DagRecordFields(*value), did, rkey);
}

std::expected<schema::OutlineRecord, std::string> parse_outline_block(std::string_view block,
                                                                      std::string_view did,
                                                                      std::string_view rkey) {
  auto value = decode_dag_cbor(block);
  if (!value) return std::unexpected(value.error().message);
  return schema::parse_outline_record(to_json(*value), did, rkey);
}

std::expected<nlohmann::json, std::string> parse_kept_block(schema::Collection collection,
                                                            std::string_view block,
                                                            std::string_view did,
                                                            std::string_view rkey) {
  auto value = decode_dag_cbor(block);
  if (!value) return std::unexpected(value.error().message);
  return schema::parse_kept_record(schema::collection_name(collection), to_json(*value), did, rkey);
}

Result<std::string> encode_note_block(const schema::NoteRecord& note) {
  return encode_json_block(schema::to_json(note));
}

Result<std::string> encode_json_block(const nlohmann::json& json) {
  auto value = from_json(json);
  if (!value) return std::unexpected(value.error());
  return encode_dag_cbor(*value);
}

Result<CommitRecords> commit_records(const CommitEvent& commit) {
  CommitRecords out;
  bool any = false;
  for (const auto& op : commit.ops) any = any || schema::parse_collection(op.collection);
  if (!any) return out;
  out.read_car = true;
  auto car = CarFile::parse(commit.blocks);
  if (!car) return std::unexpected(car.error());
  out.proof = check_commit_proof(commit, *car);
  out.ops.reserve(commit.ops.size());
  for (std::size_t i = 0; i < commit.ops.size(); ++i) {
    const CommitOp& op = commit.ops[i];
    const auto collection = schema::parse_collection(op.collection);
    if (!collection) continue;
    if (!schema::RecordKey::parse(op.rkey)) {
      out.rejected.push_back("record key '" + op.rkey + "' is not valid");
      continue;
    }
    if (op.action == "delete") {
      out.ops.push_back(delete_op(commit.repo, op.rkey, commit.rev, *collection));
      continue;
    }
    if (!op.cid) {
      out.rejected.push_back(op.action + " of " + op.rkey + " has no cid");
      continue;
    }
    auto block = car->block(*op.cid);
    if (!block) {
      // Legitimate only when a later op of this commit writes or deletes the
      // same path: the CAR carries the final state only.
      bool superseded = false;
      for (std::size_t k = i + 1; k < commit.ops.size(); ++k) {
        superseded = superseded ||
                     (commit.ops[k].collection == op.collection && commit.ops[k].rkey == op.rkey);
      }
      if (superseded) continue;
      out.gap = "record block " + op.cid->str() + " of " + op.rkey + " is missing";
      continue;
    }
    if (*collection != schema::Collection::kNode) {
      // A note, an outline record or a kept one: its op, or (invalid) a
      // delete at its rev with the reason.
      schema::RecordOp upsert = delete_op(commit.repo, op.rkey, commit.rev, *collection);
      std::string problem;
      if (*collection == schema::Collection::kNote) {
        auto note = parse_note_block(*block, commit.repo, op.rkey);
        if (note) upsert.note = std::move(*note);
        if (!note) problem = note.error();
      } else if (*collection == schema::Collection::kOutline) {
        auto outline = parse_outline_block(*block, commit.repo, op.rkey);
        if (outline) upsert.outline = std::move(*outline);
        if (!outline) problem = outline.error();
      } else {
        auto kept = parse_kept_block(*collection, *block, commit.repo, op.rkey);
        if (kept) upsert.kept = std::move(*kept);
        if (!kept) problem = kept.error();
      }
      if (problem.empty()) {
        upsert.kind = op.action == "create" ? schema::OpKind::kCreate : schema::OpKind::kUpdate;
        upsert.cid = op.cid->str();
      } else {
        out.rejected.push_back(op.collection + " " + op.rkey + ": " + problem);
      }
      out.ops.push_back(std::move(upsert));
      continue;
    }
    auto record = parse_record_block(*block);
    if (!record) {
      out.rejected.push_back(op.rkey + ": " + record.error());
      out.ops.push_back(delete_op(commit.repo, op.rkey, commit.rev));
      continue;
    }
    schema::RecordOp upsert;
    upsert.kind = op.action == "create" ? schema::OpKind::kCreate : schema::OpKind::kUpdate;
    upsert.did = commit.repo;
    upsert.rkey = op.rkey;
    upsert.rev = commit.rev;
    upsert.cid = op.cid->str();
    upsert.record = std::move(*record);
    out.ops.push_back(std::move(upsert));
  }
  return out;
}

Verified<SignedCommit> check_commit_blocks(const CommitEvent& commit) {
  auto car = CarFile::parse(commit.blocks);
  if (!car) return std::unexpected(VerifyFailure{VerifyReason::kCommit, car.error().message});
  return check_commit_proof(commit, *car);
}

void predecode_records(CommitEvent& commit) {
  if (commit.records) return;
  commit.records = std::make_shared<Result<CommitRecords>>(commit_records(commit));
  if (*commit.records && (*commit.records)->read_car) std::string().swap(commit.blocks);
}

void predecode_records(FirehoseEvent& event) {
  if (auto* commit = std::get_if<CommitEvent>(&event)) predecode_records(*commit);
}

Result<RepoSnapshot> read_repo(std::string_view car_bytes, std::string_view expected_did,
                               std::size_t max_records) {
  auto car = CarFile::parse(car_bytes);
  if (!car) return std::unexpected(car.error());
  if (car->roots().size() != 1) return fail(ErrorCode::kCorrupt, "a repo CAR has one root");
  auto commit_block = car->block(car->roots()[0]);
  if (!commit_block) return std::unexpected(commit_block.error());
  auto commit = read_signed_commit(*commit_block);
  if (!commit) return fail(ErrorCode::kCorrupt, commit.error().message);
  if (commit->did != expected_did) {
    return fail(ErrorCode::kCorrupt,
                "the repo belongs to " + commit->did + ", not " + std::string(expected_did));
  }
  auto entries = walk_mst(*car, commit->data, {.max_entries = max_records});
  if (!entries) return std::unexpected(entries.error());
  RepoSnapshot snapshot{std::string(expected_did), commit->rev, car->roots()[0].str(),
                        std::move(*commit),        {},          {}};
  for (const auto& entry : *entries) {
    const std::size_t slash = entry.key.find('/');
    if (slash == std::string::npos) continue;
    const auto collection = schema::parse_collection(std::string_view(entry.key).substr(0, slash));
    if (!collection) continue;
    RepoSnapshot::Record record{entry.key.substr(slash + 1),
                                entry.value.str(),
                                std::nullopt,
                                *collection,
                                std::nullopt,
                                std::nullopt,
                                std::nullopt};
    if (!schema::RecordKey::parse(record.rkey)) {
      snapshot.rejected.push_back("record key '" + record.rkey + "' is not valid");
      continue;
    }
    auto block = car->block(entry.value);
    if (!block) return std::unexpected(block.error());
    if (*collection != schema::Collection::kNode && *collection != schema::Collection::kNote &&
        *collection != schema::Collection::kOutline) {
      if (auto kept = parse_kept_block(*collection, *block, expected_did, record.rkey)) {
        record.kept = std::move(*kept);
      } else {
        snapshot.rejected.push_back(std::string(schema::collection_name(*collection)) + " " +
                                    record.rkey + ": " + kept.error());
      }
    } else if (*collection == schema::Collection::kOutline) {
      if (auto outline = parse_outline_block(*block, expected_did, record.rkey)) {
        record.outline = std::move(*outline);
      } else {
        snapshot.rejected.push_back("outline " + record.rkey + ": " + outline.error());
      }
    } else if (*collection == schema::Collection::kNote) {
      if (auto note = parse_note_block(*block, expected_did, record.rkey)) {
        record.note = std::move(*note);
      } else {
        snapshot.rejected.push_back("note " + record.rkey + ": " + note.error());
      }
    } else if (auto parsed = parse_record_block(*block)) {
      record.record = std::move(*parsed);
    } else {
      snapshot.rejected.push_back(record.rkey + ": " + parsed.error());
    }
    snapshot.records.push_back(std::move(record));
  }
  return snapshot;
}

std::vector<schema::RecordOp> resync_ops(const RepoSnapshot& snapshot,
                                         const std::vector<schema::IndexedRecord>& indexed) {
  using Key = std::pair<schema::Collection, std::string_view>;
  std::map<Key, const schema::IndexedRecord*> current;
  for (const auto& row : indexed) current.emplace(Key{row.collection, row.rkey}, &row);
  std::vector<schema::RecordOp> ops;
  std::set<Key> present;
  for (const auto& record : snapshot.records) {
    const Key key{record.collection, record.rkey};
    present.insert(key);
    auto it = current.find(key);
    if (!record.valid()) {
      if (it != current.end()) {
        ops.push_back(delete_op(snapshot.did, record.rkey, snapshot.rev, record.collection));
      }
      continue;
    }
    if (it != current.end() && it->second->cid == record.cid) continue;
    schema::RecordOp op;
    op.kind = it == current.end() ? schema::OpKind::kCreate : schema::OpKind::kUpdate;
    op.did = snapshot.did;
    op.rkey = record.rkey;
    op.rev = snapshot.rev;
    op.cid = record.cid;
    op.collection = record.collection;
    op.record = record.record;
    op.note = record.note;
    op.outline = record.outline;
    op.kept = record.kept;
    ops.push_back(std::move(op));
  }
  for (const auto& row : indexed) {
    if (!present.contains(Key{row.collection, row.rkey})) {
      ops.push_back(delete_op(snapshot.did, row.rkey, snapshot.rev, row.collection));
    }
  }
  return ops;
}

}  // namespace bulleted::firehose
