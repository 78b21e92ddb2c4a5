#define _TURN_OFF_PLATFORM_STRING
#include "firehose/client/websocket_session.hpp"

#include <cpprest/ws_client.h>

#include <condition_variable>
#include <list>
#include <mutex>
#include <thread>

namespace bulleted::firehose {
namespace {

using web::websockets::client::websocket_callback_client;
using web::websockets::client::websocket_client_config;
using web::websockets::client::websocket_close_status;
using web::websockets::client::websocket_incoming_message;
using web::websockets::client::websocket_message_type;
using web::websockets::client::websocket_outgoing_message;
using Clock = std::chrono::steady_clock;

// State shared with cpprest's handlers, which may outlive the session.
struct SessionState {
  std::mutex mutex;
  std::condition_variable changed;
  bool open = false;
  bool ended = false;
  std::string reason;
  Clock::time_point last_activity = Clock::now();
  std::uint64_t frames = 0;

  void end(std::string why) {
    std::lock_guard lock(mutex);
    if (!ended) {
      ended = true;
      reason = std::move(why);
    }
    changed.notify_all();
  }
};

// Destroys abandoned clients off cpprest's threads, once their close has
// completed or a minute has passed.
class Reaper {
 public:
  static Reaper& instance() {
    static Reaper reaper;
    return reaper;
  }
  void abandon(std::shared_ptr<websocket_callback_client> client) {
    auto closing = std::make_shared<std::atomic<bool>>(false);
    try {
      client->close(websocket_close_status::normal).then([closing](pplx::task<void> t) {
        try {
          t.get();
        } catch (...) {
        }
        *closing = true;
      });
    } catch (...) {
      *closing = true;
    }
    std::lock_guard lock(mutex_);
    graves_.push_back({std::move(client), closing, Clock::now()});
    wake_.notify_one();
  }
  ~Reaper() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      wake_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
  }

 private:
  struct Grave {
    std::shared_ptr<websocket_callback_client> client;
    std::shared_ptr<std::atomic<bool>> closed;
    Clock::time_point since;
  };
  Reaper() : thread_([this] { run(); }) {}
  void run() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      wake_.wait_for(lock, std::chrono::seconds(1));
      for (auto it = graves_.begin(); it != graves_.end();) {
        if (*it->closed || Clock::now() - it->since > std::chrono::minutes(1)) {
          auto client = std::move(it->client);
          it = graves_.erase(it);
          lock.unlock();
          client.reset();
          lock.lock();
        } else {
          ++it;
        }
      }
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_;
  std::list<Grave> graves_;
  bool stopping_ = false;
  std::thread thread_;
};

// The session's message and close handlers: they run on cpprest threads and
// capture only the shared state (and a copy of the frame handler).
void wire_handlers(websocket_callback_client& client, const std::shared_ptr<SessionState>& state,
                   const FrameHandler& on_frame) {
  // The handler runs on a cpprest thread and captures only shared state.
  auto handler = std::make_shared<FrameHandler>(on_frame);
  client.set_message_handler([state, handler](const websocket_incoming_message& message) {
    try {
      {
        std::lock_guard lock(state->mutex);
        state->last_activity = Clock::now();
        if (state->ended) return;
      }
      if (message.message_type() != websocket_message_type::binary_message) return;
      std::string bytes(message.length(), '\0');
      auto buffer = message.body().streambuf();
      const std::size_t copied =
          buffer.scopy(reinterpret_cast<std::uint8_t*>(bytes.data()), bytes.size());
      bytes.resize(copied);
      {
        std::lock_guard lock(state->mutex);
        ++state->frames;
      }
      if (!(*handler)(bytes)) state->end("the consumer ended the session");
    } catch (const std::exception& e) {
      state->end(std::string("message handler: ") + e.what());
    } catch (...) {
      state->end("message handler failed");
    }
  });
  client.set_close_handler([state](websocket_close_status status, const std::string& reason,
                                   const std::error_code& error) {
    state->end("closed (" + std::to_string(static_cast<int>(status)) + " " + reason +
               (error ? ", " + error.message() : "") + ")");
  });
}

}  // namespace

SessionEnd run_websocket_session(const std::string& url, const FrameHandler& on_frame,
                                 const std::atomic<bool>& stop, const SessionOptions& options) {
  auto state = std::make_shared<SessionState>();
  SessionEnd end;
  std::shared_ptr<websocket_callback_client> client;
  try {
    websocket_client_config config;
    client = std::make_shared<websocket_callback_client>(config);
    wire_handlers(*client, state, on_frame);
    auto on_open = std::make_shared<std::function<void()>>(options.on_open);
    client->connect(web::uri(url)).then([state, on_open](pplx::task<void> connected) {
      try {
        connected.get();
        if (*on_open) (*on_open)();
        std::lock_guard lock(state->mutex);
        state->open = true;
        state->last_activity = Clock::now();
        state->changed.notify_all();
      } catch (const std::exception& e) {
        state->end(std::string("connect failed: ") + e.what());
      }
    });
  } catch (const std::exception& e) {
    end.reason = std::string("connect failed: ") + e.what();
    if (client) Reaper::instance().abandon(std::move(client));
    return end;
  }

  const auto started = Clock::now();
  auto last_ping = Clock::now();
  std::unique_lock lock(state->mutex);
  while (!state->ended) {
    state->changed.wait_for(lock, std::chrono::milliseconds(200));
    if (stop) {
      state->ended = true;
      state->reason = "stopping";
      break;
    }
    const auto now = Clock::now();
    if (!state->open) {
      if (now - started > options.connect_timeout) {
        state->ended = true;
        state->reason = "connect timed out";
      }
      continue;
    }
    if (now - state->last_activity > options.idle_timeout) {
      state->ended = true;
      state->reason = "no frame or pong within the idle timeout";
      break;
    }
    if (now - last_ping > options.ping_interval) {
      last_ping = now;
      lock.unlock();
      try {
        websocket_outgoing_message ping;
        ping.set_ping_message();
        client->send(ping).then([](pplx::task<void> sent) {
          try {
            sent.get();
          } catch (...) {
          }
        });
      } catch (...) {
      }
      lock.lock();
    }
  }
  end.connected = state->open;
  end.frames = state->frames;
  end.reason = state->reason;
  lock.unlock();
  Reaper::instance().abandon(std::move(client));
  return end;
}

}  // namespace bulleted::firehose
