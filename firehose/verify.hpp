// Verification of what the network sends before any of it is indexed.
//
// A #commit is checked against its own blocks here (the commit block names
// the event's repo and rev; every block hashes to its CID; every op's CID is
// what the commit's MST holds at that path; the ops undone on the partial
// tree give `prevData`, the Sync 1.1 proof) and against the repo's signing
// key by whoever knows that key (Ingestor, through RepoKeys). A getRepo CAR
// is checked the same way: its signed commit, and an MST walked from the
// commit's `data` through blocks that hash to their CIDs.
#pragma once

#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "firehose/car.hpp"
#include "firehose/cid.hpp"
#include "firehose/crypto.hpp"
#include "firehose/frame.hpp"
#include "schema/error.hpp"

namespace bulleted::firehose {

// Why verification failed; the name is the `reason` label of
// bulleted_firehose_verification_failures_total.
enum class VerifyReason {
  kSignature,  // not signed by the repo's current key (or high-S, malformed)
  kKey,        // the repo's key could not be found
  kCommit,     // the commit block is missing or does not match the event
  kBlock,      // a block does not hash to its CID
  kMst,        // an op's CID is not what the commit's MST holds
  kInversion,  // undoing the ops does not give prevData
};
inline constexpr std::size_t kVerifyReasonCount = 6;

std::string_view verify_reason_name(VerifyReason reason);

struct VerifyFailure {
  VerifyReason reason;
  std::string message;
};

template <class T>
using Verified = std::expected<T, VerifyFailure>;

// A repo commit object, read and ready for its signature check.
struct SignedCommit {
  std::string did;
  std::string rev;
  Cid data;            // the MST root
  std::string digest;  // sha256 of the DAG-CBOR of the commit without `sig`
  std::string signature;
};

// Reads a commit block: {did, version: 3, data, rev, prev, sig}.
Verified<SignedCommit> read_signed_commit(std::string_view block);

class MstTree;

// Checks that `tree` (a commit's MST) holds what `ops` say at their paths,
// then, when `undo`, sets each path back to what it held before the commit
// (by the ops' `prev`): the tree's root is then the one before the commit.
// True when undoing changed anything.
Verified<bool> check_and_undo_ops(MstTree& tree, const std::vector<CommitOp>& ops, bool undo);

// Checks a #commit against its blocks: everything but the signature.
Verified<SignedCommit> check_commit_proof(const CommitEvent& commit, const CarFile& car);

// Reads the commit a #sync carries (a CAR whose one root is the commit
// block), which must be the event's repo at the event's rev.
Verified<SignedCommit> check_sync_proof(const SyncEvent& sync);

// Checks the signature of a commit with `key`.
Verified<void> check_signature(const SignedCommit& commit, const PublicKey& key);

// Where repo signing keys come from (the DID document's #atproto key).
class RepoKeys {
 public:
  virtual ~RepoKeys() = default;
  // The current key of `did`. `fresh` asks for the DID document again instead
  // of a cached answer; a source may answer from its cache anyway when it
  // refreshed that DID moments ago (so forged frames cannot hammer it).
  virtual Result<PublicKey> key(const std::string& did, bool fresh) = 0;
  // The key when it is known without reading anything, else nullopt: for
  // callers that must not wait on the network.
  virtual std::optional<PublicKey> cached_key(const std::string& /*did*/) { return std::nullopt; }
  // The DID's document changed (#identity): the next key() reads it anew.
  virtual void forget(const std::string& did) = 0;
};

}  // namespace bulleted::firehose
