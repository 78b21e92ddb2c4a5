#include "firehose/verify.hpp"

#include <map>

#include "firehose/dag_cbor.hpp"
#include "firehose/mst_tree.hpp"
#include "schema/enum_names.hpp"

namespace bulleted::firehose {
namespace {

std::unexpected<VerifyFailure> failed(VerifyReason reason, std::string message) {
  return std::unexpected(VerifyFailure{reason, std::move(message)});
}

// What one path held before a commit and holds after it, over all of the
// commit's ops on that path (a commit may create and delete one record).
struct PathChange {
  std::optional<Cid> before;
  std::optional<Cid> after;
  bool before_known = true;  // false: an update or delete without `prev`
};

}  // namespace

namespace {

// The names are the metric's label values.
constexpr schema::EnumNames<VerifyReason, 6> kVerifyReasonNames{{{
    {VerifyReason::kSignature, "signature"},
    {VerifyReason::kKey, "key"},
    {VerifyReason::kCommit, "commit"},
    {VerifyReason::kBlock, "block"},
    {VerifyReason::kMst, "mst"},
    {VerifyReason::kInversion, "inversion"},
}}};
static_assert(kVerifyReasonNames.covers(VerifyReason::kInversion));

}  // namespace

std::string_view verify_reason_name(VerifyReason reason) { return kVerifyReasonNames.name(reason); }

Verified<SignedCommit> read_signed_commit(std::string_view block) {
  auto value = decode_dag_cbor(block);
  if (!value) return failed(VerifyReason::kCommit, "commit block: " + value.error().message);
  const DagMap* map = value->as_map();
  const DagValue* did = value->find("did");
  const DagValue* version = value->find("version");
  const DagValue* data = value->find("data");
  const DagValue* rev = value->find("rev");
  const DagValue* sig = value->find("sig");
  if (map == nullptr || did == nullptr || did->as_text() == nullptr || version == nullptr ||
      version->as_integer() == nullptr || data == nullptr || data->as_cid() == nullptr ||
      rev == nullptr || rev->as_text() == nullptr || sig == nullptr || sig->as_bytes() == nullptr) {
    return failed(VerifyReason::kCommit, "the commit is not {did, version, data, rev, sig}");
  }
  if (*version->as_integer() != 3) {
    return failed(VerifyReason::kCommit,
                  "commit version " + std::to_string(*version->as_integer()) + " is not 3");
  }
  SignedCommit out{*did->as_text(), *rev->as_text(), *data->as_cid(), {}, sig->as_bytes()->data};
  DagMap unsigned_commit;
  unsigned_commit.reserve(map->size() - 1);
  for (const auto& [key, field] : *map) {
    if (key != "sig") unsigned_commit.emplace_back(key, field);
  }
  out.digest = sha256(encode_dag_cbor(DagValue(std::move(unsigned_commit))));
  return out;
}

Verified<SignedCommit> check_sync_proof(const SyncEvent& sync) {
  auto car = CarFile::parse(sync.blocks);
  if (!car) return failed(VerifyReason::kCommit, car.error().message);
  if (car->roots().size() != 1) return failed(VerifyReason::kCommit, "a #sync has one root");
  auto block = car->block(car->roots()[0]);
  if (!block) {
    return failed(
        block.error().code == ErrorCode::kNotFound ? VerifyReason::kCommit : VerifyReason::kBlock,
        block.error().message);
  }
  auto commit = read_signed_commit(*block);
  if (commit && (commit->did != sync.did || commit->rev != sync.rev)) {
    return failed(VerifyReason::kCommit, "the #sync carries " + commit->did + " at " + commit->rev +
                                             ", not " + sync.did + " at " + sync.rev);
  }
  return commit;
}

Verified<void> check_signature(const SignedCommit& commit, const PublicKey& key) {
  const SignatureCheck check = verify_digest(key, commit.digest, commit.signature);
  if (check == SignatureCheck::kValid) return {};
  return failed(VerifyReason::kSignature, "commit " + commit.rev + " of " + commit.did +
                                              ": signature " +
                                              std::string(signature_check_name(check)));
}

Verified<bool> check_and_undo_ops(MstTree& tree, const std::vector<CommitOp>& ops, bool undo) {
  std::map<std::string, PathChange> changes;
  for (const auto& op : ops) {
    const std::string path = op.collection + "/" + op.rkey;
    std::optional<Cid> after = op.action == "delete" ? std::nullopt : op.cid;
    if (op.action != "delete" && !op.cid) {
      return failed(VerifyReason::kMst, op.action + " of " + path + " names no record");
    }
    auto [it, first] = changes.try_emplace(path);
    if (first) {
      if (op.action == "create") {
        it->second.before.reset();
      } else if (op.prev) {
        it->second.before = op.prev;
      } else {
        it->second.before_known = false;
      }
    }
    it->second.after = after;
  }
  for (const auto& [path, change] : changes) {
    auto held = tree.get(path);
    if (!held) return failed(VerifyReason::kMst, path + ": " + held.error().message);
    if (*held != change.after) {
      return failed(VerifyReason::kMst, path + ": the MST does not hold what the ops say");
    }
  }
  if (!undo) return false;
  bool changed = false;
  for (const auto& [path, change] : changes) {
    if (change.before == change.after && change.before_known) continue;
    if (!change.before_known) {
      return failed(VerifyReason::kInversion, path + ": an op without prev cannot be undone");
    }
    auto undone = change.before ? tree.put(path, *change.before) : tree.remove(path);
    if (!undone) return failed(VerifyReason::kInversion, path + ": " + undone.error().message);
    changed = true;
  }
  return changed;
}

Verified<SignedCommit> check_commit_proof(const CommitEvent& commit, const CarFile& car) {
  if (!commit.commit) return failed(VerifyReason::kCommit, "the event names no commit block");
  if (auto r = car.verify_blocks(); !r) return failed(VerifyReason::kBlock, r.error().message);
  auto block = car.raw_block(*commit.commit);
  if (!block) return failed(VerifyReason::kCommit, "the commit block is not in the blocks");
  auto signed_commit = read_signed_commit(*block);
  if (!signed_commit) return signed_commit;
  if (signed_commit->did != commit.repo || signed_commit->rev != commit.rev) {
    return failed(VerifyReason::kCommit, "the commit block is " + signed_commit->did + " at " +
                                             signed_commit->rev + ", the event " + commit.repo +
                                             " at " + commit.rev);
  }

  if (commit.ops.empty()) {
    // Nothing changed (an empty applyWrites): the tree is the one before.
    if (commit.prev_data && !(*commit.prev_data == signed_commit->data)) {
      return failed(VerifyReason::kInversion, "a commit without ops changed the MST");
    }
    return signed_commit;
  }
  const MstBlockSource source = [&car](const Cid& cid) { return car.raw_block(cid); };
  auto tree = MstTree::load(signed_commit->data, source);
  if (!tree) return failed(VerifyReason::kMst, "the commit's MST: " + tree.error().message);
  // Without prevData (before Sync 1.1) there is nothing to prove against.
  auto undone = check_and_undo_ops(*tree, commit.ops, commit.prev_data.has_value());
  if (!undone) return std::unexpected(undone.error());
  if (!commit.prev_data) return signed_commit;
  auto before = tree->root();
  if (!before) return failed(VerifyReason::kInversion, before.error().message);
  if (!(*before == *commit.prev_data)) {
    return failed(VerifyReason::kInversion, "undoing the ops gives " + before->str() +
                                                ", not prevData " + commit.prev_data->str());
  }
  return signed_commit;
}

}  // namespace bulleted::firehose
