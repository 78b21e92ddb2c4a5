// A fixed-capacity queue between the socket and the indexer. push() blocks
// while the queue is full, so a slow store slows the socket reads down (TCP
// backpressure) instead of growing memory.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

namespace bulleted::firehose {

template <class T>
class BoundedQueue {
 public:
  explicit BoundedQueue(std::size_t capacity) : capacity_(capacity) {}

  // Blocks until there is room or the queue is closed; false when closed.
  bool push(T item) {
    std::unique_lock lock(mutex_);
    ++blocked_;
    not_full_.wait(lock, [&] { return closed_ || items_.size() < capacity_; });
    --blocked_;
    if (closed_) return false;
    items_.push_back(std::move(item));
    not_empty_.notify_one();
    return true;
  }

  // Waits up to `timeout` for an item; nullopt on timeout or when closed and
  // drained.
  std::optional<T> pop(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    if (!not_empty_.wait_for(lock, timeout, [&] { return closed_ || !items_.empty(); })) {
      return std::nullopt;
    }
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return item;
  }

  // Refuses further pushes and wakes every waiter; queued items stay poppable.
  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    not_full_.notify_all();
    not_empty_.notify_all();
  }

  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return items_.size();
  }

  // Pushes inside push() now: waiting for room, or about to take it.
  std::size_t pushes_waiting() const {
    std::lock_guard lock(mutex_);
    return blocked_;
  }

 private:
  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable not_full_;
  std::condition_variable not_empty_;
  std::deque<T> items_;
  std::size_t blocked_ = 0;
  bool closed_ = false;
};

}  // namespace bulleted::firehose
