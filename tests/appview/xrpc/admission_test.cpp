// Admission: what the API decides from a request's head before its body is
// read (credentials, body limits, per-client limits behind proxies, modes),
// and the query and sign-in limits that follow from it.
#include <gtest/gtest.h>

#include <chrono>

#include "appview/imports/import_jobs.hpp"
#include "appview/xrpc/api.hpp"
#include "tests/support/store_fixtures.hpp"
#include "tests/support/temp_dir.hpp"

namespace bulleted::appview {
namespace {

using nlohmann::json;

class AdmitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_.db_path = dir_.file("index.db");
    config_.procedure_rate_per_minute = 5;
    config_.sign_in_per_minute = 3;
    config_.trusted_proxies = {"127.0.0.1"};
    auto store = schema::Store::open(config_.db_path);
    ASSERT_TRUE(store.has_value());
    token_ = new_token();
    ASSERT_TRUE((*store)->tokens().add(token_digest(token_), "did:plc:alice").has_value());
    context_ = std::make_unique<AppContext>(config_);
    // Imports are served (a runner that is never started: nothing runs them).
    imports_ = std::make_unique<ImportRunner>(
        config_.db_path, 1000, [](schema::Store&, const schema::ImportJobRow&) {
          return Result<std::unique_ptr<JobSink>>(
              std::unexpected(Error{ErrorCode::kUnavailable, "not in this test"}));
        });
    context_->services.imports = imports_.get();
    api_ = std::make_unique<Api>(*context_);
  }
  Admission admit(const std::string& nsid, const std::string& peer,
                  std::map<std::string, std::string> headers = {},
                  const std::string& method = "POST") {
    HttpRequestHead head;
    head.method = method;
    head.path = "/xrpc/" + nsid;
    head.remote = peer;
    head.headers = std::move(headers);
    return api_->admit(head);
  }
  static int status(const Admission& a) { return a.refusal ? a.refusal->status : 0; }

  testing::TempDir dir_;
  Config config_;
  std::string token_;
  std::unique_ptr<AppContext> context_;
  std::unique_ptr<ImportRunner> imports_;
  std::unique_ptr<Api> api_;
};

TEST_F(AdmitTest, ProceduresNeedAValidTokenBeforeTheirBody) {
  const auto anonymous = admit("app.bulleted.importOutline", "198.51.100.1");
  EXPECT_EQ(status(anonymous), 401);
  const auto forged =
      admit("app.bulleted.importOutline", "198.51.100.1", {{"authorization", "Bearer nope"}});
  EXPECT_EQ(status(forged), 401);
  const auto valid =
      admit("app.bulleted.importOutline", "198.51.100.1", {{"authorization", "Bearer " + token_}});
  EXPECT_EQ(status(valid), 0);
  EXPECT_EQ(valid.body_limit, config_.max_import_bytes);
  EXPECT_EQ(
      admit("app.bulleted.createNode", "198.51.100.1", {{"authorization", "Bearer " + token_}})
          .body_limit,
      config_.max_body_bytes);
  EXPECT_EQ(admit("app.bulleted.createSession", "198.51.100.2").body_limit, kSignInBodyBytes);
  EXPECT_EQ(admit("app.bulleted.getNode", "198.51.100.2", {}, "GET").body_limit, kQueryBodyBytes);
  EXPECT_EQ(status(admit("app.bulleted.getNode", "198.51.100.2")), 405) << "POST to a query";
  EXPECT_EQ(status(admit("app.bulleted.nothing", "198.51.100.2")), 501);
  EXPECT_EQ(status(admit("app.bulleted.getNode", "198.51.100.2", {}, "TRACE")), 405);
  EXPECT_EQ(status(admit("app.bulleted.deleteSession", "198.51.100.2")), 501)
      << "a pds-mode method in local mode, refused before anything else";
  EXPECT_EQ(admit("_health", "198.51.100.2", {}, "GET").lane, Lane::kOperators)
      << "/xrpc/_health is answered on the operators' thread";
  EXPECT_EQ(admit("app.bulleted.searchNodes", "198.51.100.2", {}, "GET").lane, Lane::kSearches)
      << "searches run in a lane of their own";
  EXPECT_EQ(admit("app.bulleted.getNode", "198.51.100.2", {}, "GET").lane, Lane::kRequests);
}

TEST_F(AdmitTest, ARandomTokenPerRequestIsCountedAgainstTheAddress) {
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(status(admit("app.bulleted.createNode", "198.51.100.7",
                           {{"authorization", "Bearer random-" + std::to_string(i)}})),
              401);
  }
  const auto limited =
      admit("app.bulleted.createNode", "198.51.100.7", {{"authorization", "Bearer random-again"}});
  EXPECT_EQ(status(limited), 429);
  EXPECT_NE(limited.refusal->body.find("RateLimitExceeded"), std::string::npos);
  // The valid token has a bucket of its own, and so has another address.
  EXPECT_EQ(status(admit("app.bulleted.createNode", "198.51.100.7",
                         {{"authorization", "Bearer " + token_}})),
            0);
  EXPECT_EQ(
      status(admit("app.bulleted.createNode", "198.51.100.8", {{"authorization", "Bearer x"}})),
      401);
}

TEST_F(AdmitTest, BehindATrustedProxyEachClientHasItsOwnLimits) {
  // Through the proxy, two clients without valid tokens: the first spends
  // its address's procedures, the second is untouched.
  auto from_proxy = [&](std::map<std::string, std::string> headers) {
    headers["authorization"] = "Bearer not-a-token";
    return status(admit("app.bulleted.createNode", "127.0.0.1", std::move(headers)));
  };
  for (int i = 0; i < 5; ++i) EXPECT_EQ(from_proxy({{"x-forwarded-for", "203.0.113.1"}}), 401);
  EXPECT_EQ(from_proxy({{"x-forwarded-for", "203.0.113.1"}}), 429);
  EXPECT_EQ(from_proxy({{"x-real-ip", "203.0.113.2"}}), 401);
  // A client that is not the proxy can neither pick another's bucket nor
  // escape its own.
  auto direct = [&](const std::string& forwarded) {
    return status(admit("app.bulleted.createNode", "198.51.100.9",
                        {{"authorization", "Bearer not-a-token"}, {"x-forwarded-for", forwarded}}));
  };
  for (int i = 0; i < 5; ++i) EXPECT_EQ(direct("203.0.113." + std::to_string(10 + i)), 401);
  EXPECT_EQ(direct("203.0.113.99"), 429);
  EXPECT_EQ(status(admit("app.bulleted.createSession", "198.51.100.9")), 501)
      << "sign-in is pds mode's (limited per address there, per account in its handler)";
}

TEST_F(AdmitTest, QueriesPayForTheBytesTheyProduce) {
  config_.query_bytes_per_minute = 100 * 1024;
  AppContext context(config_);
  Api api(context);
  HttpRequest request;
  request.method = "GET";
  request.path = "/xrpc/app.bulleted.exportOutline";
  request.query = "repo=did:plc:alice&format=opml";
  request.remote = "198.51.100.20";
  const Admission first = api.admit(request);
  ASSERT_FALSE(first.refusal.has_value());
  // An answer of 200 KiB spends the budget twice over...
  context.query_limits.charge(ClientKey::address("198.51.100.20"), 200 * 1024);
  const Admission next = api.admit(request);
  ASSERT_TRUE(next.refusal.has_value());
  EXPECT_EQ(next.refusal->status, 429);
  bool retry_after = false;
  for (const auto& [name, value] : next.refusal->headers) retry_after |= name == "Retry-After";
  EXPECT_TRUE(retry_after);
  // ...and a streamed answer is charged as it is written. The outline holds
  // one bullet of 30 KB, so that its export outweighs what the bucket
  // refills while the test runs.
  {
    auto store = schema::Store::open(config_.db_path);
    ASSERT_TRUE(store.has_value());
    schema::ApplyBatch batch;
    batch.ops.push_back(testing::upsert({.rkey = "big", .text = std::string(30'000, 'x')}));
    ASSERT_TRUE((*store)->apply(batch).has_value());
  }
  request.remote = "198.51.100.21";
  const auto before = RateLimiter::Clock::now();
  HttpResponse streamed = api.handle(request);
  ASSERT_TRUE(static_cast<bool>(streamed.stream));
  struct Sink final : ResponseStream {
    std::string bytes;
    bool write(std::string_view piece) override {
      bytes += piece;
      return true;
    }
  } sink;
  streamed.stream(sink);
  EXPECT_TRUE(sink.bytes.ends_with("</opml>\n"));
  ASSERT_GT(sink.bytes.size(), 30'000u);
  // The client's bucket was made no earlier than `before`: by `now` it has
  // refilled by at most the rate times the time between. Charged, it holds
  // less than `cost`; not charged, it would hold at least all but the base
  // cost.
  const auto now = RateLimiter::Clock::now();
  const double capacity = 100.0 * 1024;
  const double refilled = std::chrono::duration<double>(now - before).count() * capacity / 60.0;
  const double cost = capacity - static_cast<double>(sink.bytes.size()) + refilled + 1;
  ASSERT_LT(cost, capacity - kQueryBaseCost)
      << "the test ran so long that the refill hides the charge";
  EXPECT_TRUE(context.query_limits.take(ClientKey::address("198.51.100.21"), cost, now).has_value())
      << "the export's bytes were charged";
}

TEST_F(AdmitTest, SignInIsLimitedPerAccountWhateverTheAddress) {
  // pds mode with nothing behind it: every sign-in fails upstream (the
  // handle resolver refuses connections), until the account's attempts are
  // spent and the app view answers 429 without trying.
  config_.sign_in_per_account_per_minute = 3;
  config_.handle_resolver = "http://127.0.0.1:1";
  config_.mode = Mode::kPds;
  config_.allow_password_sessions = true;
  firehose::WrittenRevs written;
  auto client = firehose::make_http_xrpc_client(std::chrono::seconds(5), 1 << 20);
  identity::IdentityResolver identity(
      identity::Fetcher::over(client),
      identity::IdentityOptions{config_.plc_url, config_.handle_resolver,
                                std::chrono::seconds(60)});
  PdsServices pds(client, identity, SecretBox("a key of at least thirty-two characters"), written);
  AppContext context(config_);
  context.services.pds = &pds;
  Api api(context);
  auto attempt = [&](const std::string& identifier, int from) {
    HttpRequest request;
    request.method = "POST";
    request.path = "/xrpc/app.bulleted.createSession";
    request.remote = "198.51.100." + std::to_string(from);
    request.headers["content-type"] = "application/json";
    request.body = json{{"identifier", identifier}, {"password", "guess"}}.dump();
    return api.handle(request).status;
  };
  for (int i = 0; i < 3; ++i) EXPECT_NE(attempt("victim.example.com", 30 + i), 429) << i;
  EXPECT_EQ(attempt("Victim.Example.com", 40), 429) << "the account's attempts, from a new address";
  EXPECT_NE(attempt("someone-else.example.com", 40), 429);
  // And per address, before the body is read (limits.signInPerMinute, 3 here).
  HttpRequestHead head;
  head.method = "POST";
  head.path = "/xrpc/app.bulleted.createSession";
  head.remote = "198.51.100.50";
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(api.admit(head).refusal.has_value()) << i;
  const Admission limited = api.admit(head);
  ASSERT_TRUE(limited.refusal.has_value());
  EXPECT_EQ(limited.refusal->status, 429);
  EXPECT_EQ(api.admit(head).body_limit, kSignInBodyBytes);
}

TEST_F(AdmitTest, PasswordSessionsAreOffInPdsModeUnlessAllowed) {
  config_.mode = Mode::kPds;
  firehose::WrittenRevs written;
  auto client = firehose::make_http_xrpc_client(std::chrono::seconds(5), 1 << 20);
  identity::IdentityResolver identity(identity::Fetcher::over(client), identity::IdentityOptions{});
  PdsServices pds(client, identity, SecretBox("a key of at least thirty-two characters"), written);
  AppContext context(config_);
  context.services.pds = &pds;
  Api api(context);
  HttpRequestHead head;
  head.method = "POST";
  head.path = "/xrpc/app.bulleted.createSession";
  head.remote = "198.51.100.60";
  const Admission off = api.admit(head);
  ASSERT_TRUE(off.refusal.has_value());
  EXPECT_EQ(off.refusal->status, 501);
  EXPECT_NE(off.refusal->body.find("auth.allowPasswordSessions"), std::string::npos);
  config_.allow_password_sessions = true;
  EXPECT_FALSE(api.admit(head).refusal.has_value());
}

TEST_F(AdmitTest, RefusedCredentialsCarryABearerChallenge) {
  const auto anonymous = admit("app.bulleted.createNode", "198.51.100.61");
  ASSERT_TRUE(anonymous.refusal.has_value());
  auto challenge = [](const HttpResponse& response) {
    for (const auto& [name, value] : response.headers) {
      if (name == "WWW-Authenticate") return value;
    }
    return std::string();
  };
  EXPECT_EQ(challenge(*anonymous.refusal), "Bearer realm=\"bulleted\"");
  const auto forged =
      admit("app.bulleted.createNode", "198.51.100.61", {{"authorization", "Bearer bt_nope"}});
  ASSERT_TRUE(forged.refusal.has_value());
  EXPECT_EQ(forged.refusal->status, 401);
  EXPECT_NE(challenge(*forged.refusal).find("error=\"invalid_token\""), std::string::npos);
  // A JWT where no service DID is configured: refused, saying why.
  const auto jwt = admit("app.bulleted.createNode", "198.51.100.61",
                         {{"authorization", "Bearer eyJhbGciOiJFUzI1NksifQ.eyJ9.c2ln"}});
  ASSERT_TRUE(jwt.refusal.has_value());
  EXPECT_EQ(jwt.refusal->status, 401);
  EXPECT_NE(jwt.refusal->body.find("service auth is off"), std::string::npos);
  // ...on queries too, which are otherwise public.
  const auto query = admit("app.bulleted.getNode", "198.51.100.61",
                           {{"authorization", "Bearer eyJhbGciOiJFUzI1NksifQ.eyJ9.c2ln"}}, "GET");
  ASSERT_TRUE(query.refusal.has_value());
  EXPECT_EQ(query.refusal->status, 401);
  EXPECT_FALSE(
      admit("app.bulleted.getNode", "198.51.100.61", {{"authorization", "Bearer bt_x"}}, "GET")
          .refusal.has_value())
      << "an app-view token on a query is ignored, as before";
}

}  // namespace
}  // namespace bulleted::appview
