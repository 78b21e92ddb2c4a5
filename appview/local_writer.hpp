// Writes in local mode, where the app view is the record store: record keys
// and revs are minted here (TIDs), records are kept as JSON with a real
// DAG-CBOR CID, and every write (with any sibling re-keys it needs) is one
// SQLite transaction through the same apply path as ingest.
//
// Thread-safe: each call takes the group locks it needs; `store` is the
// calling thread's own connection.
#pragma once

#include <optional>
#include <string>

#include "appview/placement.hpp"
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
};

class LocalWriter {
 public:
  LocalWriter(GroupLocks& locks, ordering::TidClock& clock, PlacementFaults* faults = nullptr)
      : locks_(locks), clock_(clock), faults_(faults) {}

  Result<WriteResult> create(schema::Store& store, const std::string& did,
                             const NeighbourIntent& intent, const NodeFields& fields);
  Result<WriteResult> move(schema::Store& store, const std::string& did, const std::string& rkey,
                           const NeighbourIntent& intent);
  Result<WriteResult> update(schema::Store& store, const std::string& did, const std::string& rkey,
                             const NodeFields& fields);
  // Deletes the node and its subtree; returns how many nodes went.
  Result<std::size_t> remove(schema::Store& store, const std::string& did, const std::string& rkey);

 private:
  std::string next_rev(schema::Store& store, const std::string& did);

  GroupLocks& locks_;
  ordering::TidClock& clock_;
  PlacementFaults* faults_;
};

// The CID of a record as its owner's repo would compute it (DAG-CBOR,
// sha2-256).
std::string record_cid(const schema::NodeRecord& record);

}  // namespace bulleted::appview
