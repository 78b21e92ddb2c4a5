// getRepo on a few threads of its own: the indexing thread hands repos in
// (RepoSyncs::due decides which) and takes the CARs, or the errors, back
// between batches. At most one fetch per thread at a time, so at most that
// many CARs are held.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "firehose/consumer/repo_fetcher.hpp"
#include "firehose/repo_sync.hpp"

namespace bulleted::firehose {

class FetchPool final : public RepoFetches {
 public:
  FetchPool(RepoFetcher& fetcher, int threads);
  ~FetchPool() override;
  FetchPool(const FetchPool&) = delete;
  FetchPool& operator=(const FetchPool&) = delete;

  // Threads neither fetching nor holding a CAR not yet taken; none once closed.
  std::size_t free() const override;
  void submit(const std::string& did) override;
  std::vector<std::pair<std::string, Result<std::string>>> take_done() override;
  // No more fetches handed in (the consumer stops): free() is 0 from now on.
  void close();

 private:
  void run();

  RepoFetcher& fetcher_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::string> jobs_;
  std::vector<std::pair<std::string, Result<std::string>>> done_;
  std::size_t out_ = 0;  // submitted and not yet taken back
  bool closed_ = false;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace bulleted::firehose
