#include "appview/write/writer.hpp"

#include <algorithm>
#include <chrono>
#include <set>

#include "firehose/records.hpp"
#include "ordering/random_source.hpp"
#include "schema/datetime.hpp"
#include "schema/outline_record.hpp"
#include "schema/sqlite.hpp"
#include "schema/syntax.hpp"

namespace bulleted::appview {
namespace {

// Placement jitter: one generator per thread, seeded from the OS.
ordering::RandomSource& thread_jitter() {
  thread_local ordering::EntropySource source;
  return source;
}

Result<schema::NodeRecord> current_record(schema::Store& store, const std::string& did,
                                          const std::string& rkey,
                                          schema::NodeRow* row_out = nullptr) {
  auto row = store.read().node(did, rkey);
  if (!row) return std::unexpected(row.error());
  if (row->mirror_of) {
    return fail(ErrorCode::kInvalidRequest,
                rkey + " is a mirror (app.bulleted.mirror) of " + *row->mirror_of +
                    ": edit its original; a mirror is moved or deleted");
  }
  auto json = nlohmann::json::parse(row->record_json, nullptr, false);
  auto record = schema::parse_node_record(json);
  if (!record)
    return fail(ErrorCode::kInternal,
                "stored record of " + rkey + " is unreadable: " + record.error());
  if (row_out != nullptr) *row_out = std::move(*row);
  return std::move(*record);
}

// The fields' texts against the lexicon's limits, with the reasons
// records from the network get.
Result<void> check_texts(const NodeFields& fields) {
  for (const auto& [name, value] : {std::pair{"text", &fields.text}, {"note", &fields.note}}) {
    if (!*value) continue;
    if (auto reason = schema::written_field_error(name, **value)) {
      return fail(ErrorCode::kInvalidRequest, *reason);
    }
  }
  return {};
}

// The writes of an existing node `rkey` written again as `record` (kind
// kUpdate, or kDelete with no record): the node record, never with a note
// inside it (one an earlier build wrote there moves into a note record of
// its own, in the same commit), and its note record's write when `note`
// changes it (given: its new text, "" removes it). A delete takes its note
// record with it.
Result<void> push_written(schema::Store& store, const std::string& did, const std::string& rkey,
                          std::optional<schema::NodeRecord> record,
                          const std::optional<std::string>& note,
                          std::vector<RecordWrite>& writes) {
  auto existing = store.read().note_record(did, rkey);
  if (!existing) return std::unexpected(existing.error());
  auto note_write = [&](schema::OpKind kind, std::optional<schema::NoteRecord> value) {
    writes.push_back({kind, rkey, std::nullopt, schema::Collection::kNote, std::move(value)});
  };
  if (!record) {
    if (*existing) note_write(schema::OpKind::kDelete, std::nullopt);
    writes.push_back({schema::OpKind::kDelete, rkey, std::nullopt});
    return {};
  }
  std::optional<std::string> inline_note = std::move(record->note);
  record->note.reset();
  const std::string created_at = record->created_at;
  writes.push_back({schema::OpKind::kUpdate, rkey, std::move(record)});
  // What the note is to be: as given, else the note record's, else the
  // earlier build's inline note.
  std::optional<std::string> wanted = note;
  if (!wanted) wanted = *existing ? std::optional((*existing)->text) : inline_note;
  if (wanted && wanted->empty()) wanted.reset();
  if (!wanted) {
    if (*existing) note_write(schema::OpKind::kDelete, std::nullopt);
    return {};
  }
  if (*existing && (*existing)->text == *wanted) return {};
  schema::NoteRecord value =
      *existing ? std::move(**existing) : schema::make_note(did, rkey, "", created_at);
  value.text = std::move(*wanted);
  value.facets = nullptr;  // byte ranges of another text
  note_write(*existing ? schema::OpKind::kUpdate : schema::OpKind::kCreate, std::move(value));
  return {};
}

// A mirror's record (`row` its row) written again with `parent` (unless
// kept) and `sort_key`.
Result<RecordWrite> mirror_write(const schema::NodeRow& row,
                                 const std::optional<std::optional<std::string>>& parent,
                                 const std::string& sort_key) {
  auto json = nlohmann::json::parse(row.record_json, nullptr, false);
  if (!json.is_object()) {
    return fail(ErrorCode::kInternal, "stored mirror " + row.rkey + " is unreadable");
  }
  json["$type"] = schema::kMirrorCollection;
  json["sortKey"] = sort_key;
  if (parent) {
    if (*parent) {
      json["parent"] = **parent;
    } else {
      json.erase("parent");
    }
  }
  return RecordWrite{schema::OpKind::kUpdate,     row.rkey,     std::nullopt,
                     schema::Collection::kMirror, std::nullopt, std::move(json)};
}

// The re-keys a placement asked for, as updates of the siblings' records
// (a mirror among them is its mirror record).
Result<std::vector<RecordWrite>> rekey_writes(schema::Store& store, const std::string& did,
                                              const Placement& placement) {
  std::vector<RecordWrite> writes;
  for (const auto& [rkey, key] : placement.rekeys) {
    auto row = store.read().node(did, rkey);
    if (!row) return std::unexpected(row.error());
    if (row->mirror_of) {
      auto write = mirror_write(*row, std::nullopt, key);
      if (!write) return std::unexpected(write.error());
      writes.push_back(std::move(*write));
      continue;
    }
    auto record = current_record(store, did, rkey);
    if (!record) return std::unexpected(record.error());
    record->sort_key = key;
    record->sort_key_valid = true;
    if (auto r = push_written(store, did, rkey, std::move(*record), std::nullopt, writes); !r) {
      return std::unexpected(r.error());
    }
  }
  return writes;
}

// The answer for the write of `rkey` (the last write of the plan).
Result<WriteResult> result_of(const std::string& did, const std::string& rkey,
                              const std::vector<RecordWrite>& writes, const Committed& committed,
                              int retries) {
  auto cid = committed.cids.find(rkey);
  if (cid == committed.cids.end()) return fail(ErrorCode::kInternal, "the write lost its own op");
  auto own = std::find_if(writes.rbegin(), writes.rend(), [&](const RecordWrite& write) {
    return (write.collection == schema::Collection::kNode ||
            write.collection == schema::Collection::kMirror) &&
           write.rkey == rkey;
  });
  if (own == writes.rend()) return fail(ErrorCode::kInternal, "the write lost its own op");
  std::optional<std::string> sort_key;
  if (own->record) sort_key = own->record->sort_key;
  if (own->kept) sort_key = own->kept->value("sortKey", "");
  return WriteResult{schema::record_uri(did, schema::collection_name(own->collection), rkey),
                     rkey,
                     cid->second,
                     std::move(sort_key),
                     committed.rev,
                     retries};
}

std::string next_rev(schema::Store& store, ordering::TidClock& clock, const std::string& did) {
  auto repo = store.read().repo(did);
  if (repo && *repo && (*repo)->rev) {
    if (auto floor = ordering::Tid::parse(*(*repo)->rev)) return clock.next_after(*floor).str();
  }
  return clock.next().str();
}

}  // namespace

Result<std::string> record_cid(const schema::NodeRecord& record) {
  auto block = firehose::encode_record_block(record);
  if (!block) return std::unexpected(block.error());
  return firehose::Cid::of_dag_cbor(*block).str();
}

Result<std::string> record_cid(const schema::NoteRecord& note) {
  auto block = firehose::encode_note_block(note);
  if (!block) return std::unexpected(block.error());
  return firehose::Cid::of_dag_cbor(*block).str();
}

Result<std::optional<std::string>> record_cid(const RecordWrite& write) {
  Result<std::string> cid = std::string();
  if (write.record) {
    cid = record_cid(*write.record);
  } else if (write.note) {
    cid = record_cid(*write.note);
  } else if (write.kept) {
    auto block = firehose::encode_json_block(*write.kept);
    if (!block) return std::unexpected(block.error());
    cid = firehose::Cid::of_dag_cbor(*block).str();
  } else {
    return std::optional<std::string>();
  }
  if (!cid) return std::unexpected(cid.error());
  return std::optional<std::string>(std::move(*cid));
}

std::optional<nlohmann::json> RecordWrite::value() const {
  if (record) return schema::to_json(*record);
  if (note) return schema::to_json(*note);
  return kept;
}

void push_created(const std::string& did, const std::string& rkey, schema::NodeRecord record,
                  std::vector<RecordWrite>& writes) {
  std::optional<std::string> note = std::move(record.note);
  record.note.reset();
  std::string created_at = record.created_at;
  writes.push_back({schema::OpKind::kCreate, rkey, std::move(record)});
  if (!note || note->empty()) return;
  writes.push_back({schema::OpKind::kCreate, rkey, std::nullopt, schema::Collection::kNote,
                    schema::make_note(did, rkey, std::move(*note), std::move(created_at))});
}

Result<Committed> LocalSink::commit(schema::Store& store, const std::string& did,
                                    const std::vector<RecordWrite>& writes,
                                    const CommitOptions& options) {
  Committed committed;
  committed.rev = next_rev(store, clock_, did);
  schema::ApplyBatch batch;
  for (const auto& write : writes) {
    schema::RecordOp op;
    op.kind = write.kind;
    op.did = did;
    op.rkey = write.rkey;
    op.rev = committed.rev;
    op.collection = write.collection;
    auto cid = record_cid(write);
    if (!cid) return std::unexpected(cid.error());
    if (*cid) {
      op.cid = std::move(**cid);
      op.record = write.record;
      op.note = write.note;
      op.kept = write.kept;
      if (write.record || write.kept) committed.cids[write.rkey] = op.cid;
    }
    batch.ops.push_back(std::move(op));
  }
  batch.repo_revs.emplace_back(did, committed.rev);
  batch.import_done = options.import_done;
  auto outcome = store.apply(batch);
  if (!outcome) return std::unexpected(outcome.error());
  committed.applied = outcome->applied;
  return committed;
}

GroupLocks::Guard Writer::lock(const std::string& did, std::vector<std::string> groups,
                               TreeAccess tree) {
  return locks_.lock(did, std::move(groups), tree, sink_.repo_writes());
}

template <class T, class Attempt>
Result<T> Writer::with_refresh(schema::Store& store, const std::string& did, Attempt attempt) {
  if (sink_.index_is_repo()) {
    // One transaction for what the placement read and the commit wrote
    // (held under the group lock, as the commit always was): one snapshot
    // of the file instead of one a read, and nothing to refresh.
    auto scope = store.begin_write();
    if (!scope) return std::unexpected(scope.error());
    auto done = attempt(0);
    if (!done) return done;
    if (auto r = scope->commit(); !r) return std::unexpected(r.error());
    return done;
  }
  auto first = attempt(0);
  if (first || first.error().code != ErrorCode::kRepoChanged) return first;
  if (auto r = sink_.refresh(store, did); !r) return std::unexpected(r.error());
  auto second = attempt(1);
  if (!second && second.error().code == ErrorCode::kRepoChanged) {
    return fail(ErrorCode::kStaleNeighbours,
                "the repo changed twice while this write was placed; refetch and try again");
  }
  return second;
}

CreateQueues::Stripe& CreateQueues::stripe_of(const std::string& key) {
  return stripes_[std::hash<std::string>{}(key) % stripes_.size()];
}

std::size_t CreateQueues::waiting(const std::string& key) {
  Stripe& stripe = stripe_of(key);
  std::lock_guard lock(stripe.mutex);
  return static_cast<std::size_t>(std::count_if(stripe.queue.begin(), stripe.queue.end(),
                                                [&](const Job* job) { return job->key == key; }));
}

void CreateQueues::submit(Job& job, const std::function<void(const std::vector<Job*>&)>& lead) {
  Stripe& stripe = stripe_of(job.key);
  std::unique_lock lock(stripe.mutex);
  stripe.queue.push_back(&job);
  stripe.done.wait(lock, [&] { return job.done || !stripe.leading.contains(job.key); });
  if (job.done) return;
  stripe.leading.insert(job.key);
  // Its own create first, then those of its group in the order they came.
  std::erase(stripe.queue, &job);
  std::vector<Job*> batch{&job};
  for (auto it = stripe.queue.begin(); it != stripe.queue.end() && batch.size() < kMaxBatch;) {
    if ((*it)->key == job.key) {
      batch.push_back(*it);
      it = stripe.queue.erase(it);
    } else {
      ++it;
    }
  }
  lock.unlock();
  try {
    lead(batch);
  } catch (const std::exception& e) {
    for (Job* each : batch) {
      if (!each->result) each->result = fail(ErrorCode::kInternal, e.what());
    }
  }
  lock.lock();
  for (Job* each : batch) each->done = true;
  stripe.leading.erase(job.key);
  lock.unlock();
  stripe.done.notify_all();
}

void Writer::run_creates(schema::Store& store, const std::string& did, const std::string& group,
                         const std::vector<CreateQueues::Job*>& batch) {
  auto guard = lock(did, {group});
  auto scope = store.begin_write();
  if (!scope) {
    for (auto* job : batch) job->result = std::unexpected(scope.error());
    return;
  }
  // Each create's own apply is a savepoint: one that fails (or throws)
  // leaves the others, unless SQLite ended the whole transaction with it
  // (a full disk): then the rest are not run outside it.
  for (auto* job : batch) {
    if (!store.in_write_transaction()) {
      job->result = fail(ErrorCode::kUnavailable, "the index ended the batch's transaction");
      continue;
    }
    try {
      job->result = job->run(store);
    } catch (const std::exception& e) {
      job->result = fail(ErrorCode::kInternal, e.what());
    }
  }
  if (auto r = scope->commit(); !r) {
    for (auto* job : batch) {
      if (*job->result) job->result = std::unexpected(r.error());
    }
  }
}

Result<WriteResult> Writer::create(schema::Store& store, const std::string& did,
                                   const NeighbourIntent& intent, const NodeFields& fields) {
  if (!fields.text) return fail(ErrorCode::kInvalidRequest, std::string(schema::kTextRequired));
  if (auto r = check_texts(fields); !r) return std::unexpected(r.error());
  const std::string group = schema::target_group(did, intent.parent_rkey);
  const std::string rkey = clock_.next().str();
  // Placed and committed through `on`: the store of whichever thread runs it.
  auto attempt = [&](schema::Store& on, int refreshes) -> Result<WriteResult> {
    auto placement = place(on, did, intent, std::nullopt, thread_jitter(), faults_);
    if (!placement) return std::unexpected(placement.error());
    schema::NodeRecord record;
    record.text = *fields.text;
    record.note = fields.note;
    record.completed = fields.completed.value_or(false);
    if (fields.layout && !fields.layout->empty()) record.layout = fields.layout;
    if (fields.display && !fields.display->empty()) record.display = fields.display;
    record.parent = placement->parent_uri;
    record.sort_key = placement->sort_key;
    record.sort_key_valid = true;
    record.created_at = schema::now_datetime();
    auto writes = rekey_writes(on, did, *placement);
    if (!writes) return std::unexpected(writes.error());
    push_created(did, rkey, std::move(record), *writes);
    auto committed = sink_.commit(on, did, *writes);
    if (!committed) return std::unexpected(committed.error());
    return result_of(did, rkey, *writes, *committed, placement->retries + refreshes);
  };
  if (creates_ != nullptr && sink_.index_is_repo()) {
    CreateQueues::Job job{did + "\n" + group, [&](schema::Store& on) { return attempt(on, 0); }};
    creates_->submit(job, [&](const std::vector<CreateQueues::Job*>& batch) {
      run_creates(store, did, group, batch);
    });
    return std::move(*job.result);
  }
  auto guard = lock(did, {group});
  return with_refresh<WriteResult>(store, did,
                                   [&](int refreshes) { return attempt(store, refreshes); });
}

Result<WriteResult> Writer::move(schema::Store& store, const std::string& did,
                                 const std::string& rkey, const NeighbourIntent& intent) {
  auto existing = store.read().node(did, rkey);
  if (!existing) return std::unexpected(existing.error());
  const std::string target = schema::target_group(did, intent.parent_rkey);
  auto guard = lock(did, {existing->group, target});
  return with_refresh<WriteResult>(store, did, [&](int refreshes) -> Result<WriteResult> {
    auto row = store.read().node(did, rkey);
    if (!row) return std::unexpected(row.error());
    // Under the node itself or any descendant: the subtree would leave the tree.
    if (intent.parent_rkey) {
      if (*intent.parent_rkey == rkey)
        return fail(ErrorCode::kWouldCycle, "a node cannot be its own parent");
      // Allowed only when the walk up from the new parent proves it: it
      // ends at the top level or a missing parent without meeting the node.
      schema::Reader::AncestorsEnd end{};
      auto chain = store.read().ancestors(did, *intent.parent_rkey, &end);
      if (!chain) return std::unexpected(chain.error());
      for (const auto& ancestor : *chain) {
        if (ancestor.rkey == rkey) {
          return fail(ErrorCode::kWouldCycle, "the new parent is inside the node's own subtree");
        }
      }
      if (end == schema::Reader::AncestorsEnd::kCycle) {
        return fail(ErrorCode::kWouldCycle, "the new parent is inside a parent cycle");
      }
      if (end == schema::Reader::AncestorsEnd::kDepthLimit) {
        return fail(ErrorCode::kWouldCycle,
                    "the new parent is more than " + std::to_string(schema::Reader::kMaxAncestors) +
                        " levels deep: the move cannot be shown to make no cycle");
      }
    }
    auto placement = place(store, did, intent, rkey, thread_jitter(), faults_);
    if (!placement) return std::unexpected(placement.error());
    auto writes = rekey_writes(store, did, *placement);
    if (!writes) return std::unexpected(writes.error());
    if (row->mirror_of) {
      // A mirror moves as its own record.
      auto write = mirror_write(*row, placement->parent_uri, placement->sort_key);
      if (!write) return std::unexpected(write.error());
      writes->push_back(std::move(*write));
    } else {
      auto record = current_record(store, did, rkey);
      if (!record) return std::unexpected(record.error());
      record->parent = placement->parent_uri;
      record->sort_key = placement->sort_key;
      record->sort_key_valid = true;
      if (auto r = push_written(store, did, rkey, std::move(*record), std::nullopt, *writes); !r) {
        return std::unexpected(r.error());
      }
    }
    auto committed = sink_.commit(store, did, *writes);
    if (!committed) return std::unexpected(committed.error());
    return result_of(did, rkey, *writes, *committed, placement->retries + refreshes);
  });
}

Result<WriteResult> Writer::update(schema::Store& store, const std::string& did,
                                   const std::string& rkey, const NodeFields& fields) {
  if (auto r = check_texts(fields); !r) return std::unexpected(r.error());
  auto existing = store.read().node(did, rkey);
  if (!existing) return std::unexpected(existing.error());
  auto guard = lock(did, {existing->group});
  return with_refresh<WriteResult>(store, did, [&](int refreshes) -> Result<WriteResult> {
    auto record = current_record(store, did, rkey);
    if (!record) return std::unexpected(record.error());
    if (fields.text) record->text = *fields.text;
    // completed: true writes completedAt (now, unless it was completed
    // already), false removes it.
    if (fields.completed) record->set_completed(*fields.completed, schema::now_datetime());
    // A layout or display given replaces the record's; "" removes it.
    for (auto [given, into] : {std::pair{&fields.layout, &record->layout},
                               std::pair{&fields.display, &record->display}}) {
      if (!*given) continue;
      if ((*given)->empty()) {
        into->reset();
      } else {
        *into = **given;
      }
    }
    std::vector<RecordWrite> writes;
    if (auto r = push_written(store, did, rkey, std::move(*record), fields.note, writes); !r) {
      return std::unexpected(r.error());
    }
    auto committed = sink_.commit(store, did, writes);
    if (!committed) return std::unexpected(committed.error());
    auto result = result_of(did, rkey, writes, *committed, refreshes);
    if (result) result->sort_key.reset();
    return result;
  });
}

Result<std::size_t> Writer::remove(schema::Store& store, const std::string& did,
                                   const std::string& rkey) {
  auto row = store.read().node(did, rkey);
  if (!row) return std::unexpected(row.error());
  // Exclusive: no create or move may add a child under any node of the
  // subtree while it is collected and deleted.
  auto guard = lock(did, {row->group, schema::children_group(did, rkey)}, TreeAccess::kExclusive);
  return with_refresh<std::size_t>(store, did, [&](int) -> Result<std::size_t> {
    if (auto still = store.read().node(did, rkey); !still) return std::unexpected(still.error());
    // The subtree, breadth first; a parent cycle is visited once. A mirror
    // has no children of its own (whatever names its key as a parent stays).
    std::vector<std::string> doomed{rkey};
    std::set<std::string> seen{rkey};
    std::set<std::string> mirrors;
    for (std::size_t i = 0; i < doomed.size(); ++i) {
      auto at = store.read().node(did, doomed[i]);
      if (!at) return std::unexpected(at.error());
      if (at->mirror_of) {
        mirrors.insert(doomed[i]);
        continue;
      }
      auto children = store.read().child_rkeys(schema::children_group(did, doomed[i]));
      if (!children) return std::unexpected(children.error());
      for (auto& child : *children) {
        if (seen.insert(child).second) doomed.push_back(std::move(child));
      }
    }
    // Children first: a sink that must split the subtree over several
    // commits never leaves a child without its parent. A mirror among them
    // (or the row deleted) goes as its mirror record.
    std::vector<RecordWrite> writes;
    for (auto it = doomed.rbegin(); it != doomed.rend(); ++it) {
      if (mirrors.contains(*it)) {
        writes.push_back({schema::OpKind::kDelete, *it, std::nullopt, schema::Collection::kMirror});
        continue;
      }
      if (auto r = push_written(store, did, *it, std::nullopt, std::nullopt, writes); !r) {
        return std::unexpected(r.error());
      }
    }
    auto committed = sink_.commit(store, did, writes);
    if (!committed) return std::unexpected(committed.error());
    // The nodes deleted, not the index rows this call changed: in pds mode
    // the firehose echo may have applied the same deletes a moment earlier.
    return doomed.size();
  });
}

}  // namespace bulleted::appview
