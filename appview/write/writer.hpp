// Writes: neighbour intent and field changes in, records committed out.
//
// The Writer plans every write under the sibling groups' locks (placement,
// re-keys, subtree walks) and hands the records to a RecordSink, which
// commits them where the repo lives: LocalSink into the index itself (local
// mode: TID record keys and revs minted here, real DAG-CBOR CIDs), PdsSink
// (appview/pds_sink.hpp) to the owner's PDS and then the index. When a sink
// reports that the repo moved on (kRepoChanged), the Writer refreshes the
// index from the repo, re-plans under the same locks and tries exactly once
// more; a second failure is kStaleNeighbours.
//
// Thread-safe: each call takes the locks it needs; `store` is the calling
// thread's own connection.
#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "appview/write/placement.hpp"
#include "ordering/tid.hpp"
#include "schema/store.hpp"

namespace bulleted::appview {

struct WriteResult {
  std::string uri;
  std::string rkey;
  std::string cid;
  std::optional<std::string> sort_key;
  std::string rev;
  int retries = 0;
};

struct NodeFields {
  std::optional<std::string> text;
  std::optional<std::string> note;
  std::optional<bool> completed;
  // The published record's open sets, as given (an update's "" removes).
  std::optional<std::string> layout;
  std::optional<std::string> display;
};

// One record write of a plan: a node's, or the note record at its key.
struct RecordWrite {
  schema::OpKind kind;
  std::string rkey;
  std::optional<schema::NodeRecord> record;  // a node's creates and updates
  schema::Collection collection = schema::Collection::kNode;
  std::optional<schema::NoteRecord> note;  // a note's creates and updates
  std::optional<nlohmann::json> kept;      // a mirror's creates and updates
  // The record written, as the PDS takes it; none for a delete.
  std::optional<nlohmann::json> value() const;
};

struct Committed {
  std::string rev;                          // the repo's rev after the write
  std::map<std::string, std::string> cids;  // rkey -> CID of each created or updated node
  std::size_t applied = 0;                  // index rows changed
  // The repo host's RateLimit-Remaining / RateLimit-Reset (unix seconds)
  // after the last commit, when it sent them.
  std::optional<std::int64_t> rate_remaining;
  std::optional<std::int64_t> rate_reset;
};

struct CommitOptions {
  // Compare against the repo state the index holds (kRepoChanged when it
  // moved on). Imports of freshly minted records skip it.
  bool swap = true;
  // Import progress recorded in the same index transaction.
  std::optional<std::pair<std::string, std::int64_t>> import_done;
};

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  // Commits `writes` (in order, atomically where the store allows) to the
  // repo of `did` and applies them to the index. kRepoChanged when the repo
  // is not at the state the index holds.
  virtual Result<Committed> commit(schema::Store& store, const std::string& did,
                                   const std::vector<RecordWrite>& writes,
                                   const CommitOptions& options = {}) = 0;
  // Brings the index up to the repo's current state (after kRepoChanged).
  virtual Result<void> refresh(schema::Store& store, const std::string& did) = 0;
  // Whether a repo's writes must go one at a time (each commit names the
  // one it follows).
  virtual RepoWrites repo_writes() const = 0;
  // Whether commit() only writes the index: then a write's placement reads
  // and its commit can share one index transaction.
  virtual bool index_is_repo() const { return false; }
  // Whether the repo already holds a record (resuming an import whose last
  // commit may have reached the repo but not the index).
  virtual Result<bool> holds(schema::Store& store, const std::string& did,
                             const std::string& rkey) = 0;
};

// Local mode: the index is the record store.
class LocalSink final : public RecordSink {
 public:
  explicit LocalSink(ordering::TidClock& clock) : clock_(clock) {}
  Result<Committed> commit(schema::Store& store, const std::string& did,
                           const std::vector<RecordWrite>& writes,
                           const CommitOptions& options = {}) override;
  Result<void> refresh(schema::Store&, const std::string&) override { return {}; }
  RepoWrites repo_writes() const override { return RepoWrites::kConcurrent; }
  bool index_is_repo() const override { return true; }
  // The index is the repo, and progress commits with the records.
  Result<bool> holds(schema::Store&, const std::string&, const std::string&) override {
    return false;
  }

 private:
  ordering::TidClock& clock_;
};

// Creates waiting on the same sibling group, committed together. A create
// that finds no batch of its group running leads one: with its own, it takes
// every create of that group that queued while the last batch ran (up to
// kMaxBatch) and runs them in one index transaction, each placed after the
// ones before it, so the group's commit is paid once a batch instead of once
// a create. The others wait for their own result.
class CreateQueues {
 public:
  static constexpr std::size_t kMaxBatch = 64;
  struct Job {
    std::string key;  // the repo and the sibling group
    std::function<Result<WriteResult>(schema::Store&)> run;
    std::optional<Result<WriteResult>> result;
    bool done = false;
  };
  // Returns once `job` has its result: run by this thread, leading with
  // `lead` (which must set every result of the batch it is given), or by
  // another create's.
  void submit(Job& job, const std::function<void(const std::vector<Job*>&)>& lead);
  // Creates of `key` queued behind a running batch.
  std::size_t waiting(const std::string& key);

 private:
  struct Stripe {
    std::mutex mutex;
    std::condition_variable done;
    std::deque<Job*> queue;
    std::set<std::string> leading;  // keys with a batch running
  };
  Stripe& stripe_of(const std::string& key);
  std::array<Stripe, 64> stripes_;
};

class Writer {
 public:
  Writer(GroupLocks& locks, ordering::TidClock& clock, RecordSink& sink,
         PlacementFaults* faults = nullptr, CreateQueues* creates = nullptr)
      : locks_(locks), clock_(clock), sink_(sink), faults_(faults), creates_(creates) {}

  Result<WriteResult> create(schema::Store& store, const std::string& did,
                             const NeighbourIntent& intent, const NodeFields& fields);
  Result<WriteResult> move(schema::Store& store, const std::string& did, const std::string& rkey,
                           const NeighbourIntent& intent);
  Result<WriteResult> update(schema::Store& store, const std::string& did, const std::string& rkey,
                             const NodeFields& fields);
  // Deletes the node and its subtree; returns how many nodes went.
  Result<std::size_t> remove(schema::Store& store, const std::string& did, const std::string& rkey);

 private:
  GroupLocks::Guard lock(const std::string& did, std::vector<std::string> groups,
                         TreeAccess tree = TreeAccess::kShared);
  template <class T, class Attempt>
  Result<T> with_refresh(schema::Store& store, const std::string& did, Attempt attempt);
  // Leads a batch of creates of one group (CreateQueues).
  void run_creates(schema::Store& store, const std::string& did, const std::string& group,
                   const std::vector<CreateQueues::Job*>& batch);

  GroupLocks& locks_;
  ordering::TidClock& clock_;
  RecordSink& sink_;
  PlacementFaults* faults_;
  CreateQueues* creates_;
};

// The CID of a record as its owner's repo would compute it (DAG-CBOR,
// sha2-256, of firehose::encode_record_block).
Result<std::string> record_cid(const schema::NodeRecord& record);
Result<std::string> record_cid(const schema::NoteRecord& note);
// The CID of whichever record a write carries (none: a delete).
Result<std::optional<std::string>> record_cid(const RecordWrite& write);

// The writes that create the node `rkey` of `did` from `record`: the node
// record (never with a note inside it), then, when it has a note, the note
// as a record of its own at the same key (committed with it).
void push_created(const std::string& did, const std::string& rkey, schema::NodeRecord record,
                  std::vector<RecordWrite>& writes);

}  // namespace bulleted::appview
