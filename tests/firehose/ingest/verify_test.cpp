// Verification on the ingest path, with repos built and signed here: honest
// commits on both curves apply; forged ones (another key, a record block
// that is not its CID, ops that do not undo to prevData, an op the MST does
// not hold, a #sync signed by someone else) never reach the index and are
// counted by reason; a rotated key is picked up by one refresh.
#include "firehose/verify.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "bench/signed_repo.hpp"
#include "firehose/ingestor.hpp"
#include "ordering/tid.hpp"
#include "schema/store.hpp"
#include "tests/support/temp_dir.hpp"

namespace bulleted::firehose {
namespace {

using bench::SignedRepo;

// A DID directory held in memory, counting what it is asked.
class StaticKeys final : public RepoKeys {
 public:
  void set(const std::string& did, const PublicKey& key) { keys_.insert_or_assign(did, key); }
  Result<PublicKey> key(const std::string& did, bool fresh) override {
    if (fresh) ++refreshes;
    auto it = keys_.find(did);
    if (it == keys_.end()) return fail(ErrorCode::kNotFound, "no DID document for " + did);
    return it->second;
  }
  void forget(const std::string&) override { ++forgotten; }
  int refreshes = 0;
  int forgotten = 0;

 private:
  std::map<std::string, PublicKey> keys_;
};

std::string node_record(const std::string& text) {
  return encode_dag_cbor(
      DagValue{DagMap{{"$type", DagValue{std::string("app.bulleted.node")}},
                      {"text", DagValue{text}},
                      {"sortKey", DagValue{std::string("a0")}},
                      {"createdAt", DagValue{std::string("2026-11-30T12:00:00.000Z")}}}});
}

std::string path_of(const std::string& rkey) { return "app.bulleted.node/" + rkey; }

CommitEvent decoded(const std::string& frame) {
  auto event = decode_frame(frame);
  EXPECT_TRUE(event.has_value());
  return std::get<CommitEvent>(*event);
}

class VerifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = schema::Store::open(dir_.file("index.db"));
    ASSERT_TRUE(opened.has_value());
    store_ = std::move(*opened);
    ingestor_ = std::make_unique<Ingestor>(*store_, IngestOptions{.keys = &keys_}, metrics_);
    ASSERT_TRUE(ingestor_->start().has_value());
  }

  SignedRepo make_repo(const std::string& name, KeyCurve curve) {
    SignedRepo repo("did:plc:" + name + "aaaaaaaaaaaaaaaaaaaa", PrivateKey::generate(curve));
    keys_.set(repo.did(), repo.key().public_key());
    return repo;
  }

  std::string next_rev() { return clock_.next().str(); }

  void add(CommitEvent commit) {
    ASSERT_TRUE(ingestor_->add(FirehoseEvent{std::move(commit)}).has_value());
  }
  void add_frame(const std::string& frame) { add(decoded(frame)); }

  // The texts the index shows for a repo, by rkey.
  std::map<std::string, std::string> shown(const std::string& did) {
    EXPECT_TRUE(ingestor_->flush().has_value());
    std::map<std::string, std::string> out;
    const auto records = store_->read().indexed_records(did);
    for (const auto& record : *records) {
      if (auto node = store_->read().node(did, record.rkey)) out[record.rkey] = node->text;
    }
    return out;
  }

  std::uint64_t failures(VerifyReason reason) {
    return metrics_.verification_failures[static_cast<std::size_t>(reason)].load();
  }

  testing::TempDir dir_;
  std::unique_ptr<schema::Store> store_;
  FirehoseMetrics metrics_;
  StaticKeys keys_;
  std::unique_ptr<Ingestor> ingestor_;
  ordering::TidClock clock_{3};
  std::int64_t seq_ = 0;
};

TEST_F(VerifyTest, HonestReposOnBothCurvesApplyEveryCommit) {
  for (KeyCurve curve : {KeyCurve::kSecp256k1, KeyCurve::kP256}) {
    SignedRepo repo = make_repo(curve == KeyCurve::kP256 ? "pee" : "kay", curve);
    std::map<std::string, std::string> expected;
    std::vector<std::string> rkeys;
    for (int c = 0; c < 60; ++c) {
      std::vector<SignedRepo::Write> writes;
      std::set<std::string> used;  // paths once per commit, as a PDS writes them
      for (int w = 0; w < 1 + c % 7; ++w) {
        const int kind = (c * 7 + w) % 5;
        if (kind == 4 && rkeys.size() > 3) {  // delete
          const std::string rkey = rkeys[(c + w) % rkeys.size()];
          if (!expected.contains(rkey) || !used.insert(rkey).second) continue;
          writes.push_back({"delete", path_of(rkey), {}});
          expected.erase(rkey);
        } else if (kind == 3 && !expected.empty()) {  // update
          const std::string rkey = expected.begin()->first;
          if (!used.insert(rkey).second) continue;
          const std::string text = "updated " + std::to_string(c) + "/" + std::to_string(w);
          writes.push_back({"update", path_of(rkey), node_record(text)});
          expected[rkey] = text;
        } else {
          const std::string rkey = clock_.next().str();
          used.insert(rkey);
          const std::string text = "node " + std::to_string(c) + "/" + std::to_string(w);
          writes.push_back({"create", path_of(rkey), node_record(text)});
          rkeys.push_back(rkey);
          expected[rkey] = text;
        }
      }
      add_frame(repo.commit(writes, next_rev(), ++seq_));
    }
    EXPECT_EQ(shown(repo.did()), expected);
  }
  for (std::size_t i = 0; i < kVerifyReasonCount; ++i) {
    EXPECT_EQ(metrics_.verification_failures[i].load(), 0u)
        << verify_reason_name(static_cast<VerifyReason>(i));
  }
  EXPECT_GT(metrics_.commits_verified.load(), 100u);
  EXPECT_TRUE(ingestor_->take_resync_requests().empty());
  // Every reason has the name the metrics give it.
  for (std::size_t i = 0; i < kVerifyReasonCount; ++i) {
    EXPECT_EQ(verify_reason_name(static_cast<VerifyReason>(i)), FirehoseMetrics::kVerifyReasons[i]);
  }
}

TEST_F(VerifyTest, ForgedCommitsNeverReachTheIndexAndAreCountedByReason) {
  SignedRepo alice = make_repo("alice", KeyCurve::kSecp256k1);
  // A copy of alice's repo with the same history makes the forgeries, so
  // that the real one can go on afterwards.
  SignedRepo twin("did:plc:aliceaaaaaaaaaaaaaaaaaaaa", alice.key());
  const std::string first = clock_.next().str();
  const std::string rev = next_rev();
  add_frame(alice.commit({{"create", path_of(first), node_record("mine")}}, rev, ++seq_));
  (void)twin.commit({{"create", path_of(first), node_record("mine")}}, rev, 0);
  ASSERT_EQ(shown(alice.did()).size(), 1u);

  const std::string forged_rkey = clock_.next().str();
  const std::vector<SignedRepo::Write> forged_write = {
      {"create", path_of(forged_rkey), node_record("FORGED")}};
  const PrivateKey stranger = PrivateKey::generate(KeyCurve::kSecp256k1);
  const std::string forged_rev = next_rev();
  const std::string honest_frame = twin.commit(forged_write, forged_rev, 0);
  // Correct in every way but the key.
  SignedRepo other("did:plc:aliceaaaaaaaaaaaaaaaaaaaa", alice.key());
  (void)other.commit({{"create", path_of(first), node_record("mine")}}, rev, 0);
  const std::string wrong_key = other.commit(forged_write, forged_rev, ++seq_, &stranger);

  auto expect_refused = [&](CommitEvent commit, VerifyReason reason) {
    const auto before = failures(reason);
    commit.seq = ++seq_;
    add(std::move(commit));
    EXPECT_EQ(failures(reason), before + 1) << verify_reason_name(reason);
    const auto texts = shown(alice.did());
    EXPECT_FALSE(texts.contains(forged_rkey)) << "a forged record is visible";
    EXPECT_EQ(texts.size(), 1u);
    // The repo asks for a resync: the index must learn the truth from its PDS.
    auto wanted = ingestor_->take_resync_requests();
    EXPECT_EQ(wanted, std::vector<std::string>{alice.did()});
    ASSERT_TRUE(ingestor_->resync_from_car(alice.car(), alice.did()).has_value());
  };

  const int refreshes = keys_.refreshes;
  expect_refused(decoded(wrong_key), VerifyReason::kSignature);
  EXPECT_EQ(keys_.refreshes, refreshes + 1) << "one DID refresh before giving up";

  {  // A record block that does not hash to its CID.
    CommitEvent commit = decoded(honest_frame);
    const std::size_t at = commit.blocks.find("FORGED");
    ASSERT_NE(at, std::string::npos);
    commit.blocks[at] = 'f';
    expect_refused(std::move(commit), VerifyReason::kBlock);
  }
  {  // Ops that do not undo to prevData: the commit claims to build on another tree.
    CommitEvent commit = decoded(honest_frame);
    commit.prev_data = Cid::of_dag_cbor("some other tree");
    expect_refused(std::move(commit), VerifyReason::kInversion);
  }
  {  // An op whose record is not what the MST holds.
    CommitEvent commit = decoded(honest_frame);
    commit.ops[0].cid = Cid::of_dag_cbor(node_record("FORGED too"));
    expect_refused(std::move(commit), VerifyReason::kMst);
  }
  {  // The commit block of another rev.
    CommitEvent commit = decoded(honest_frame);
    commit.rev = next_rev();
    expect_refused(std::move(commit), VerifyReason::kCommit);
  }
  // The honest repo goes on and is shown.
  const std::string later = clock_.next().str();
  add_frame(alice.commit({{"create", path_of(later), node_record("later")}}, next_rev(), ++seq_));
  EXPECT_TRUE(shown(alice.did()).contains(later));
}

TEST_F(VerifyTest, ACommitThatBuildsOnAnotherTreeThanTheIndexsIsAChainBreak) {
  // Two histories of one repo, both signed with its key: the index followed
  // the first; a commit of the second names the same `since` but builds on
  // the other tree (its own proof holds). Nothing of it applies until the
  // repo has been fetched again.
  SignedRepo dave = make_repo("dave", KeyCurve::kSecp256k1);
  SignedRepo fork("did:plc:daveaaaaaaaaaaaaaaaaaaaa", dave.key());
  const std::string rev = next_rev();
  add_frame(dave.commit({{"create", path_of("a"), node_record("a")}}, rev, ++seq_));
  (void)fork.commit({{"create", path_of("b"), node_record("b")}}, rev, 0);
  ASSERT_EQ(shown(dave.did()).size(), 1u);
  ASSERT_TRUE(ingestor_->take_resync_requests().empty());
  add_frame(fork.commit({{"create", path_of("c"), node_record("c")}}, next_rev(), ++seq_));
  EXPECT_EQ(shown(dave.did()), (std::map<std::string, std::string>{{"a", "a"}}));
  EXPECT_EQ(ingestor_->take_resync_requests(), std::vector<std::string>{dave.did()});
  for (std::size_t i = 0; i < kVerifyReasonCount; ++i) {
    EXPECT_EQ(metrics_.verification_failures[i].load(), 0u) << "the commit itself is sound";
  }
}

TEST_F(VerifyTest, OnlyReposWithRecordsAreTakenUpAndOnlyThoseWithHistoryAreFetchedFirst) {
  // A new account: its first commit holds nothing, its first record comes
  // next, on the empty tree. Nothing was before it: applied at once.
  SignedRepo erin = make_repo("erin", KeyCurve::kSecp256k1);
  (void)erin.commit({}, next_rev(), 0);  // not on the stream the index saw
  add_frame(erin.commit({{"create", path_of("e"), node_record("e")}}, next_rev(), ++seq_));
  EXPECT_EQ(shown(erin.did()), (std::map<std::string, std::string>{{"e", "e"}}));
  // A repo whose first record the index did not see: fetched first.
  SignedRepo fred = make_repo("fred", KeyCurve::kP256);
  (void)fred.commit({{"create", path_of("f1"), node_record("f1")}}, next_rev(), 0);
  add_frame(fred.commit({{"create", path_of("f2"), node_record("f2")}}, next_rev(), ++seq_));
  EXPECT_TRUE(shown(fred.did()).empty());
  EXPECT_EQ(ingestor_->take_resync_requests(), std::vector<std::string>{fred.did()});
  // An account of another app, from its first commit on: never taken up,
  // never verified.
  SignedRepo gail = make_repo("gail", KeyCurve::kSecp256k1);
  const auto verified = metrics_.commits_verified.load();
  add_frame(gail.commit({}, next_rev(), ++seq_));
  add_frame(
      gail.commit({{"create", "app.bsky.feed.like/g", node_record("g")}}, next_rev(), ++seq_));
  ASSERT_TRUE(ingestor_->flush().has_value());
  EXPECT_FALSE(store_->read().repo(gail.did())->has_value());
  EXPECT_EQ(metrics_.commits_verified.load(), verified);
  EXPECT_EQ(ingestor_->take_resync_requests(), std::vector<std::string>{fred.did()});
}

TEST_F(VerifyTest, ARotatedKeyIsPickedUpByOneRefreshAndAnUnknownKeyRefuses) {
  SignedRepo bob = make_repo("bob", KeyCurve::kP256);
  add_frame(bob.commit({{"create", path_of("first"), node_record("one")}}, next_rev(), ++seq_));
  ASSERT_EQ(shown(bob.did()).size(), 1u);
  // bob's PDS rotates his key: commits are signed with the new one, which
  // the cached document does not have yet.
  const PrivateKey rotated = PrivateKey::generate(KeyCurve::kSecp256k1);
  StaticKeys* keys = &keys_;
  class Rotating final : public RepoKeys {
   public:
    Rotating(StaticKeys& inner, std::string did, PublicKey next)
        : inner_(inner), did_(std::move(did)), next_(std::move(next)) {}
    Result<PublicKey> key(const std::string& did, bool fresh) override {
      if (fresh && did == did_) inner_.set(did, next_);
      return inner_.key(did, fresh);
    }
    void forget(const std::string& did) override { inner_.forget(did); }

   private:
    StaticKeys& inner_;
    std::string did_;
    PublicKey next_;
  } rotating(*keys, bob.did(), rotated.public_key());
  ingestor_.reset();
  ingestor_ = std::make_unique<Ingestor>(*store_, IngestOptions{.keys = &rotating}, metrics_);
  ASSERT_TRUE(ingestor_->start().has_value());
  add_frame(bob.commit({{"create", path_of("second"), node_record("two")}}, next_rev(), ++seq_,
                       &rotated));
  EXPECT_EQ(shown(bob.did()).size(), 2u);
  EXPECT_EQ(failures(VerifyReason::kSignature), 0u);
  EXPECT_EQ(keys_.refreshes, 1);

  // A repo whose DID document cannot be found: nothing of it applies.
  SignedRepo nobody("did:plc:nobodyaaaaaaaaaaaaaaaaaa", PrivateKey::generate(KeyCurve::kP256));
  add_frame(nobody.commit({{"create", path_of("x"), node_record("x")}}, next_rev(), ++seq_));
  EXPECT_TRUE(shown(nobody.did()).empty());
  EXPECT_EQ(failures(VerifyReason::kKey), 1u);
  // A repo the index does not track is not fetched for a refused commit:
  // anyone can name any DID.
  EXPECT_TRUE(ingestor_->take_resync_requests().empty());
  EXPECT_FALSE(store_->read().repo(nobody.did())->has_value());
}

TEST_F(VerifyTest, SyncsAndRepoCarsAreVerifiedToo) {
  SignedRepo carol = make_repo("carol", KeyCurve::kSecp256k1);
  add_frame(carol.commit({{"create", path_of("a"), node_record("a")}}, next_rev(), ++seq_));
  // carol's repo moves on without the stream seeing it; a #sync says so.
  SignedRepo forger("did:plc:carolaaaaaaaaaaaaaaaaaaaa",
                    PrivateKey::generate(KeyCurve::kSecp256k1));
  (void)carol.commit({{"create", path_of("b"), node_record("b")}}, next_rev(), 0);
  (void)forger.commit({{"create", path_of("evil"), node_record("evil")}}, *carol.rev(), 0);
  auto sync_of = [&](const SignedRepo& repo) {
    const std::string car = repo.car();
    auto parsed = CarFile::parse(car);
    SyncEvent sync{.seq = ++seq_, .did = carol.did(), .rev = *repo.rev(), .time = "", .blocks = {}};
    // The commit block alone, as a #sync carries it.
    const Cid root = parsed->roots()[0];
    sync.blocks = write_car(root, {{root, std::string(*parsed->block(root))}});
    return sync;
  };
  ASSERT_TRUE(ingestor_->add(FirehoseEvent{sync_of(forger)}).has_value());
  EXPECT_EQ(failures(VerifyReason::kSignature), 1u);
  EXPECT_TRUE(ingestor_->take_resync_requests().empty()) << "a forged #sync moves nothing";
  ASSERT_TRUE(ingestor_->add(FirehoseEvent{sync_of(carol)}).has_value());
  EXPECT_EQ(ingestor_->take_resync_requests(), std::vector<std::string>{carol.did()});
  // The resync's CAR must be carol's own: the forger's is refused.
  EXPECT_FALSE(ingestor_->resync_from_car(forger.car(), carol.did()).has_value());
  EXPECT_EQ(failures(VerifyReason::kSignature), 2u);
  EXPECT_FALSE(shown(carol.did()).contains("evil"));
  ASSERT_TRUE(ingestor_->resync_from_car(carol.car(), carol.did()).has_value());
  EXPECT_EQ(shown(carol.did()), (std::map<std::string, std::string>{{"a", "a"}, {"b", "b"}}));
}

}  // namespace
}  // namespace bulleted::firehose
