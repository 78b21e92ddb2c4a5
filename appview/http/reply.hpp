// What a worker hands the connection that waits for its answer (internal to
// appview/http/): the answer (its head, and its body unless it is streamed
// or held), then, for a streamed or held answer, the body's bytes as they
// are written. Thread-safe: written on workers (or, held, from any thread),
// taken on the connection's strand, which `wake` is asked to run whenever
// there is something new to take.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "appview/http/server.hpp"

namespace bulleted::appview::http_detail {

class Reply final : public ResponseStream, public HeldAnswer {
 public:
  // What a streamed answer's producer may have written that the client has
  // not taken (unless the answer says it need not wait).
  static constexpr std::size_t kMaxWaiting = 1 << 20;

  // `stall`: how long a producer waits for the client to take some of what
  // is waiting (a slice written counts) before it gives up.
  Reply(std::function<void()> wake, std::chrono::milliseconds stall)
      : wake_(std::move(wake)), stall_(stall) {}

  // The worker's side.
  void answer(HttpResponse response, bool waits = true);
  // Streamed: waits while kMaxWaiting bytes are waiting (when the answer
  // waits). Held: never waits. False once the answer is over.
  bool write(std::string_view bytes) override;
  // Bytes written and not yet sent: waiting here, or taken by the
  // connection and still being written to the client.
  std::size_t queued() const override;
  bool over() const override;
  void end(bool abort = false) override;

  // The connection's side: what there is now (moved out).
  struct Taken {
    std::optional<HttpResponse> answer;
    std::string bytes;
    bool ended = false;    // after `bytes`, the body is whole
    bool aborted = false;  // the body is cut off: close the connection
    bool empty() const { return !answer && bytes.empty() && !ended && !aborted; }
  };
  Taken take();
  // What was last taken has been written to the client.
  void sent();
  // `bytes` more of what was taken have been written (progress).
  void sent_some(std::size_t bytes);
  // Whether the answer's producer or holder ended it (not cut off).
  bool ended() const;
  // Whether the answer was cut off (asked on the strand, to stop a write
  // that waits on a client that does not read).
  bool aborted() const;
  // The connection is over: writes fail from now on and nobody is woken.
  void close();

 private:
  void wake_locked();

  mutable std::mutex mutex_;
  std::condition_variable room_;
  std::function<void()> wake_;
  std::chrono::milliseconds stall_;
  std::optional<HttpResponse> answer_;
  std::string pending_;
  std::size_t sending_ = 0;  // taken, not yet sent
  bool waits_ = true;
  bool ended_ = false;
  bool aborted_ = false;
  bool closed_ = false;
};

}  // namespace bulleted::appview::http_detail
