// A queue of request jobs and the worker threads that drain it: one a lane
// (requests, operators, streams, searches). Internal to the HTTP front.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace bulleted::appview::http_detail {

// A queue and the threads that drain it.
class WorkQueue {
 public:
  WorkQueue(std::size_t max_queued, int threads) : max_queued_(max_queued), threads_(threads) {}

  // `on_thread` runs first on each worker thread (its priority).
  void start(const std::function<void()>& on_thread = {}) {
    for (int i = 0; i < std::max(1, threads_); ++i) {
      workers_.emplace_back([this, on_thread] {
        if (on_thread) on_thread();
        run();
      });
    }
  }
  bool push(std::function<void()> job) {
    std::lock_guard lock(mutex_);
    if (stopping_ || work_.size() >= max_queued_) return false;
    work_.push_back(std::move(job));
    ready_.notify_one();
    return true;
  }
  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return work_.size();
  }
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      ready_.notify_all();
    }
    for (auto& worker : workers_) {
      if (worker.joinable()) worker.join();
    }
    workers_.clear();
  }

 private:
  void run() {
    while (true) {
      std::function<void()> job;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [&] { return stopping_ || !work_.empty(); });
        if (work_.empty()) return;
        job = std::move(work_.front());
        work_.pop_front();
      }
      job();
    }
  }

  std::size_t max_queued_;
  int threads_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> work_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace bulleted::appview::http_detail
