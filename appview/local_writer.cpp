#include "appview/local_writer.hpp"

#include <chrono>
#include <deque>
#include <set>

#include "firehose/dag_cbor.hpp"
#include "ordering/random_source.hpp"
#include "schema/syntax.hpp"

namespace bulleted::appview {
namespace {

std::string now_iso() {
  const auto now = std::chrono::system_clock::now();
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<int>(ms % 1000));
  return buffer;
}

// Placement jitter: one generator per thread, seeded from the OS.
ordering::RandomSource& thread_jitter() {
  thread_local ordering::EntropySource source;
  return source;
}

Result<schema::NodeRecord> current_record(schema::Store& store, const std::string& did,
                                          const std::string& rkey,
                                          schema::NodeRow* row_out = nullptr) {
  auto row = store.node(did, rkey);
  if (!row) return std::unexpected(row.error());
  auto json = nlohmann::json::parse(row->record_json, nullptr, false);
  auto record = schema::parse_node_record(json);
  if (!record)
    return fail(ErrorCode::kInternal,
                "stored record of " + rkey + " is unreadable: " + record.error());
  if (row_out != nullptr) *row_out = std::move(*row);
  return std::move(*record);
}

schema::RecordOp upsert_op(const std::string& did, const std::string& rkey, const std::string& rev,
                           schema::NodeRecord record, schema::OpKind kind) {
  schema::RecordOp op;
  op.kind = kind;
  op.did = did;
  op.rkey = rkey;
  op.rev = rev;
  op.cid = record_cid(record);
  op.record = std::move(record);
  return op;
}

Result<void> check_text(const NodeFields& fields) {
  // The same limits as records from the network, with the same reasons.
  schema::NodeRecord probe;
  probe.text = fields.text.value_or("x");
  probe.note = fields.note;
  probe.created_at = "2026-01-01T00:00:00.000Z";
  if (auto parsed = schema::parse_node_record(schema::to_json(probe)); !parsed) {
    return fail(ErrorCode::kInvalidRequest, parsed.error());
  }
  return {};
}

// Appends the re-keys a placement asked for to `batch`.
Result<void> add_rekeys(schema::Store& store, const std::string& did, const std::string& rev,
                        const Placement& placement, schema::ApplyBatch& batch) {
  for (const auto& [rkey, key] : placement.rekeys) {
    auto record = current_record(store, did, rkey);
    if (!record) return std::unexpected(record.error());
    record->sort_key = key;
    record->sort_key_valid = true;
    batch.ops.push_back(upsert_op(did, rkey, rev, std::move(*record), schema::OpKind::kUpdate));
  }
  return {};
}

Result<WriteResult> commit(schema::Store& store, schema::ApplyBatch batch, const std::string& did,
                           const std::string& rkey, const std::string& rev) {
  batch.repo_revs.emplace_back(did, rev);
  auto outcome = store.apply(batch);
  if (!outcome) return std::unexpected(outcome.error());
  for (const auto& op : batch.ops) {
    if (op.rkey != rkey) continue;
    return WriteResult{schema::record_uri(did, schema::kNodeCollection, rkey), rkey, op.cid,
                       op.record ? op.record->sort_key : std::nullopt,         rev,  0};
  }
  return fail(ErrorCode::kInternal, "the write lost its own op");
}

}  // namespace

std::string record_cid(const schema::NodeRecord& record) {
  auto value = firehose::from_json(schema::to_json(record));
  return firehose::Cid::of_dag_cbor(firehose::encode_dag_cbor(*value)).str();
}

std::string LocalWriter::next_rev(schema::Store& store, const std::string& did) {
  auto repo = store.repo(did);
  if (repo && *repo && (*repo)->rev) {
    if (auto floor = ordering::Tid::parse(*(*repo)->rev)) return clock_.next_after(*floor).str();
  }
  return clock_.next().str();
}

Result<WriteResult> LocalWriter::create(schema::Store& store, const std::string& did,
                                        const NeighbourIntent& intent, const NodeFields& fields) {
  if (!fields.text) return fail(ErrorCode::kInvalidRequest, "text is required");
  if (auto r = check_text(fields); !r) return std::unexpected(r.error());
  const std::string group =
      intent.parent_rkey ? children_group(did, *intent.parent_rkey) : schema::root_group(did);
  auto guard = locks_.lock({group});
  auto placement = place(store, did, intent, std::nullopt, thread_jitter(), faults_);
  if (!placement) return std::unexpected(placement.error());
  const std::string rkey = clock_.next().str();
  const std::string rev = next_rev(store, did);
  schema::NodeRecord record;
  record.text = *fields.text;
  record.note = fields.note;
  record.completed = fields.completed.value_or(false);
  record.parent = placement->parent_uri;
  record.sort_key = placement->sort_key;
  record.sort_key_valid = true;
  record.created_at = now_iso();
  schema::ApplyBatch batch;
  if (auto r = add_rekeys(store, did, rev, *placement, batch); !r)
    return std::unexpected(r.error());
  batch.ops.push_back(upsert_op(did, rkey, rev, std::move(record), schema::OpKind::kCreate));
  auto result = commit(store, std::move(batch), did, rkey, rev);
  if (result) result->retries = placement->retries;
  return result;
}

Result<WriteResult> LocalWriter::move(schema::Store& store, const std::string& did,
                                      const std::string& rkey, const NeighbourIntent& intent) {
  schema::NodeRow row;
  auto existing = current_record(store, did, rkey, &row);
  if (!existing) return std::unexpected(existing.error());
  const std::string target =
      intent.parent_rkey ? children_group(did, *intent.parent_rkey) : schema::root_group(did);
  auto guard = locks_.lock({row.group, target});
  // Under the node itself or any descendant: the subtree would leave the tree.
  if (intent.parent_rkey) {
    if (*intent.parent_rkey == rkey)
      return fail(ErrorCode::kWouldCycle, "a node cannot be its own parent");
    auto chain = store.ancestors(did, *intent.parent_rkey);
    if (!chain) return std::unexpected(chain.error());
    for (const auto& ancestor : *chain) {
      if (ancestor.rkey == rkey) {
        return fail(ErrorCode::kWouldCycle, "the new parent is inside the node's own subtree");
      }
    }
  }
  auto placement = place(store, did, intent, rkey, thread_jitter(), faults_);
  if (!placement) return std::unexpected(placement.error());
  const std::string rev = next_rev(store, did);
  schema::NodeRecord record = std::move(*existing);
  record.parent = placement->parent_uri;
  record.sort_key = placement->sort_key;
  record.sort_key_valid = true;
  schema::ApplyBatch batch;
  if (auto r = add_rekeys(store, did, rev, *placement, batch); !r)
    return std::unexpected(r.error());
  batch.ops.push_back(upsert_op(did, rkey, rev, std::move(record), schema::OpKind::kUpdate));
  auto result = commit(store, std::move(batch), did, rkey, rev);
  if (result) result->retries = placement->retries;
  return result;
}

Result<WriteResult> LocalWriter::update(schema::Store& store, const std::string& did,
                                        const std::string& rkey, const NodeFields& fields) {
  if (fields.text || fields.note) {
    if (auto r = check_text(fields); !r) return std::unexpected(r.error());
  }
  schema::NodeRow row;
  auto record = current_record(store, did, rkey, &row);
  if (!record) return std::unexpected(record.error());
  auto guard = locks_.lock({row.group});
  if (fields.text) record->text = *fields.text;
  if (fields.note) record->note = *fields.note;
  if (fields.completed) record->completed = *fields.completed;
  const std::string rev = next_rev(store, did);
  schema::ApplyBatch batch;
  batch.ops.push_back(upsert_op(did, rkey, rev, std::move(*record), schema::OpKind::kUpdate));
  auto result = commit(store, std::move(batch), did, rkey, rev);
  if (result) result->sort_key.reset();
  return result;
}

Result<std::size_t> LocalWriter::remove(schema::Store& store, const std::string& did,
                                        const std::string& rkey) {
  auto row = store.node(did, rkey);
  if (!row) return std::unexpected(row.error());
  auto guard = locks_.lock({row->group, children_group(did, rkey)});
  // The subtree, breadth first; a parent cycle is visited once.
  std::vector<std::string> doomed{rkey};
  std::set<std::string> seen{rkey};
  for (std::size_t i = 0; i < doomed.size(); ++i) {
    auto children = store.child_rkeys(children_group(did, doomed[i]));
    if (!children) return std::unexpected(children.error());
    for (auto& child : *children) {
      if (seen.insert(child).second) doomed.push_back(std::move(child));
    }
  }
  const std::string rev = next_rev(store, did);
  schema::ApplyBatch batch;
  for (const auto& victim : doomed) {
    schema::RecordOp op;
    op.kind = schema::OpKind::kDelete;
    op.did = did;
    op.rkey = victim;
    op.rev = rev;
    batch.ops.push_back(std::move(op));
  }
  batch.repo_revs.emplace_back(did, rev);
  auto outcome = store.apply(batch);
  if (!outcome) return std::unexpected(outcome.error());
  return outcome->applied;
}

}  // namespace bulleted::appview
