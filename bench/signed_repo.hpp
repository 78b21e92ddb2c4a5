// A repo as a PDS keeps one, for generated streams and tests: a real MST,
// commits signed with the repo's key, and #commit frames carrying exactly
// what a Sync 1.1 consumer needs (the new nodes, the nodes the inversion
// reads, the record blocks, `prevData` and each op's `prev`). Also the whole
// repo as a getRepo CAR.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "firehose/car.hpp"
#include "firehose/crypto.hpp"
#include "firehose/dag_cbor.hpp"
#include "firehose/mst.hpp"
#include "firehose/mst_tree.hpp"
#include "firehose/verify.hpp"

namespace bulleted::bench {

class SignedRepo {
 public:
  struct Write {
    std::string action;  // create, update, delete
    std::string path;    // collection/rkey
    std::string record;  // the record's DAG-CBOR (create, update)
  };

  SignedRepo(std::string did, firehose::PrivateKey key)
      : did_(std::move(did)), key_(std::move(key)) {}

  const std::string& did() const { return did_; }
  const firehose::PrivateKey& key() const { return key_; }
  const std::optional<std::string>& rev() const { return rev_; }
  // The last commit's CID.
  const std::optional<firehose::Cid>& head() const { return commit_; }
  std::optional<firehose::Cid> current(const std::string& path) const {
    auto it = records_.find(path);
    if (it == records_.end()) return std::nullopt;
    return it->second;
  }

  // Applies `writes` as one commit at `rev` and returns its #commit frame.
  // `signer` signs it (the repo's own key unless a test forges).
  std::string commit(const std::vector<Write>& writes, const std::string& rev, std::int64_t seq,
                     const firehose::PrivateKey* signer = nullptr) {
    using namespace firehose;
    std::optional<Cid> prev_data = data_;
    DagArray ops;
    std::vector<CommitOp> commit_ops;
    std::vector<std::pair<Cid, std::string>> car_blocks;
    std::set<std::string> in_car;
    for (const auto& write : writes) {
      DagMap op{{"path", DagValue{write.path}}, {"action", DagValue{write.action}}};
      const std::optional<Cid> before = current(write.path);
      // A create has no `prev` at all (the lexicon's field is not nullable).
      if (before) op.push_back({"prev", DagValue{*before}});
      const std::size_t slash = write.path.find('/');
      commit_ops.push_back(CommitOp{write.action, write.path.substr(0, slash),
                                    write.path.substr(slash + 1), std::nullopt, before});
      if (write.action == "delete") {
        (void)tree_.remove(write.path);
        records_.erase(write.path);
        op.push_back({"cid", DagValue{nullptr}});
      } else {
        const Cid cid = Cid::of_dag_cbor(write.record);
        (void)tree_.put(write.path, cid);
        records_.insert_or_assign(write.path, cid);
        commit_ops.back().cid = cid;
        blocks_.insert_or_assign(cid.str(), write.record);
        if (in_car.insert(cid.str()).second) car_blocks.emplace_back(cid, write.record);
        op.push_back({"cid", DagValue{cid}});
      }
      ops.push_back(DagValue{std::move(op)});
    }
    const Cid data = *tree_.root([&](const Cid& cid, std::string&& block) {
      blocks_.insert_or_assign(cid.str(), std::move(block));
    });
    // The proof: the nodes the consumer's inversion of these ops reads from
    // the new tree (the changed ones and the neighbours it must open).
    if (!writes.empty()) {
      auto partial = MstTree::load(data, [&](const Cid& cid) -> std::optional<std::string_view> {
        auto it = blocks_.find(cid.str());
        if (it == blocks_.end()) return std::nullopt;
        if (in_car.insert(cid.str()).second) car_blocks.emplace_back(cid, it->second);
        return std::string_view(it->second);
      });
      (void)check_and_undo_ops(*partial, commit_ops, true);
      (void)partial->root();
    }
    DagMap unsigned_commit{{"did", DagValue{did_}},
                           {"rev", DagValue{rev}},
                           {"data", DagValue{data}},
                           {"prev", DagValue{nullptr}},
                           {"version", DagValue{std::int64_t{3}}}};
    const std::string signature =
        (signer != nullptr ? *signer : key_).sign(encode_dag_cbor(DagValue{unsigned_commit}));
    unsigned_commit.push_back({"sig", DagValue{DagBytes{signature}}});
    const std::string commit_block = encode_dag_cbor(DagValue{std::move(unsigned_commit)});
    const Cid commit_cid = Cid::of_dag_cbor(commit_block);
    blocks_.insert_or_assign(commit_cid.str(), commit_block);
    car_blocks.insert(car_blocks.begin(), {commit_cid, commit_block});
    DagMap body{{"ops", DagValue{std::move(ops)}},
                {"rev", DagValue{rev}},
                {"seq", DagValue{seq}},
                {"repo", DagValue{did_}},
                {"time", DagValue{std::string("2026-11-30T12:00:00.000Z")}},
                {"blobs", DagValue{DagArray{}}},
                {"since", rev_ ? DagValue{*rev_} : DagValue{nullptr}},
                {"blocks", DagValue{DagBytes{write_car(commit_cid, car_blocks)}}},
                {"commit", DagValue{commit_cid}},
                {"rebase", DagValue{false}},
                {"tooBig", DagValue{false}}};
    if (prev_data) body.push_back({"prevData", DagValue{*prev_data}});
    rev_ = rev;
    data_ = data;
    commit_ = commit_cid;
    std::string frame = encode_dag_cbor(DagValue{
        DagMap{{"t", DagValue{std::string("#commit")}}, {"op", DagValue{std::int64_t{1}}}}});
    frame += encode_dag_cbor(DagValue{std::move(body)});
    return frame;
  }

  // The whole repo at its last commit, as com.atproto.sync.getRepo sends it.
  std::string car() const {
    using namespace firehose;
    std::vector<std::pair<Cid, std::string>> blocks;
    const std::string& commit_block = blocks_.at(commit_->str());
    blocks.emplace_back(*commit_, commit_block);
    std::vector<Cid> pending{*data_};
    while (!pending.empty()) {
      const Cid cid = pending.back();
      pending.pop_back();
      const std::string& block = blocks_.at(cid.str());
      blocks.emplace_back(cid, block);
      auto node = decode_mst_node(block);
      if (!node) continue;
      if (node->left) pending.push_back(*node->left);
      for (const auto& entry : node->entries) {
        blocks.emplace_back(entry.value, blocks_.at(entry.value.str()));
        if (entry.right) pending.push_back(*entry.right);
      }
    }
    return write_car(*commit_, blocks);
  }

 private:
  std::string did_;
  firehose::PrivateKey key_;
  firehose::MstTree tree_;
  std::map<std::string, std::string> blocks_;     // CID -> block, everything ever written
  std::map<std::string, firehose::Cid> records_;  // path -> record CID
  std::optional<std::string> rev_;
  std::optional<firehose::Cid> data_;
  std::optional<firehose::Cid> commit_;
};

}  // namespace bulleted::bench
