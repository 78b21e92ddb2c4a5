#include "firehose/ingestor.hpp"

#include <spdlog/spdlog.h>

#include <chrono>

#include "firehose/mst_tree.hpp"
#include "schema/datetime.hpp"
#include "schema/syntax.hpp"

namespace bulleted::firehose {
namespace {

schema::RepoStatus status_of(const AccountEvent& account) {
  if (account.active) return schema::RepoStatus::kActive;
  if (account.status) {
    if (auto known = schema::parse_repo_status(*account.status)) return *known;
  }
  // Inactive for a reason this app view does not know: hide, keep the rows.
  return schema::RepoStatus::kSuspended;
}

}  // namespace

Ingestor::Ingestor(schema::Store& store, IngestOptions options, FirehoseMetrics& metrics)
    : store_(store),
      options_(std::move(options)),
      metrics_(metrics),
      syncs_(store,
             RepoSyncOptions{.attempts = options_.resync_attempts,
                             .max_held = options_.max_held_commits},
             metrics, options_.now) {}

Result<void> Ingestor::start() {
  auto cursor = store_.read().cursor(options_.source);
  if (!cursor) return std::unexpected(cursor.error());
  last_seq_ = *cursor;
  if (last_seq_) metrics_.last_seq = *last_seq_;
  // Each repo's sync as the last stop left it.
  return syncs_.load();
}

std::optional<std::int64_t> Ingestor::resume_cursor() const { return last_seq_; }

void WrittenRevs::note(const std::string& did, const std::string& rev) {
  std::lock_guard lock(mutex_);
  auto& newest = revs_[did];
  if (newest < rev) newest = rev;
}

std::optional<std::string> WrittenRevs::newest(const std::string& did) const {
  std::lock_guard lock(mutex_);
  auto it = revs_.find(did);
  if (it == revs_.end()) return std::nullopt;
  return it->second;
}

Result<std::optional<std::string>> Ingestor::known_rev(const std::string& did) {
  auto known = syncs_.known_rev(did);
  if (!known) return known;
  if (options_.written != nullptr) {
    if (auto written = options_.written->newest(did); written && (!*known || *written > **known)) {
      syncs_.set_rev(did, *written);
      return std::optional<std::string>(*written);
    }
  }
  return known;
}

void Ingestor::want_resync(const std::string& did, const std::string& why) {
  syncs_.want(did, why);
}

Result<void> Ingestor::request_backfill(const std::string& did) {
  auto known = known_rev(did);
  if (!known) return std::unexpected(known.error());
  if (!*known) want_resync(did, "backfill");
  return {};
}

std::vector<std::string> Ingestor::take_resync_requests() {
  std::vector<std::string> out;
  for (auto& did : syncs_.in_state(RepoSyncState::kWanted)) out.push_back(std::move(did));
  return out;
}

Result<void> Ingestor::request_full_resync() {
  if (auto r = flush(); !r) return r;
  auto dids = store_.read().repo_dids();
  if (!dids) return std::unexpected(dids.error());
  for (const auto& did : *dids) want_resync(did, "events may be missing");
  return {};
}

void Ingestor::reset_cursor() {
  spdlog::warn("firehose: forgetting cursor {}", last_seq_ ? std::to_string(*last_seq_) : "none");
  last_seq_.reset();
}

void Ingestor::note_event(const FirehoseEvent& event) {
  if (auto seq = event_seq(event)) {
    last_seq_ = *seq;
    pending_cursor_ = *seq;
    pending_time_ = event_time(event);
  }
  ++batch_events_;
}

Result<void> Ingestor::add(FirehoseEvent event) {
  const std::size_t type = event.index();
  metrics_.received[type]++;
  if (auto seq = event_seq(event); seq && last_seq_ && *seq <= *last_seq_) {
    metrics_.duplicate_events++;
    metrics_.skipped[type]++;
    return {};
  }
  note_event(event);
  if (auto* commit = std::get_if<CommitEvent>(&event)) {
    if (auto r = add_commit(std::move(*commit), false); !r) return r;
  } else if (auto* sync = std::get_if<SyncEvent>(&event)) {
    if (auto r = add_sync(*sync); !r) return r;
  } else if (auto* identity = std::get_if<IdentityEvent>(&event)) {
    if (options_.keys != nullptr) options_.keys->forget(identity->did);
    if (identity->handle && schema::Handle::parse(*identity->handle)) {
      batch_.handles.emplace_back(identity->did, *identity->handle);
    }
    metrics_.applied[type]++;
  } else if (auto* account = std::get_if<AccountEvent>(&event)) {
    if (auto r = add_account(*account); !r) return r;
  } else if (auto* info = std::get_if<InfoEvent>(&event)) {
    spdlog::warn("firehose: #info {}: {}", info->name, info->message.value_or(""));
    if (info->name == "OutdatedCursor") {
      if (auto r = request_full_resync(); !r) return r;
    }
    metrics_.applied[type]++;
  } else {
    metrics_.skipped[type]++;
  }
  return maybe_flush();
}

Verified<void> Ingestor::check_key(const SignedCommit& commit) {
  if (options_.keys == nullptr) return {};
  auto key = options_.keys->key(commit.did, false);
  if (!key) return std::unexpected(VerifyFailure{VerifyReason::kKey, key.error().message});
  auto checked = check_signature(commit, *key);
  if (checked) return checked;
  // The key may have been rotated since it was read: read the DID document
  // once more (the source limits how often).
  metrics_.key_refreshes++;
  auto fresh = options_.keys->key(commit.did, true);
  if (!fresh) return std::unexpected(VerifyFailure{VerifyReason::kKey, fresh.error().message});
  if (*fresh == *key) return checked;
  return check_signature(commit, *fresh);
}

void Ingestor::refuse(const std::string& did, const std::string& what, const VerifyFailure& failure,
                      bool resync) {
  metrics_.verification_failures[static_cast<std::size_t>(failure.reason)]++;
  spdlog::warn("firehose: {} of {} refused ({}): {}", what, did, verify_reason_name(failure.reason),
               failure.message);
  if (resync) want_resync(did, "a " + what + " failed verification");
}

namespace {

// Whether a commit's `prevData` is the empty MST. Its proof, checked before
// this is asked, undid the commit's ops to exactly that tree.
bool builds_on_empty_tree(const CommitEvent& commit) {
  static const Cid empty = *MstTree().root();
  return commit.prev_data && *commit.prev_data == empty;
}

}  // namespace

Result<void> Ingestor::add_commit(CommitEvent commit, bool replaying) {
  constexpr std::size_t kCommit = 0;
  const std::string did = commit.repo;
  if (!replaying && syncs_.holds(did)) {
    // Past max_held, the resync's snapshot covers it.
    if (!syncs_.hold(did, std::move(commit))) metrics_.skipped[kCommit]++;
    return {};
  }
  auto known = known_rev(did);
  if (!known) return std::unexpected(known.error());
  if (*known && commit.rev <= **known) {
    metrics_.skipped[kCommit]++;
    return {};
  }
  const bool tracked = known->has_value();
  predecode_records(commit);  // done already when the consumer decoded it
  auto& records = *commit.records;
  // A repo the index does not track is taken up at its first
  // app.bulleted.node op (fetched whole first unless that commit is the
  // repo's first, with no `since`). Commits without one, a new account's
  // first among them, are not this app view's: most of the network's.
  if (records && !records->read_car && !tracked) {
    metrics_.skipped[kCommit]++;
    return {};
  }
  if (!records) {
    metrics_.errored[kCommit]++;
    spdlog::warn("firehose: commit {} of {} is unreadable: {}", commit.rev, did,
                 records.error().message);
    want_resync(did, "unreadable commit");
    return {};
  }
  if (!records->proof) records->proof = check_commit_blocks(commit);
  const auto& proof = *records->proof;
  // A refused commit of a repo the index tracks asks for that repo to be
  // fetched again; one of a repo it does not track is only dropped (anyone
  // can name any DID: forged frames must not make the app view fetch repos).
  if (!proof) {
    metrics_.errored[kCommit]++;
    refuse(did, "commit " + commit.rev, proof.error(), tracked);
    return {};
  }
  if (auto signed_by = check_key(*proof); !signed_by) {
    metrics_.errored[kCommit]++;
    refuse(did, "commit " + commit.rev, signed_by.error(), tracked);
    return {};
  }
  metrics_.commits_verified++;
  std::string().swap(commit.blocks);
  if (!replaying && !tracked && commit.since && !builds_on_empty_tree(commit)) {
    // A repo with history before this commit that the index has never
    // synced: fetch it whole first; this commit applies after, if newer.
    // (One whose verified ops undo to the empty tree had no records before
    // it, as with a new account's first write: nothing to fetch.)
    want_resync(did, "first seen with history before rev " + commit.rev);
    syncs_.hold(did, std::move(commit));
    return {};
  }
  if (!replaying && *known && commit.since && *commit.since != **known) {
    want_resync(
        did, "commit " + commit.rev + " follows " + *commit.since + ", the index has " + **known);
    syncs_.hold(did, std::move(commit));
    return {};
  }
  if (!replaying && commit.prev_data && commit.since) {
    if (auto last = syncs_.chain(did);
        last && last->first == *commit.since && !(last->second == *commit.prev_data)) {
      want_resync(did, "commit " + commit.rev + " builds on " + commit.prev_data->str() +
                           ", the index has " + last->second.str());
      syncs_.hold(did, std::move(commit));
      return {};
    }
  }
  for (const auto& reason : records->rejected) {
    metrics_.records_rejected++;
    spdlog::info("firehose: rejected a record of {}: {}", did, reason);
  }
  if (records->gap && !replaying) {
    want_resync(did, *records->gap);
    syncs_.hold(did, std::move(commit));
    return {};
  }
  if (!records->read_car) {
    metrics_.skipped[kCommit]++;
  } else {
    metrics_.applied[kCommit]++;
  }
  // The commit is not held past this point: its ops can move.
  for (auto& op : records->ops) batch_.ops.push_back(std::move(op));
  batch_.repo_revs.emplace_back(did, commit.rev);
  syncs_.advance(did, commit.rev, proof->data);
  return {};
}

Result<void> Ingestor::add_sync(const SyncEvent& sync) {
  constexpr std::size_t kSync = 1;
  auto known = known_rev(sync.did);
  if (!known) return std::unexpected(known.error());
  if (!*known) {
    metrics_.skipped[kSync]++;  // a repo the index does not track
    return {};
  }
  if (**known == sync.rev || sync.rev < **known) {
    metrics_.skipped[kSync]++;  // the index has it, or something newer
    return {};
  }
  // The announcement itself must be the repo's: a signed commit at that rev.
  auto commit = check_sync_proof(sync);
  Verified<void> signed_by =
      commit ? check_key(*commit) : Verified<void>(std::unexpected(commit.error()));
  if (!signed_by) {
    metrics_.errored[kSync]++;
    refuse(sync.did, "#sync " + sync.rev, signed_by.error(), false);
    return {};
  }
  metrics_.applied[kSync]++;
  want_resync(sync.did, "#sync announces rev " + sync.rev);
  return {};
}

Result<void> Ingestor::add_account(const AccountEvent& account) {
  constexpr std::size_t kAccount = 3;
  const auto status = status_of(account);
  batch_.statuses.emplace_back(account.did, status);
  if (status == schema::RepoStatus::kDeleted) syncs_.forget(account.did);
  metrics_.applied[kAccount]++;
  // Later ops must not be applied before this status: end the batch here.
  return flush();
}

Result<void> Ingestor::maybe_flush() {
  if (batch_.ops.size() >= options_.max_batch_ops || batch_events_ >= options_.max_batch_events) {
    return flush();
  }
  return {};
}

Result<void> Ingestor::flush() {
  if (batch_.empty() && !pending_cursor_) return {};
  if (pending_cursor_) batch_.cursor = std::make_pair(options_.source, *pending_cursor_);
  auto outcome = store_.apply(batch_);
  if (!outcome) {
    // Keep the batch: the caller retries once the store is writable again.
    metrics_.apply_failures++;
    return std::unexpected(outcome.error());
  }
  metrics_.ops_applied += outcome->applied;
  metrics_.ops_stale += outcome->stale;
  metrics_.batches++;
  if (pending_cursor_) metrics_.last_seq = *pending_cursor_;
  if (pending_time_) {
    if (auto when = schema::datetime_ms(*pending_time_)) {
      const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
      metrics_.lag_ms = now - *when;
    }
  }
  batch_ = schema::ApplyBatch{};
  batch_events_ = 0;
  pending_cursor_.reset();
  pending_time_.reset();
  return {};
}

Result<RepoSnapshot> Ingestor::resync_from_car(std::string_view car, std::string_view did) {
  auto snapshot = read_repo(car, did, options_.max_repo_records);
  if (!snapshot) {
    if (snapshot.error().code == ErrorCode::kPayloadTooLarge) {
      metrics_.repos_over_limit++;
      return std::unexpected(snapshot.error());
    }
    metrics_.verification_failures[static_cast<std::size_t>(VerifyReason::kCommit)]++;
    return fail(ErrorCode::kUpstreamFailure,
                "the repo could not be read: " + snapshot.error().message);
  }
  if (auto signed_by = check_key(snapshot->commit); !signed_by) {
    refuse(std::string(did), "repo at " + snapshot->rev, signed_by.error(), false);
    return fail(ErrorCode::kUpstreamFailure,
                "the repo failed verification: " + signed_by.error().message);
  }
  if (auto r = apply_resync(*snapshot); !r) return std::unexpected(r.error());
  return snapshot;
}

Result<void> Ingestor::apply_resync(const RepoSnapshot& snapshot) {
  if (auto r = flush(); !r) return r;
  auto indexed = store_.read().indexed_records(snapshot.did);
  if (!indexed) return std::unexpected(indexed.error());
  schema::ApplyBatch batch;
  batch.ops = resync_ops(snapshot, *indexed);
  batch.repo_revs.emplace_back(snapshot.did, snapshot.rev);
  for (const auto& reason : snapshot.rejected) {
    metrics_.records_rejected++;
    spdlog::info("firehose: rejected a record of {}: {}", snapshot.did, reason);
  }
  auto outcome = store_.apply(batch);
  if (!outcome) return std::unexpected(outcome.error());
  metrics_.ops_applied += outcome->applied;
  metrics_.ops_stale += outcome->stale;
  spdlog::info("firehose: resynced {} at rev {}: {} ops", snapshot.did, snapshot.rev,
               outcome->applied);
  metrics_.repo_records_read += snapshot.records.size();
  auto held = syncs_.applied(snapshot.did, snapshot.rev, snapshot.commit.data);
  for (auto& commit : held) {
    if (commit.rev <= snapshot.rev) continue;
    if (auto r = add_commit(std::move(commit), true); !r) return r;
  }
  return flush();
}

Result<void> Ingestor::run_resyncs(RepoFetches& fetches) {
  for (auto& [did, car] : fetches.take_done()) {
    if (!car && car.error().code == ErrorCode::kPayloadTooLarge) metrics_.repos_over_limit++;
    Result<RepoSnapshot> applied =
        car ? resync_from_car(*car, did) : Result<RepoSnapshot>(std::unexpected(car.error()));
    if (car) std::string().swap(*car);  // the CAR is not held past its apply
    if (!applied) {
      if (auto r = resync_failed(did, applied.error()); !r) return r;
    }
  }
  for (const auto& did : syncs_.due(fetches.free())) fetches.submit(did);
  metrics_.repos_pending = syncs_.count(RepoSyncState::kWanted);
  metrics_.repos_in_flight = syncs_.count(RepoSyncState::kFetching);
  metrics_.repos_failed = syncs_.count(RepoSyncState::kFailed);
  return {};
}

Result<void> Ingestor::resync_failed(const std::string& did, const Error& error) {
  auto held = syncs_.fetch_failed(did, error);
  for (auto& commit : held) {
    if (auto r = add_commit(std::move(commit), true); !r) return r;
  }
  return flush();
}

}  // namespace bulleted::firehose
