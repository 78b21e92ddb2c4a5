// One websocket connection to a subscribeRepos endpoint, run to its end.
//
// run_websocket_session() connects, hands every binary message to `on_frame`
// (on a cpprest thread: `on_frame` may block, which is how a slow indexer
// slows the socket down), pings every `ping_interval`, and returns when the
// server closes, the connection fails, nothing (not even a pong) arrives for
// `idle_timeout`, `on_frame` returns false, or `stop` becomes true. A client
// is never waited on while it closes: it is handed to a reaper thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <string_view>

namespace bulleted::firehose {

struct SessionOptions {
  std::chrono::seconds connect_timeout{30};
  std::chrono::seconds idle_timeout{120};
  std::chrono::seconds ping_interval{30};
  // Called (on a cpprest thread) once the handshake succeeds.
  std::function<void()> on_open;
};

struct SessionEnd {
  bool connected = false;    // the handshake succeeded
  std::uint64_t frames = 0;  // binary messages delivered
  std::string reason;        // for the log
};

// Returns false from on_frame to end the session.
using FrameHandler = std::function<bool(std::string_view bytes)>;

SessionEnd run_websocket_session(const std::string& url, const FrameHandler& on_frame,
                                 const std::atomic<bool>& stop, const SessionOptions& options);

}  // namespace bulleted::firehose
