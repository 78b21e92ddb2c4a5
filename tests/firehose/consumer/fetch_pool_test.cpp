// The consumer's fetchers (firehose/consumer/fetch_pool.hpp): a repo handed
// in takes a thread until its answer is taken back, so at most that many
// CARs are held; answers and errors come back by repo; a closed pool takes
// nothing more. The fetcher here answers when the test lets it.
#include "firehose/consumer/fetch_pool.hpp"

#include <gtest/gtest.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <set>

namespace bulleted::firehose {
namespace {

// Answers each repo once the test opens the gate; counts those waiting.
class GatedFetcher final : public RepoFetcher {
 public:
  Result<std::string> get_repo(const std::string& did) override {
    std::unique_lock lock(mutex_);
    ++waiting_;
    changed_.notify_all();
    changed_.wait(lock, [&] { return open_; });
    --waiting_;
    if (did.ends_with("missing")) return fail(ErrorCode::kNotFound, "RepoNotFound");
    return "car of " + did;
  }
  void until_waiting(int n) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return waiting_ == n; });
  }
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int waiting_ = 0;
  bool open_ = false;
};

// Takes answers back until `n` have come.
std::map<std::string, Result<std::string>> take(FetchPool& pool, std::size_t n) {
  std::map<std::string, Result<std::string>> out;
  while (out.size() < n) {
    for (auto& [did, car] : pool.take_done()) out.emplace(did, std::move(car));
    std::this_thread::yield();
  }
  return out;
}

TEST(FetchPool, ARepoHoldsAThreadUntilItsAnswerIsTakenBack) {
  GatedFetcher fetcher;
  FetchPool pool(fetcher, 2);
  EXPECT_EQ(pool.free(), 2u);
  pool.submit("did:plc:one");
  pool.submit("did:plc:missing");
  EXPECT_EQ(pool.free(), 0u) << "two threads, two repos";
  fetcher.until_waiting(2);
  fetcher.open();
  auto done = take(pool, 2);
  EXPECT_EQ(pool.free(), 2u);
  ASSERT_TRUE(done.at("did:plc:one").has_value());
  EXPECT_EQ(*done.at("did:plc:one"), "car of did:plc:one");
  ASSERT_FALSE(done.at("did:plc:missing").has_value());
  EXPECT_EQ(done.at("did:plc:missing").error().code, ErrorCode::kNotFound);
}

TEST(FetchPool, AClosedPoolHasNoFreeThread) {
  GatedFetcher fetcher;
  FetchPool pool(fetcher, 3);
  pool.close();
  EXPECT_EQ(pool.free(), 0u);
  fetcher.open();
}

TEST(FetchPool, MoreReposThanThreadsWaitTheirTurnAndAllComeBack) {
  GatedFetcher fetcher;
  FetchPool pool(fetcher, 1);
  fetcher.open();
  std::set<std::string> asked;
  for (int i = 0; i < 5; ++i) {
    asked.insert("did:plc:r" + std::to_string(i));
    pool.submit("did:plc:r" + std::to_string(i));
  }
  auto done = take(pool, 5);
  std::set<std::string> answered;
  for (const auto& [did, car] : done) answered.insert(did);
  EXPECT_EQ(answered, asked);
}

}  // namespace
}  // namespace bulleted::firehose
