// How the HTTP front hands answers to cpprest (internal to appview/http/,
// where cpprest stays): replies sent and waited for at stop, an answer in
// cpprest's form (nosniff; HEAD with its GET's length), a refused body, and
// a streamed body's buffer.
#pragma once

#define _TURN_OFF_PLATFORM_STRING
#include <cpprest/http_listener.h>
#include <cpprest/producerconsumerstream.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "appview/http/server.hpp"

namespace bulleted::appview::http_detail {

using web::http::http_request;
using web::http::http_response;
using web::http::status_code;

class BodyRefused : public std::exception {
 public:
  const char* what() const noexcept override { return "request body refused"; }
};

// Lowercased, surrounding blanks dropped (header names).
std::string lower_trimmed(std::string_view text);

// Replies whose outcome cpprest has not reported yet. A connection closed
// under a reply (a client leaving, the listener closing) cancels the reply's
// task, and cpprest runs the continuation later on its pool, which is never
// torn down: stop() waits for these so that nothing is left queued there
// when the process ends.
class PendingReplies {
 public:
  void add() {
    std::lock_guard lock(mutex_);
    ++count_;
  }
  void done() {
    std::lock_guard lock(mutex_);
    if (--count_ == 0) settled_.notify_all();
  }
  // False when some were still pending at the deadline.
  bool wait(std::chrono::milliseconds limit) {
    std::unique_lock lock(mutex_);
    return settled_.wait_for(lock, limit, [&] { return count_ == 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable settled_;
  std::size_t count_ = 0;
};

PendingReplies& pending_replies();

// Replies once and observes the reply task (an unobserved failure would kill
// the process). `sent`, when given, learns whether the reply went out.
void send(http_request request, http_response response, std::function<void(bool)> sent = nullptr);
// Takes the answer's body: a large one (a subtree, an export page) is moved
// into cpprest's buffer, not copied.
http_response to_cpprest(HttpResponse out, bool head_only, bool close);
// Closes the request's body stream with an error (see answers.cpp).
void refuse_body(http_request& request);

// A streamed body: the worker writes into a producer/consumer buffer that
// cpprest sends chunked as it fills.
class BufferStream final : public ResponseStream {
 public:
  static constexpr std::size_t kMaxWaiting = 1 << 20;
  static constexpr auto kStall = std::chrono::seconds(30);

  BufferStream(std::shared_ptr<std::atomic<bool>> failed, bool waits)
      : failed_(std::move(failed)), waits_(waits) {}
  concurrency::streams::producer_consumer_buffer<std::uint8_t>& buffer() { return buffer_; }

  bool write(std::string_view bytes) override {
    if (bytes.empty()) return !*failed_;
    auto last_progress = std::chrono::steady_clock::now();
    std::size_t waiting = buffer_.in_avail();
    while (waits_ && waiting > kMaxWaiting) {
      if (*failed_) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      const std::size_t now_waiting = buffer_.in_avail();
      if (now_waiting < waiting) last_progress = std::chrono::steady_clock::now();
      waiting = now_waiting;
      if (std::chrono::steady_clock::now() - last_progress > kStall) {
        *failed_ = true;
        return false;
      }
    }
    if (*failed_) return false;
    try {
      // A producer/consumer buffer copies at once; the task is complete.
      buffer_.putn_nocopy(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()).get();
    } catch (...) {
      *failed_ = true;
      return false;
    }
    return true;
  }

  void finish() {
    try {
      if (*failed_) {
        buffer_.close(std::ios_base::out, std::make_exception_ptr(BodyRefused())).get();
      } else {
        buffer_.close(std::ios_base::out).get();
      }
    } catch (...) {
    }
  }

 private:
  concurrency::streams::producer_consumer_buffer<std::uint8_t> buffer_;
  std::shared_ptr<std::atomic<bool>> failed_;
  bool waits_;
};

// A held answer's body: written from any thread into a producer/consumer
// buffer that cpprest sends chunked as it fills, each write flushed at once.
class HeldBuffer final : public HeldAnswer {
 public:
  concurrency::streams::producer_consumer_buffer<std::uint8_t>& buffer() { return buffer_; }

  bool write(std::string_view bytes) override {
    std::lock_guard lock(mutex_);
    if (over_) return false;
    try {
      // A producer/consumer buffer copies at once; sync() hands what it
      // holds to a waiting read now, not when a whole chunk has filled.
      buffer_.putn_nocopy(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()).get();
      buffer_.sync().get();
    } catch (...) {
      over_ = true;
      return false;
    }
    return true;
  }

  std::size_t queued() const override { return over_ ? 0 : buffer_.in_avail(); }
  bool over() const override { return over_; }

  void end(bool abort) override {
    std::lock_guard lock(mutex_);
    if (ended_) return;
    ended_ = over_ = true;
    try {
      if (!abort) {
        buffer_.close(std::ios_base::out).get();
        return;
      }
      // What waits is dropped (cpprest, stuck on a client that does not
      // read, is not reading it), and the buffer fails: cpprest's next read
      // of it closes the connection.
      std::uint8_t scrap[16 * 1024];
      for (std::size_t left = buffer_.in_avail(); left > 0; left = buffer_.in_avail()) {
        if (buffer_.getn(scrap, std::min(left, sizeof scrap)).get() == 0) break;
      }
      buffer_.close(std::ios_base::out, std::make_exception_ptr(BodyRefused())).get();
    } catch (...) {
    }
  }

  // The reply settled (sent whole, or the connection failed).
  void settled() { over_ = true; }

 private:
  std::mutex mutex_;
  concurrency::streams::producer_consumer_buffer<std::uint8_t> buffer_;
  std::atomic<bool> over_{false};
  bool ended_ = false;
};

}  // namespace bulleted::appview::http_detail
