// Query answers are bounded in bytes before they are written: every page
// (getChildren, getWindow, getChanges, getAncestors) stops short of
// limits.maxAnswerBytes and of what the client's query budget holds, which
// is granted before the answer is produced; getSubtree's budget counts the
// node's URI however long its DID. Through Api::handle, as requests come.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <set>

#include "appview/xrpc/api.hpp"
#include "tests/support/store_fixtures.hpp"
#include "tests/support/temp_dir.hpp"

namespace bulleted::appview {
namespace {

using nlohmann::json;

constexpr std::size_t kAnswer = 256 * 1024;
constexpr const char* kDid = "did:plc:fatfatfatfatfatfatfatfat";

class AnswerBoundsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_.db_path = dir_.file("index.db");
    config_.max_answer_bytes = kAnswer;
    config_.query_bytes_per_minute = 0;  // the per-answer bound alone
    store_ = std::move(*schema::Store::open(config_.db_path));
  }
  void start() {
    context_ = std::make_unique<AppContext>(config_);
    api_ = std::make_unique<Api>(*context_);
  }
  void apply(std::vector<schema::RecordOp> ops) {
    schema::ApplyBatch batch;
    batch.ops = std::move(ops);
    ASSERT_TRUE(store_->apply(batch).has_value());
  }
  // 40 siblings of 60 KB each: 2.4 MB, ten times an answer.
  void fat_siblings() {
    std::vector<schema::RecordOp> ops;
    for (int i = 0; i < 40; ++i) {
      testing::NodeSpec spec{.did = kDid, .rkey = "n" + std::to_string(1000 + i)};
      spec.sort_key = "a" + std::to_string(i % 10);
      spec.text = std::string(60'000, static_cast<char>('a' + i % 26));
      ops.push_back(testing::upsert(spec));
    }
    apply(std::move(ops));
  }
  HttpResponse get(const std::string& method, const std::string& query,
                   const std::string& from = "198.51.100.7") {
    HttpRequest request;
    request.method = "GET";
    request.path = "/xrpc/app.bulleted." + method;
    request.query = query;
    request.remote = from;
    return api_->handle(request);
  }

  testing::TempDir dir_;
  Config config_;
  std::unique_ptr<schema::Store> store_;
  std::unique_ptr<AppContext> context_;
  std::unique_ptr<Api> api_;
};

TEST_F(AnswerBoundsTest, PagesOfFatSiblingsStopShortOfTheBoundAndContinueWithoutSkipOrRepeat) {
  fat_siblings();
  start();
  std::set<std::string> seen;
  std::string cursor;
  int pages = 0;
  do {
    const HttpResponse answer = get("getChildren", "repo=" + std::string(kDid) + "&limit=1000" +
                                                       (cursor.empty() ? "" : "&cursor=" + cursor));
    ASSERT_EQ(answer.status, 200) << answer.body.substr(0, 200);
    EXPECT_LE(answer.body.size(), kAnswer);
    const json page = json::parse(answer.body);
    EXPECT_FALSE(page["nodes"].empty()) << "a page holds at least one node";
    for (const auto& node : page["nodes"]) {
      EXPECT_TRUE(seen.insert(node["rkey"].get<std::string>()).second) << "repeated";
    }
    cursor = page.value("cursor", "");
    ++pages;
  } while (!cursor.empty() && pages < 100);
  EXPECT_EQ(seen.size(), 40u);
  EXPECT_GE(pages, 10);
}

TEST_F(AnswerBoundsTest, WindowsChangesAndAncestorsAreBoundedToo) {
  fat_siblings();
  // A chain of 50 fat ancestors above "leaf".
  std::vector<schema::RecordOp> chain;
  for (int i = 0; i < 50; ++i) {
    testing::NodeSpec spec{.did = kDid, .rkey = "c" + std::to_string(100 + i)};
    if (i > 0) spec.parent_rkey = "c" + std::to_string(100 + i - 1);
    spec.text = std::string(30'000, 'c');
    chain.push_back(testing::upsert(spec));
  }
  chain.push_back(testing::upsert({.did = kDid, .rkey = "leaf", .parent_rkey = "c149"}));
  apply(std::move(chain));
  start();

  const HttpResponse window =
      get("getWindow", "repo=" + std::string(kDid) + "&anchor=n1020&before=1000&after=1000");
  ASSERT_EQ(window.status, 200);
  EXPECT_LE(window.body.size(), kAnswer);
  const json w = json::parse(window.body);
  EXPECT_TRUE(w["hasBefore"].get<bool>());
  EXPECT_TRUE(w["hasAfter"].get<bool>());

  std::set<std::string> changed;
  std::string cursor;
  for (int pages = 0; pages < 100; ++pages) {
    const HttpResponse answer = get("getChanges", "repo=" + std::string(kDid) + "&limit=1000" +
                                                      (cursor.empty() ? "" : "&cursor=" + cursor));
    ASSERT_EQ(answer.status, 200);
    EXPECT_LE(answer.body.size(), kAnswer);
    const json page = json::parse(answer.body);
    if (page["changes"].empty()) break;
    for (const auto& change : page["changes"]) {
      EXPECT_TRUE(changed.insert(change["rkey"].get<std::string>()).second);
    }
    cursor = page["cursor"].get<std::string>();
  }
  EXPECT_EQ(changed.size(), 91u) << "every change, once";

  const HttpResponse ancestors = get("getAncestors", "repo=" + std::string(kDid) + "&rkey=leaf");
  ASSERT_EQ(ancestors.status, 200);
  EXPECT_LE(ancestors.body.size(), kAnswer);
  const json a = json::parse(ancestors.body);
  EXPECT_EQ(a["truncated"], true);
  ASSERT_FALSE(a["ancestors"].empty());
  EXPECT_EQ(a["ancestors"].back()["rkey"], "c149") << "the nearest ancestors are the ones given";
  EXPECT_LT(a["ancestors"].size(), 50u);
  // A short chain is whole, and says nothing of truncation.
  const HttpResponse near = get("getAncestors", "repo=" + std::string(kDid) + "&rkey=c101");
  const json b = json::parse(near.body);
  EXPECT_EQ(b["ancestors"].size(), 1u);
  EXPECT_FALSE(b.contains("truncated"));
}

TEST_F(AnswerBoundsTest, TheBudgetIsGrantedBeforeTheAnswerSoConcurrentPagesCannotOverspendIt) {
  fat_siblings();
  config_.query_bytes_per_minute = 600 * 1024;
  start();
  // Each page may hold what the bucket holds when it begins, taken from it
  // before the page is read: pages never spend what was not there.
  std::size_t served = 0;
  int refused = 0;
  const auto before = std::chrono::steady_clock::now();
  for (int i = 0; i < 12; ++i) {
    const HttpResponse answer = get("getChildren", "repo=" + std::string(kDid) + "&limit=1000");
    if (answer.status == 200) {
      served += answer.body.size();
    } else {
      EXPECT_EQ(answer.status, 429) << answer.body;
      ++refused;
    }
  }
  // A page holds at least one node, even when less is left: the budget, and
  // what it refilled while the pages were read (the bucket was made no
  // earlier than `before`), is passed by at most that one node, once.
  const double refilled =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count() * 600 *
      1024 / 60.0;
  EXPECT_LE(static_cast<double>(served), 600.0 * 1024 + refilled + 61'000)
      << "answers past the client's budget";
  EXPECT_GT(refused, 0);
  // Another client has its own budget.
  EXPECT_EQ(get("getChildren", "repo=" + std::string(kDid), "198.51.100.8").status, 200);
}

TEST_F(AnswerBoundsTest, ASubtreesBudgetCountsTheUriOfALongDid) {
  // A did:web of 240 characters and 400 one-letter bullets: the DID is most
  // of each node's view.
  const std::string did = "did:web:" + std::string(228, 'l') + ".example";
  std::vector<schema::RecordOp> ops;
  for (int i = 0; i < 400; ++i) {
    testing::NodeSpec spec{.did = did, .rkey = "t" + std::to_string(1000 + i)};
    spec.text = "x";
    ops.push_back(testing::upsert(spec));
  }
  apply(std::move(ops));
  start();
  for (std::size_t budget : {4096u, 65536u}) {
    const HttpResponse answer =
        get("getSubtree", "repo=" + did + "&budgetBytes=" + std::to_string(budget));
    ASSERT_EQ(answer.status, 200);
    std::string body;
    struct Collect final : ResponseStream {
      std::string& out;
      explicit Collect(std::string& o) : out(o) {}
      bool write(std::string_view bytes) override {
        out.append(bytes);
        return true;
      }
    } collect{body};
    ASSERT_TRUE(static_cast<bool>(answer.stream));
    answer.stream(collect);
    EXPECT_LE(body.size(), budget) << "budget " << budget;
    EXPECT_GT(body.size(), budget / 2) << "budget " << budget << " mostly used";
  }
}

}  // namespace
}  // namespace bulleted::appview
