// The queue between socket and index: a full queue blocks the producer (the
// socket reader) instead of growing; close() releases everyone.
#include "firehose/bounded_queue.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace bulleted::firehose {
namespace {

using namespace std::chrono_literals;

TEST(BoundedQueue, AFullQueueBlocksTheProducerUntilTheConsumerTakes) {
  BoundedQueue<int> queue(2);
  ASSERT_TRUE(queue.push(1));
  ASSERT_TRUE(queue.push(2));
  std::atomic<bool> third_pushed{false};
  std::thread producer([&] {
    queue.push(3);
    third_pushed = true;
  });
  std::this_thread::sleep_for(100ms);
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
  std::this_thread::sleep_for(50ms);
  queue.close();
  producer.join();
  EXPECT_EQ(result.load(), 0) << "push after close is refused";
  EXPECT_EQ(queue.pop(10ms), 1) << "what was queued stays poppable";
  EXPECT_EQ(queue.pop(10ms), std::nullopt);
}

}  // namespace
}  // namespace bulleted::firehose
