// The queue between socket and index: a full queue blocks the producer (the
// socket reader) instead of growing; close() releases everyone. The tests
// wait for the producer to be inside push() (pushes_waiting), never for time
// to pass.
#include "firehose/bounded_queue.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace bulleted::firehose {
namespace {

using namespace std::chrono_literals;

// Until a producer is inside push() and, with the queue full, can only be
// waiting there (the lock is released while it waits).
void until_a_push_waits(const BoundedQueue<int>& queue) {
  while (queue.pushes_waiting() == 0) std::this_thread::yield();
}

TEST(BoundedQueue, AFullQueueBlocksTheProducerUntilTheConsumerTakes) {
  BoundedQueue<int> queue(2);
  ASSERT_TRUE(queue.push(1));
  ASSERT_TRUE(queue.push(2));
  std::atomic<bool> third_pushed{false};
  std::thread producer([&] {
    queue.push(3);
    third_pushed = true;
  });
  until_a_push_waits(queue);
  EXPECT_FALSE(third_pushed.load()) << "a full queue must not grow";
  EXPECT_EQ(queue.size(), 2u);
  EXPECT_EQ(queue.pop(10ms), 1);
  producer.join();
  EXPECT_TRUE(third_pushed.load());
  EXPECT_EQ(queue.pop(10ms), 2);
  EXPECT_EQ(queue.pop(10ms), 3);
  EXPECT_EQ(queue.pop(10ms), std::nullopt);
}

TEST(BoundedQueue, CloseReleasesABlockedProducerAndKeepsQueuedItems) {
  BoundedQueue<int> queue(1);
  ASSERT_TRUE(queue.push(1));
  std::atomic<int> result{-1};
  std::thread producer([&] { result = queue.push(2) ? 1 : 0; });
  until_a_push_waits(queue);
  queue.close();
  producer.join();
  EXPECT_EQ(result.load(), 0) << "push after close is refused";
  EXPECT_EQ(queue.pop(10ms), 1) << "what was queued stays poppable";
  EXPECT_EQ(queue.pop(10ms), std::nullopt);
}

}  // namespace
}  // namespace bulleted::firehose
