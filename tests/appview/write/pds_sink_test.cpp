// pds mode's record sink against a PDS without a network (FakePds): a write
// goes to the PDS (applyWrites with swapCommit) and then into the index
// with the PDS's CIDs; a repo changed by another client is refreshed
// (getRepo) and the write placed again once, whether the change is seen
// before (getLatestCommit) or by the PDS (InvalidSwap); an expired access
// token is refreshed once; the PDS's 429 is the caller's, with its
// Retry-After; a request waits on the PDS only with a place of the
// outbound gate.
#include "appview/write/pds_sink.hpp"

#include <gtest/gtest.h>

#include "appview/signin/pds_sessions.hpp"
#include "appview/write/writer.hpp"
#include "firehose/identity/fetcher.hpp"
#include "tests/support/fake_identity.hpp"
#include "tests/support/fake_pds.hpp"
#include "tests/support/temp_dir.hpp"

namespace bulleted::appview {
namespace {

constexpr const char* kAlice = "did:plc:alicealicealicealicealic";

class PdsSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = schema::Store::open(dir_.file("index.db"));
    ASSERT_TRUE(opened.has_value());
    store_ = std::move(*opened);
    directory_.put(kAlice, testing::FakePds::kUrl, key_.public_key());
    directory_.route_others(
        [this](const firehose::XrpcRequest& request) { return pds_.client()->call(request); });
    identity_ = directory_.resolver({.allow_private_addresses = true});
    sessions_ =
        std::make_unique<PdsSessions>(pds_.client(), *identity_, SecretBox(std::string(32, 'k')));
    auto created = sessions_->create(*store_, kAlice, "app-password");
    ASSERT_TRUE(created.has_value()) << created.error().message;
    session_ = created->session;
    sink_ = std::make_unique<PdsSink>(*sessions_, session_, heads_, written_);
    writer_ = std::make_unique<Writer>(locks_, clock_, *sink_);
  }

  Result<WriteResult> create(const std::string& text) {
    return writer_->create(*store_, kAlice, {}, NodeFields{text, std::nullopt, std::nullopt});
  }
  std::vector<std::string> indexed_texts() {
    std::vector<std::string> out;
    auto page = store_->read().children({.did = kAlice});
    for (const auto& node : page->nodes) out.push_back(node.text);
    return out;
  }

  testing::TempDir dir_;
  std::unique_ptr<schema::Store> store_;
  firehose::PrivateKey key_ = firehose::PrivateKey::generate(firehose::KeyCurve::kSecp256k1);
  testing::FakePds pds_{kAlice, key_};
  testing::FakeIdentityDirectory directory_;
  std::unique_ptr<identity::IdentityResolver> identity_;
  std::unique_ptr<PdsSessions> sessions_;
  PdsSession session_;
  RepoHeads heads_;
  firehose::WrittenRevs written_;
  std::unique_ptr<PdsSink> sink_;
  GroupLocks locks_;
  ordering::TidClock clock_;
  std::unique_ptr<Writer> writer_;
};

TEST_F(PdsSinkTest, AWriteGoesToThePdsThenIntoTheIndexWithThePdsCid) {
  // The index has never seen the repo: the first write refreshes it.
  auto made = create("first");
  ASSERT_TRUE(made.has_value()) << made.error().message;
  EXPECT_EQ(made->rev, *pds_.repo().rev());
  EXPECT_EQ(made->cid, pds_.repo().current("app.bulleted.node/" + made->rkey)->str())
      << "the CID the PDS computed is the index's";
  EXPECT_EQ(made->retries, 1) << "placed again after the refresh";
  EXPECT_EQ(indexed_texts(), (std::vector<std::string>{"written before the app view", "first"}));
  // The next write swaps against the head it knows: no getLatestCommit.
  const int latest = pds_.calls_of("com.atproto.sync.getLatestCommit");
  auto second = create("second");
  ASSERT_TRUE(second.has_value()) << second.error().message;
  EXPECT_EQ(second->retries, 0);
  EXPECT_EQ(pds_.calls_of("com.atproto.sync.getLatestCommit"), latest);
  EXPECT_EQ(written_.newest(kAlice), *pds_.repo().rev()) << "its firehose echo is a skip";
}

TEST_F(PdsSinkTest, ARepoChangedByAnotherClientIsRefreshedAndTheWritePlacedAgain) {
  ASSERT_TRUE(create("first").has_value());
  pds_.write_as_another_client("3zzzzzzzzzzz3", "from another device");
  const int refreshes = pds_.calls_of("com.atproto.sync.getRepo");
  // The head the sink knows is stale: the PDS refuses the swap.
  auto made = create("after it");
  ASSERT_TRUE(made.has_value()) << made.error().message;
  EXPECT_EQ(made->retries, 1);
  EXPECT_EQ(pds_.calls_of("com.atproto.sync.getRepo"), refreshes + 1);
  EXPECT_EQ(indexed_texts(), (std::vector<std::string>{"written before the app view", "first",
                                                       "from another device", "after it"}));
}

TEST_F(PdsSinkTest, AnExpiredAccessTokenIsRefreshedOnceAndTheCallRetried) {
  ASSERT_TRUE(create("first").has_value());
  pds_.expire_access();
  auto made = create("second");
  ASSERT_TRUE(made.has_value()) << made.error().message;
  EXPECT_EQ(pds_.calls_of("com.atproto.server.refreshSession"), 1);
  // The new tokens were kept: a sink made from the stored session writes.
  auto stored = sessions_->find_by_digest(*store_, session_.digest);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->access, session_.access);
}

TEST_F(PdsSinkTest, ThePdssRateLimitIsTheCallersWithItsRetryAfter) {
  ASSERT_TRUE(create("first").has_value());
  pds_.rate_limit(1, 42);
  auto refused = create("second");
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kRateLimited);
  EXPECT_EQ(refused.error().retry_after_seconds, 42);
  EXPECT_EQ(indexed_texts(), (std::vector<std::string>{"written before the app view", "first"}))
      << "nothing written";
  EXPECT_TRUE(create("third").has_value()) << "the next one goes through";
}

// The PDS is whatever the user's DID document names, maybe a slow one: a
// request calls it only with a place of the outbound gate, like every other
// fetch a request makes, or is told at once to come back.
TEST_F(PdsSinkTest, ARequestCallsThePdsOnlyWithAPlaceOfTheOutboundGate) {
  identity::FetchGate gate(2);
  auto first = gate.try_enter("addr 198.51.100.1");
  auto second = gate.try_enter("addr 198.51.100.2");
  ASSERT_TRUE(first && second);
  {
    identity::RequestScope scope(gate, "addr 198.51.100.7");
    auto refused = create("refused");
    ASSERT_FALSE(refused.has_value());
    EXPECT_EQ(refused.error().code, ErrorCode::kUnavailable);
    EXPECT_EQ(refused.error().retry_after_seconds, 1);
  }
  EXPECT_EQ(pds_.calls_of("com.atproto.repo.applyWrites"), 0);
  EXPECT_EQ(pds_.calls_of("com.atproto.sync.getLatestCommit"), 0);
  second.reset();
  {
    identity::RequestScope scope(gate, "addr 198.51.100.7");
    auto made = create("accepted");
    ASSERT_TRUE(made.has_value()) << made.error().message;
    EXPECT_EQ(gate.held(), 2);
  }
  EXPECT_EQ(gate.held(), 1) << "the place is given back with the request";
  EXPECT_EQ(pds_.calls_of("com.atproto.repo.applyWrites"), 1);
}

TEST_F(PdsSinkTest, ASessionWritesItsOwnRepoOnly) {
  auto other = sink_->commit(*store_, "did:plc:bobbobbobbobbobbobbobbobb", {});
  ASSERT_FALSE(other.has_value());
  EXPECT_EQ(other.error().code, ErrorCode::kForbidden);
}

}  // namespace
}  // namespace bulleted::appview
