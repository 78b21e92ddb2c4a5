// Change streams (app.bulleted.streamChanges): getChanges held open as
// server-sent events. One thread follows every stream over its own SQLite
// connection: each stream keeps only its cursor (no queue of its own); a
// commit notice of this process, or a commit another process made on the
// same file (seen by polling the change sequence), wakes the streams of its
// repo, which read the changes after their cursors in pages (streams at the
// same cursor share one read and one text) while their answers keep less
// than the buffer bound queued.
//
// Events: `change` (id: its cursor), `info` (RepoStatus, ServerShutdown),
// `cursor` (with the heartbeat: the index's latest cursor), `error`
// (FutureCursor, TooManyStreams: the stream ends). Ids strictly increase.
//
// Bounds: at most `per_client` streams a client (the oldest ends with
// TooManyStreams), `total` in all (admit() says 503 past it); an answer that
// keeps more than `buffer_bytes` queued for `stall` is closed and its queue
// dropped; meanwhile nothing more is read for it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "appview/http/server.hpp"
#include "schema/error.hpp"
#include "schema/rows.hpp"
#include "schema/store.hpp"

namespace bulleted::appview {

struct StreamLimits {
  std::size_t per_client = 8;
  std::size_t total = 10'000;
  std::size_t buffer_bytes = 256 * 1024;
  // What every stream together may keep queued: past it, the streams that
  // keep the most past `buffer_bytes` are closed (stalled) until it holds.
  std::size_t total_buffer_bytes = 64 * 1024 * 1024;
  std::chrono::milliseconds stall{30'000};
  std::chrono::milliseconds heartbeat{15'000};
  // How often the change sequence is read for commits of other processes.
  std::chrono::milliseconds poll{500};
};

// Why a stream ended (bulleted_streams_closed_total{reason}).
enum class StreamEnd { kClient, kStalled, kReplaced, kFutureCursor, kShutdown, kFailed };
inline constexpr std::size_t kStreamEnds = 6;
std::string_view to_string(StreamEnd end);

// Counters of the streams, read by /metrics.
struct StreamCounters {
  std::atomic<std::int64_t> open{0};
  std::atomic<std::int64_t> events{0};
  std::atomic<std::int64_t> closed[kStreamEnds] = {};
  // bulleted_stream_delivery_seconds: from the commit notice to the write.
  static constexpr double kBounds[] = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
  std::atomic<std::int64_t> delivery_buckets[std::size(kBounds) + 1] = {};
  std::atomic<std::int64_t> delivery_micros{0};
  std::atomic<std::int64_t> deliveries{0};
  void delivered(double seconds, std::int64_t count);
  // The Prometheus text of these counters.
  void render(std::string& out) const;
};

// A repo's commits told since the last turn: when first, and the change
// sequence the last reached (0 for a status alone).
struct RepoTold {
  std::chrono::steady_clock::time_point at;
  std::int64_t seq = 0;
};

// What one stream follows.
struct StreamRequest {
  std::string repo;
  std::optional<std::int64_t> cursor;  // after this change; none: from now
  std::string client;                  // the per-client limit's key
};

class ChangeStreams {
 public:
  // Writes a change's event data (getChanges' change object) to `out`.
  using ChangeWriter = std::function<void(std::string& out, const schema::Change& change)>;
  using Clock = std::chrono::steady_clock;

  ChangeStreams(std::string db_path, int busy_timeout_ms, StreamLimits limits, ChangeWriter writer);
  ~ChangeStreams();
  ChangeStreams(const ChangeStreams&) = delete;
  ChangeStreams& operator=(const ChangeStreams&) = delete;

  Result<void> start();
  // Every stream gets `info` ServerShutdown with a retry of 1-5 s and ends;
  // then the thread stops. New streams are refused from here on.
  void stop();

  // Whether one more stream may open: kTooManyStreams (503) at the total,
  // kUnavailable once stopping.
  Result<void> admit() const;
  // Follows a stream (on the streams' thread; the answer's head is out).
  void open(StreamRequest request, std::shared_ptr<HeldAnswer> answer);
  // What a client reads through its streams: `charge(client, bytes,
  // history)` pays for `bytes` it was sent from the client's budget
  // (StreamRequest::client) and returns what the budget held of them (0:
  // spent). History (changes made before the stream opened, from an older
  // cursor) is paid whole, what the budget does not hold owed, and a stream
  // catching up on it reads no further while its client is spent (a charge
  // of 1 asks); live changes are paid from what is left, never owed, and
  // always go out. Unset: unlimited. Taken up at the next turn.
  using Charge =
      std::function<std::size_t(const std::string& client, std::size_t bytes, bool history)>;
  void set_charge(Charge charge);
  // A commit of this process: wakes the streams of its repos. Quick.
  void committed(const schema::CommitNotice& notice);

  const StreamCounters& counters() const { return counters_; }
  const StreamLimits& limits() const { return limits_; }

 private:
  struct State;
  void run();

  std::string db_path_;
  int busy_timeout_ms_;
  StreamLimits limits_;
  ChangeWriter writer_;
  StreamCounters counters_;
  std::unique_ptr<State> state_;
  std::thread thread_;
};

// The text of one server-sent event (`id` omitted when negative).
void sse_event(std::string& out, std::int64_t id, std::string_view event, std::string_view data);

}  // namespace bulleted::appview
