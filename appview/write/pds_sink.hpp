// pds mode: records are committed to their owner's PDS, then to the index.
//
// Every commit is com.atproto.repo.applyWrites with swapCommit set to the
// repo commit the index holds, so a change by anyone else since then fails
// the swap (kRepoChanged) instead of being overwritten; the Writer then
// refreshes (getRepo, diffed into the index) and re-plans once. Plans larger
// than 200 writes (subtree deletes) go in several commits, each applied to
// the index as it is accepted. The PDS's answer (CIDs, rev) is applied at
// once, so callers read their own writes; the rev is noted in WrittenRevs so
// that the firehose echo is a skip.
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "appview/signin/pds_sessions.hpp"
#include "appview/write/writer.hpp"
#include "firehose/ingestor.hpp"

namespace bulleted::appview {

inline constexpr std::size_t kMaxWritesPerCommit = 200;

// The newest commit (rev, CID) of each repo this app view wrote or fetched.
// Thread-safe.
class RepoHeads {
 public:
  struct Head {
    std::string rev;
    std::string cid;
  };
  void set(const std::string& did, Head head);
  std::optional<Head> get(const std::string& did) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, Head> heads_;
};

class PdsSink final : public RecordSink {
 public:
  PdsSink(PdsSessions& sessions, PdsSession& session, RepoHeads& heads,
          firehose::WrittenRevs& written)
      : sessions_(sessions), session_(session), heads_(heads), written_(written) {}

  Result<Committed> commit(schema::Store& store, const std::string& did,
                           const std::vector<RecordWrite>& writes,
                           const CommitOptions& options = {}) override;
  Result<void> refresh(schema::Store& store, const std::string& did) override;
  RepoWrites repo_writes() const override { return RepoWrites::kOneAtATime; }
  Result<bool> holds(schema::Store& store, const std::string& did,
                     const std::string& rkey) override;

 private:
  // The commit CID the index is at; kRepoChanged when the PDS is elsewhere.
  Result<std::string> swap_commit(schema::Store& store, const std::string& did);

  PdsSessions& sessions_;
  PdsSession& session_;
  RepoHeads& heads_;
  firehose::WrittenRevs& written_;
};

// What pds mode adds: sessions, and the repo heads and revs this app view
// wrote (shared with the firehose consumer). `client` reaches the users'
// PDSes; `identity` is the API's resolver.
struct PdsServices {
  PdsServices(std::shared_ptr<firehose::XrpcClient> client, identity::IdentityResolver& identity,
              SecretBox box, firehose::WrittenRevs& written_revs)
      : identity(identity), sessions(client, identity, std::move(box)), written(written_revs) {}
  identity::IdentityResolver& identity;
  PdsSessions sessions;
  RepoHeads heads;
  firehose::WrittenRevs& written;
};

}  // namespace bulleted::appview
