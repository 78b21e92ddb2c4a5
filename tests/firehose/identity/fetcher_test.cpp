// The fetcher every request's outbound call goes through: caps per kind,
// the network policy for the network's addresses, failures remembered, and
// the gate that keeps slow hosts from taking more than its places.
#include "firehose/identity/fetcher.hpp"

#include <gtest/gtest.h>

#include <condition_variable>
#include <future>
#include <thread>

#include "firehose/identity/identity.hpp"
#include "tests/support/fake_xrpc_client.hpp"

namespace bulleted::identity {
namespace {

using testing::FakeXrpcClient;
using testing::reply_of;

// A host that holds every request until released.
class Tarpit {
 public:
  Result<firehose::XrpcReply> hold() {
    std::unique_lock lock(mutex_);
    ++waiting_;
    changed_.notify_all();
    changed_.wait(lock, [&] { return released_; });
    return reply_of(200, "{}");
  }
  void wait_for_waiting(int n) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return waiting_ >= n; });
  }
  void release() {
    std::lock_guard lock(mutex_);
    released_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int waiting_ = 0;
  bool released_ = false;
};

const firehose::XrpcRequest kDocument{.base_url = "https://plc.example", .path = "/did:plc:a"};

TEST(FetcherTest, EachKindHasItsCapAndAnAnswerOverItIsRefused) {
  auto client = std::make_shared<FakeXrpcClient>([](const firehose::XrpcRequest&) {
    return reply_of(200, std::string(fetch_kind(FetchKind::kDidDocument).max_bytes + 1, 'x'));
  });
  auto fetcher = Fetcher::over(client);
  auto big = fetcher->fetch(FetchKind::kDidDocument, Target::kOperator, kDocument);
  ASSERT_FALSE(big.has_value());
  EXPECT_EQ(big.error().code, ErrorCode::kPayloadTooLarge);
  EXPECT_EQ(fetch_kind(FetchKind::kDidDocument).max_bytes, 64u * 1024);
  for (const auto& kind : kFetchKinds) {
    EXPECT_LE(kind.max_bytes, 64u * 1024) << kind.name;
    EXPECT_LE(kind.timeout.count(), 10) << kind.name;
  }
}

TEST(FetcherTest, TheNetworksAddressesPassThePolicyTheOperatorsAreUsedAsGiven) {
  auto client = std::make_shared<FakeXrpcClient>(
      [](const firehose::XrpcRequest&) { return reply_of(200, "{}"); });
  auto fetcher = Fetcher::over(client);
  for (const char* base : {"http://93.184.216.34", "https://127.0.0.1:2583", "https://10.0.0.8",
                           "https://[::1]", "https://[64:ff9b::7f00:1]"}) {
    auto refused = fetcher->fetch(FetchKind::kOAuthEndpoint, Target::kNetwork,
                                  {.method = "POST", .base_url = base, .path = "/revoke"});
    ASSERT_FALSE(refused.has_value()) << base;
    EXPECT_EQ(refused.error().code, ErrorCode::kInvalidRequest) << base;
  }
  EXPECT_EQ(client->calls(), 0u);
  EXPECT_TRUE(fetcher
                  ->fetch(FetchKind::kDidDocument, Target::kOperator,
                          {.base_url = "http://127.0.0.1:2582", .path = "/did:plc:a"})
                  .has_value());
  auto testing = Fetcher::over(client, {.allow_private_addresses = true});
  EXPECT_TRUE(testing
                  ->fetch(FetchKind::kOAuthEndpoint, Target::kNetwork,
                          {.method = "POST", .base_url = "http://127.0.0.1:9", .path = "/x"})
                  .has_value());
  EXPECT_EQ(client->calls(), 2u);
}

TEST(FetcherTest, AFailedGetIsRememberedSoAFloodCostsTheHostOneRead) {
  auto client = std::make_shared<FakeXrpcClient>([](const firehose::XrpcRequest&) {
    return reply_of(404, R"({"message":"DID not registered"})");
  });
  auto fetcher = Fetcher::over(client);
  for (int i = 0; i < 50; ++i) {
    auto answer = fetcher->fetch(FetchKind::kDidDocument, Target::kOperator, kDocument);
    ASSERT_TRUE(answer.has_value());
    EXPECT_EQ(answer->status, 404);
  }
  EXPECT_EQ(client->calls(), 1u);
  EXPECT_EQ(fetcher->sent(), 1u);
  EXPECT_EQ(fetcher->remembered_hits(), 49u);
  // Another address is its own.
  EXPECT_TRUE(fetcher
                  ->fetch(FetchKind::kDidDocument, Target::kOperator,
                          {.base_url = "https://plc.example", .path = "/did:plc:b"})
                  .has_value());
  EXPECT_EQ(client->calls(), 2u);
  // No answer at all is remembered too.
  auto down = std::make_shared<FakeXrpcClient>([](const firehose::XrpcRequest&) {
    return Result<firehose::XrpcReply>(fail(ErrorCode::kUpstreamFailure, "refused"));
  });
  auto fetcher2 = Fetcher::over(down);
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(fetcher2->fetch(FetchKind::kHandle, Target::kOperator, kDocument).has_value());
  }
  EXPECT_EQ(down->calls(), 1u);
}

TEST(FetcherTest, SuccessesAndPostsAreNotRememberedAndMemoryExpires) {
  int status = 500;
  auto client = std::make_shared<FakeXrpcClient>(
      [&](const firehose::XrpcRequest&) { return reply_of(status, "{}"); });
  auto fetcher = Fetcher::over(client, {.negative_seconds = std::chrono::seconds(0)});
  fetcher->fetch(FetchKind::kDidDocument, Target::kOperator, kDocument);
  fetcher->fetch(FetchKind::kDidDocument, Target::kOperator, kDocument);
  EXPECT_EQ(client->calls(), 2u) << "a failure remembered for 0 s is asked again";
  auto remembering = Fetcher::over(client);
  for (int i = 0; i < 3; ++i) {
    remembering->fetch(FetchKind::kOAuthEndpoint, Target::kOperator,
                       {.method = "POST", .base_url = "https://as.example", .path = "/token"});
  }
  EXPECT_EQ(client->calls(), 5u) << "a POST is never answered from memory";
  status = 200;
  for (int i = 0; i < 3; ++i) {
    remembering->fetch(FetchKind::kOAuthMetadata, Target::kOperator,
                       {.base_url = "https://as.example", .path = "/.well-known/x"});
  }
  EXPECT_EQ(client->calls(), 8u) << "successes are the callers' to cache";
}

TEST(FetcherTest, RequestsWaitingOnSlowHostsHoldAtMostTheGatesPlacesAndOthersAreRefusedAtOnce) {
  Tarpit tarpit;
  auto client =
      std::make_shared<FakeXrpcClient>([&](const firehose::XrpcRequest&) { return tarpit.hold(); });
  auto fetcher = Fetcher::over(client);
  FetchGate gate(2);
  auto in_request = [&](std::string who, std::string did) {
    return std::async(std::launch::async, [&, who, did] {
      RequestScope scope(gate, who);
      return fetcher->fetch(FetchKind::kDidDocument, Target::kOperator,
                            {.base_url = "https://plc.example", .path = "/" + did});
    });
  };
  auto first = in_request("addr 198.51.100.1", "did:plc:slow1");
  auto second = in_request("addr 198.51.100.2", "did:plc:slow2");
  tarpit.wait_for_waiting(2);
  EXPECT_EQ(gate.held(), 2);
  // Every place is taken: a third client is told at once to come back.
  auto third = in_request("addr 198.51.100.3", "did:plc:slow3").get();
  ASSERT_FALSE(third.has_value());
  EXPECT_EQ(third.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(third.error().retry_after_seconds, 1);
  // So is a client that already waits on one (one place a client).
  auto again = in_request("addr 198.51.100.1", "did:plc:slow4").get();
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(client->calls(), 2u);
  // Fetches outside a request (the firehose) pass no gate.
  std::thread outside(
      [&] { fetcher->fetch(FetchKind::kDidDocument, Target::kOperator, kDocument); });
  tarpit.wait_for_waiting(3);
  tarpit.release();
  outside.join();
  EXPECT_TRUE(first.get().has_value());
  EXPECT_TRUE(second.get().has_value());
  EXPECT_EQ(gate.held(), 0) << "places are given back with their requests";
  EXPECT_GE(gate.refused(), 2u);
}

TEST(FetcherTest, ANetworkNameIsLookedUpOnlyWithAPlaceAndARefusedAddressIsRemembered) {
  Tarpit tarpit;
  auto client =
      std::make_shared<FakeXrpcClient>([&](const firehose::XrpcRequest&) { return tarpit.hold(); });
  auto fetcher = Fetcher::over(client);
  FetchGate gate(1);
  auto first = std::async(std::launch::async, [&] {
    RequestScope scope(gate, "addr 198.51.100.1");
    return fetcher->fetch(FetchKind::kDidDocument, Target::kNetwork, kDocument);
  });
  tarpit.wait_for_waiting(1);
  // The name's servers are the network's to choose (and to make slow): a
  // request without a place is refused before its name is looked up (a
  // lookup of this name could only fail: .invalid is never delegated).
  auto second = std::async(std::launch::async, [&] {
                  RequestScope scope(gate, "addr 198.51.100.2");
                  return fetcher->fetch(
                      FetchKind::kDidDocument, Target::kNetwork,
                      {.base_url = "https://slow-names.invalid", .path = "/.well-known/did.json"});
                }).get();
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code, ErrorCode::kUnavailable) << second.error().message;
  EXPECT_EQ(fetcher->remembered_hits(), 0u);
  tarpit.release();
  EXPECT_TRUE(first.get().has_value());
  // An address the policy refuses is remembered like a host's failure.
  const firehose::XrpcRequest inside{.base_url = "https://10.0.0.8",
                                     .path = "/.well-known/did.json"};
  for (int i = 0; i < 3; ++i) {
    auto refused = fetcher->fetch(FetchKind::kDidDocument, Target::kNetwork, inside);
    ASSERT_FALSE(refused.has_value());
    EXPECT_EQ(refused.error().code, ErrorCode::kInvalidRequest);
  }
  EXPECT_EQ(fetcher->remembered_hits(), 2u);
  EXPECT_EQ(client->calls(), 1u);
}

TEST(FetcherTest, AClientMayHoldAsManyPlacesAsItsKindOfCallAllows) {
  FetchGate gate(4);
  auto one = gate.try_enter("addr 198.51.100.1", 2);
  auto two = gate.try_enter("addr 198.51.100.1", 2);
  EXPECT_TRUE(one && two);
  EXPECT_FALSE(gate.try_enter("addr 198.51.100.1", 2)) << "its third";
  EXPECT_FALSE(gate.try_enter("addr 198.51.100.1")) << "one place for an identity fetch";
  auto other = gate.try_enter("addr 198.51.100.2");
  EXPECT_TRUE(other);
  EXPECT_EQ(gate.held(), 3);
  one.reset();
  EXPECT_TRUE(gate.try_enter("addr 198.51.100.1", 2));
}

// Fetches to the operator's hosts (the PLC directory) have places of their
// own: requests waiting on the network's hosts cannot take them.
TEST(FetcherTest, TheOperatorsShareIsNotTakenByFetchesToTheNetwork) {
  FetchGate gate(2);
  auto a = gate.try_enter("addr 198.51.100.1");
  auto b = gate.try_enter("addr 198.51.100.2");
  EXPECT_FALSE(gate.try_enter("addr 198.51.100.3")) << "the network's share is taken";
  auto plc = gate.try_enter("addr 198.51.100.3", 1, Target::kOperator);
  EXPECT_TRUE(plc);
  EXPECT_EQ(gate.held(), 3);
  RequestScope scope(gate, "addr 198.51.100.4");
  EXPECT_FALSE(scope.hold());
  EXPECT_TRUE(scope.hold(1, Target::kOperator));
}

TEST(FetcherTest, ARequestMayCountItsPlaceAsItsAccounts) {
  FetchGate gate(8);
  RequestScope first(gate, "addr 198.51.100.1");
  RequestScope second(gate, "addr 198.51.100.2");
  RequestScope third(gate, "addr 198.51.100.3");
  EXPECT_TRUE(first.hold_as("account did:plc:a", 2));
  EXPECT_TRUE(second.hold_as("account did:plc:a", 2));
  EXPECT_FALSE(third.hold_as("account did:plc:a", 2)) << "the account's third, from anywhere";
  EXPECT_TRUE(third.hold_as("account did:plc:b", 2));
  EXPECT_TRUE(third.hold_as("account did:plc:c", 2)) << "a request keeps the place it holds";
  EXPECT_EQ(gate.held(), 3);
}

TEST(FetcherTest, ARequestKeepsItsPlaceForAllItsFetches) {
  auto client = std::make_shared<FakeXrpcClient>(
      [](const firehose::XrpcRequest&) { return reply_of(200, "{}"); });
  auto fetcher = Fetcher::over(client);
  FetchGate gate(1);
  {
    RequestScope scope(gate, "addr 198.51.100.9");
    for (int i = 0; i < 4; ++i) {
      EXPECT_TRUE(fetcher
                      ->fetch(FetchKind::kOAuthMetadata, Target::kOperator,
                              {.base_url = "https://as.example", .path = "/" + std::to_string(i)})
                      .has_value());
    }
    EXPECT_EQ(gate.held(), 1);
  }
  EXPECT_EQ(gate.held(), 0);
  {
    RequestScope scope(gate, "addr 198.51.100.9");
    EXPECT_TRUE(fetcher->fetch(FetchKind::kHandle, Target::kOperator, kDocument).has_value());
  }
}

// A PLC directory that counts reads and knows no DID.
TEST(IdentityFetchTest, FiftyForgedIssuersNamingOneUnknownDidCostTheDirectoryOneRead) {
  auto plc = std::make_shared<FakeXrpcClient>([](const firehose::XrpcRequest&) {
    return reply_of(404, R"({"message":"DID not registered: did:plc:unknown"})");
  });
  IdentityResolver resolver(Fetcher::over(plc), {.plc_url = "https://plc.example"});
  for (int i = 0; i < 50; ++i) {
    auto key = resolver.key("did:plc:unknownunknownunknown", false);
    ASSERT_FALSE(key.has_value());
    EXPECT_EQ(key.error().code, ErrorCode::kNotFound);
  }
  EXPECT_EQ(plc->calls(), 1u);
}

TEST(IdentityFetchTest, AHugeDidDocumentIsRefusedNotParsed) {
  auto host = std::make_shared<FakeXrpcClient>([](const firehose::XrpcRequest&) {
    return reply_of(200, "{\"id\":\"did:plc:a\",\"pad\":\"" + std::string(200 * 1024, 'x') + "\"}");
  });
  IdentityResolver resolver(Fetcher::over(host), {.plc_url = "https://plc.example"});
  auto pds = resolver.pds_of("did:plc:aaaaaaaaaaaaaaaaaaaaaaaa");
  ASSERT_FALSE(pds.has_value());
  EXPECT_EQ(pds.error().code, ErrorCode::kPayloadTooLarge);
}

TEST(IdentityFetchTest, WhileOneRequestReadsADidAnotherRequestForItIsToldToComeBack) {
  Tarpit tarpit;
  auto plc =
      std::make_shared<FakeXrpcClient>([&](const firehose::XrpcRequest&) { return tarpit.hold(); });
  IdentityResolver resolver(Fetcher::over(plc), {.plc_url = "https://plc.example"});
  FetchGate gate(4);
  auto reading = std::async(std::launch::async, [&] {
    RequestScope scope(gate, "addr 198.51.100.1");
    return resolver.pds_of("did:plc:aaaaaaaaaaaaaaaaaaaaaaaa");
  });
  tarpit.wait_for_waiting(1);
  auto other = std::async(std::launch::async, [&] {
                 RequestScope scope(gate, "addr 198.51.100.2");
                 return resolver.pds_of("did:plc:aaaaaaaaaaaaaaaaaaaaaaaa");
               }).get();
  ASSERT_FALSE(other.has_value());
  EXPECT_EQ(other.error().code, ErrorCode::kUnavailable);
  tarpit.release();
  reading.get();
  EXPECT_EQ(plc->calls(), 1u);
}

}  // namespace
}  // namespace bulleted::identity
