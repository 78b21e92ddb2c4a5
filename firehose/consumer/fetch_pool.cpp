#include "firehose/consumer/fetch_pool.hpp"

#include <algorithm>

namespace bulleted::firehose {

FetchPool::FetchPool(RepoFetcher& fetcher, int threads) : fetcher_(fetcher) {
  for (int i = 0; i < std::max(1, threads); ++i) threads_.emplace_back([this] { run(); });
}

FetchPool::~FetchPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& thread : threads_) thread.join();
}

std::size_t FetchPool::free() const {
  std::lock_guard lock(mutex_);
  if (closed_ || out_ >= threads_.size()) return 0;
  return threads_.size() - out_;
}

void FetchPool::submit(const std::string& did) {
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back(did);
    ++out_;
  }
  wake_.notify_one();
}

std::vector<std::pair<std::string, Result<std::string>>> FetchPool::take_done() {
  std::lock_guard lock(mutex_);
  auto out = std::move(done_);
  done_.clear();
  out_ -= std::min(out_, out.size());
  return out;
}

void FetchPool::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
}

void FetchPool::run() {
  while (true) {
    std::string did;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      if (stopping_) return;
      did = std::move(jobs_.front());
      jobs_.pop_front();
    }
    auto car = fetcher_.get_repo(did);
    std::lock_guard lock(mutex_);
    done_.emplace_back(std::move(did), std::move(car));
  }
}

}  // namespace bulleted::firehose
