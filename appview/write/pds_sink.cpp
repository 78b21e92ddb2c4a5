#include "appview/write/pds_sink.hpp"

#include <spdlog/spdlog.h>

#include "firehose/cid.hpp"
#include "firehose/records.hpp"
#include "schema/syntax.hpp"

namespace bulleted::appview {
namespace {

constexpr std::string_view kWritePrefix = "com.atproto.repo.applyWrites#";

nlohmann::json write_json(const RecordWrite& write) {
  const char* kind = write.kind == schema::OpKind::kCreate   ? "create"
                     : write.kind == schema::OpKind::kUpdate ? "update"
                                                             : "delete";
  nlohmann::json json = {{"$type", std::string(kWritePrefix) + kind},
                         {"collection", schema::collection_name(write.collection)},
                         {"rkey", write.rkey}};
  if (auto value = write.value()) json["value"] = std::move(*value);
  return json;
}

// Where the commit of writes from `start` ends: at most kMaxWritesPerCommit
// of them, and never between a node's write and its note's.
std::size_t commit_end(const std::vector<RecordWrite>& writes, std::size_t start) {
  std::size_t end = std::min(writes.size(), start + kMaxWritesPerCommit);
  while (end < writes.size() && end - start > 1 &&
         writes[end].collection == schema::Collection::kNote &&
         writes[end - 1].rkey == writes[end].rkey) {
    --end;
  }
  // A note's delete goes before its node's: the same holds the other way.
  while (end < writes.size() && end - start > 1 &&
         writes[end - 1].collection == schema::Collection::kNote &&
         writes[end - 1].rkey == writes[end].rkey) {
    --end;
  }
  return end;
}

}  // namespace

void RepoHeads::set(const std::string& did, Head head) {
  std::lock_guard lock(mutex_);
  auto& slot = heads_[did];
  if (slot.rev <= head.rev) slot = std::move(head);
}

std::optional<RepoHeads::Head> RepoHeads::get(const std::string& did) const {
  std::lock_guard lock(mutex_);
  auto it = heads_.find(did);
  if (it == heads_.end()) return std::nullopt;
  return it->second;
}

Result<std::string> PdsSink::swap_commit(schema::Store& store, const std::string& did) {
  auto repo = store.read().repo(did);
  if (!repo) return std::unexpected(repo.error());
  const std::optional<std::string> indexed = *repo ? (*repo)->rev : std::nullopt;
  if (auto head = heads_.get(did); head && indexed && head->rev == *indexed) return head->cid;
  auto reply = sessions_.call(
      store, session_, {.path = "/xrpc/com.atproto.sync.getLatestCommit", .query = {{"did", did}}});
  if (!reply) return std::unexpected(reply.error());
  if (reply->status != 200) return std::unexpected(pds_error(*reply, "getLatestCommit"));
  auto json = reply->json();
  RepoHeads::Head head{firehose::json_text(json, {"rev"}), firehose::json_text(json, {"cid"})};
  if (head.rev.empty() || head.cid.empty()) {
    return fail(ErrorCode::kUpstreamFailure, "getLatestCommit: the PDS's answer is incomplete");
  }
  if (!indexed || *indexed != head.rev) {
    return fail(ErrorCode::kRepoChanged, "the index is not at the repo's rev " + head.rev);
  }
  heads_.set(did, head);
  return head.cid;
}

Result<Committed> PdsSink::commit(schema::Store& store, const std::string& did,
                                  const std::vector<RecordWrite>& writes,
                                  const CommitOptions& options) {
  if (did != session_.did) return fail(ErrorCode::kForbidden, "a session writes its own repo only");
  std::string head;
  if (options.swap) {
    auto swap = swap_commit(store, did);
    if (!swap) return std::unexpected(swap.error());
    head = *swap;
  }
  Committed committed;
  for (std::size_t start = 0, end = 0; start < writes.size(); start = end) {
    end = commit_end(writes, start);
    nlohmann::json batch = nlohmann::json::array();
    for (std::size_t i = start; i < end; ++i) batch.push_back(write_json(writes[i]));
    nlohmann::json body = {{"repo", did}, {"writes", std::move(batch)}};
    if (options.swap) body["swapCommit"] = head;
    auto reply = sessions_.call(
        store, session_,
        {.method = "POST", .path = "/xrpc/com.atproto.repo.applyWrites", .body = std::move(body)});
    if (!reply) return std::unexpected(reply.error());
    if (reply->status != 200) return std::unexpected(pds_error(*reply, "applyWrites"));
    auto json = reply->json();
    const std::string rev = firehose::json_text(json, {"commit", "rev"});
    const std::string cid = firehose::json_text(json, {"commit", "cid"});
    auto results = json.is_object() ? json.find("results") : json.end();
    if (rev.empty() || cid.empty() || results == json.end() || !results->is_array() ||
        results->size() != end - start) {
      return fail(ErrorCode::kUpstreamFailure, "applyWrites: the PDS's answer is incomplete");
    }
    // What the PDS accepted goes into the index now, with its CIDs and rev.
    schema::ApplyBatch applied;
    for (std::size_t i = start; i < end; ++i) {
      schema::RecordOp op;
      op.kind = writes[i].kind;
      op.did = did;
      op.rkey = writes[i].rkey;
      op.rev = rev;
      op.collection = writes[i].collection;
      if (writes[i].kind != schema::OpKind::kDelete) {
        op.cid = firehose::json_text((*results)[i - start], {"cid"});
        if (op.cid.empty()) {
          auto cid = record_cid(writes[i]);
          if (!cid) return std::unexpected(cid.error());
          op.cid = cid->value_or("");
        }
        op.record = writes[i].record;
        op.note = writes[i].note;
        op.kept = writes[i].kept;
        if (op.record || op.kept) committed.cids[op.rkey] = op.cid;
      }
      applied.ops.push_back(std::move(op));
    }
    if (options.import_done && end == writes.size()) applied.import_done = options.import_done;
    if (options.swap) {
      // The PDS was at the index's commit: this commit follows it directly.
      applied.repo_revs.emplace_back(did, rev);
      written_.note(did, rev);
      heads_.set(did, {rev, cid});
    }
    // Without a swap, commits by others may lie between the index's rev and
    // this one: the repo's rev is left for the firehose to advance, and the
    // echo of this commit finds its records already in place.
    auto outcome = store.apply(applied);
    if (!outcome) {
      // The PDS has it; the firehose (or the next refresh) brings it in.
      spdlog::error("pds: commit {} of {} was accepted but not indexed: {}", rev, did,
                    outcome.error().message);
      return std::unexpected(outcome.error());
    }
    committed.applied += outcome->applied;
    committed.rev = rev;
    auto header_number = [&](const char* name) -> std::optional<std::int64_t> {
      auto value = reply->header(name);
      if (!value) return std::nullopt;
      try {
        return std::stoll(*value);
      } catch (const std::exception&) {
        return std::nullopt;
      }
    };
    committed.rate_remaining = header_number("ratelimit-remaining");
    committed.rate_reset = header_number("ratelimit-reset");
    if (options.swap) head = cid;
  }
  return committed;
}

Result<bool> PdsSink::holds(schema::Store& store, const std::string& did, const std::string& rkey) {
  auto reply = sessions_.call(
      store, session_,
      {.path = "/xrpc/com.atproto.repo.getRecord",
       .query = {
           {"repo", did}, {"collection", std::string(schema::kNodeCollection)}, {"rkey", rkey}}});
  if (!reply) return std::unexpected(reply.error());
  if (reply->status == 200) return true;
  if (reply->error_name() == "RecordNotFound") return false;
  return std::unexpected(pds_error(*reply, "getRecord"));
}

Result<void> PdsSink::refresh(schema::Store& store, const std::string& did) {
  auto reply = sessions_.call(store, session_,
                              {.path = "/xrpc/com.atproto.sync.getRepo", .query = {{"did", did}}});
  if (!reply) return std::unexpected(reply.error());
  if (reply->status != 200) return std::unexpected(pds_error(*reply, "getRepo"));
  firehose::FirehoseMetrics metrics;
  firehose::Ingestor ingestor(store, {.written = &written_}, metrics);
  auto snapshot = ingestor.resync_from_car(reply->body, did);
  if (!snapshot) {
    Error error = snapshot.error();
    error.message = "getRepo: " + error.message;
    return std::unexpected(error);
  }
  written_.note(did, snapshot->rev);
  heads_.set(did, {snapshot->rev, snapshot->commit_cid});
  spdlog::info("pds: refreshed {} from its PDS at rev {}", did, snapshot->rev);
  return {};
}

}  // namespace bulleted::appview
