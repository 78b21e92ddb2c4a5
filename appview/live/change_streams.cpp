#include "appview/live/change_streams.hpp"

#include <spdlog/spdlog.h>

#include <cmath>
#include <deque>
#include <map>
#include <optional>
#include <random>

#include "appview/live/stream_follow.hpp"

namespace bulleted::appview {

std::string_view to_string(StreamEnd end) {
  static constexpr std::string_view kNames[kStreamEnds] = {"client",        "stalled",  "replaced",
                                                           "future_cursor", "shutdown", "failed"};
  return kNames[static_cast<std::size_t>(end)];
}

void sse_event(std::string& out, std::int64_t id, std::string_view event, std::string_view data) {
  if (id >= 0) {
    out += "id: ";
    out += std::to_string(id);
    out += '\n';
  }
  out += "event: ";
  out += event;
  out += "\ndata: ";
  out += data;
  out += "\n\n";
}

void StreamCounters::delivered(double seconds, std::int64_t count) {
  std::size_t bucket = 0;
  while (bucket < std::size(kBounds) && seconds > kBounds[bucket]) ++bucket;
  delivery_buckets[bucket] += count;
  delivery_micros += static_cast<std::int64_t>(std::llround(seconds * 1e6)) * count;
  deliveries += count;
}

void StreamCounters::render(std::string& out) const {
  out += "# HELP bulleted_streams_open Change streams open now.\n";
  out += "# TYPE bulleted_streams_open gauge\n";
  out += "bulleted_streams_open " + std::to_string(open.load()) + "\n";
  out += "# HELP bulleted_stream_events_total Events written to change streams.\n";
  out += "# TYPE bulleted_stream_events_total counter\n";
  out += "bulleted_stream_events_total " + std::to_string(events.load()) + "\n";
  out += "# HELP bulleted_streams_closed_total Change streams ended, by why.\n";
  out += "# TYPE bulleted_streams_closed_total counter\n";
  for (std::size_t i = 0; i < kStreamEnds; ++i) {
    out += "bulleted_streams_closed_total{reason=\"" +
           std::string(to_string(static_cast<StreamEnd>(i))) + "\"} " +
           std::to_string(closed[i].load()) + "\n";
  }
  out +=
      "# HELP bulleted_stream_delivery_seconds From a commit's notice to its event written to a "
      "stream.\n";
  out += "# TYPE bulleted_stream_delivery_seconds histogram\n";
  std::int64_t cumulative = 0;
  for (std::size_t i = 0; i <= std::size(kBounds); ++i) {
    cumulative += delivery_buckets[i].load();
    const std::string le = i < std::size(kBounds) ? fmt::format("{}", kBounds[i]) : "+Inf";
    out += "bulleted_stream_delivery_seconds_bucket{le=\"" + le + "\"} " +
           std::to_string(cumulative) + "\n";
  }
  out += fmt::format("bulleted_stream_delivery_seconds_sum {}\n",
                     static_cast<double>(delivery_micros.load()) / 1e6);
  out += "bulleted_stream_delivery_seconds_count " + std::to_string(deliveries.load()) + "\n";
}

// What the callers' threads hand the streams' thread.
struct ChangeStreams::State {
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  std::atomic<bool> closed{false};
  std::atomic<std::size_t> pending{0};  // opened, not yet taken up
  std::vector<std::pair<StreamRequest, std::shared_ptr<HeldAnswer>>> incoming;
  std::map<std::string, RepoTold> woken;        // repos told of since the last turn
  std::map<std::int64_t, std::int64_t> told;    // commits told: from -> to
  std::unique_ptr<StreamFollower> follower;     // the thread's own
  std::optional<ChangeStreams::Charge> charge;  // set, not yet handed to the follower
};

ChangeStreams::ChangeStreams(std::string db_path, int busy_timeout_ms, StreamLimits limits,
                             ChangeWriter writer)
    : db_path_(std::move(db_path)),
      busy_timeout_ms_(busy_timeout_ms),
      limits_(limits),
      writer_(std::move(writer)),
      state_(std::make_unique<State>()) {}

ChangeStreams::~ChangeStreams() { stop(); }

Result<void> ChangeStreams::start() {
  auto store = schema::Store::open(db_path_, {.busy_timeout_ms = busy_timeout_ms_});
  if (!store) return std::unexpected(store.error());
  auto follower = StreamFollower::create(std::move(*store), limits_, writer_, counters_);
  if (!follower) return std::unexpected(follower.error());
  state_->follower = std::move(*follower);
  thread_ = std::thread([this] { run(); });
  return {};
}

void ChangeStreams::stop() {
  {
    std::lock_guard lock(state_->mutex);
    if (state_->stopping) return;
    state_->stopping = true;
    state_->closed = true;
  }
  state_->wake.notify_all();
  if (thread_.joinable()) thread_.join();
}

Result<void> ChangeStreams::admit() const {
  if (state_->closed) {
    Error closing{ErrorCode::kUnavailable, "the server is shutting down"};
    closing.retry_after_seconds = 5;
    return std::unexpected(closing);
  }
  const auto open = static_cast<std::size_t>(std::max<std::int64_t>(0, counters_.open.load()));
  if (open + state_->pending.load() >= limits_.total) {
    Error full{ErrorCode::kTooManyStreams,
               "the app view holds as many change streams as it may (limits.maxStreams); poll "
               "getChanges meanwhile"};
    full.retry_after_seconds = 10;
    return std::unexpected(full);
  }
  return {};
}

void ChangeStreams::open(StreamRequest request, std::shared_ptr<HeldAnswer> answer) {
  {
    std::lock_guard lock(state_->mutex);
    if (!state_->stopping) {
      ++state_->pending;
      state_->incoming.emplace_back(std::move(request), std::move(answer));
      state_->wake.notify_one();
      return;
    }
  }
  // Stopping: told at once, as the streams open before it were.
  std::string text;
  sse_event(text, -1, "info", R"({"name":"ServerShutdown"})");
  answer->write(text);
  answer->end();
  ++counters_.closed[static_cast<std::size_t>(StreamEnd::kShutdown)];
}

void ChangeStreams::committed(const schema::CommitNotice& notice) {
  const auto now = Clock::now();
  {
    std::lock_guard lock(state_->mutex);
    for (const auto& [did, seq] : notice.repos) {
      auto [it, first] = state_->woken.try_emplace(did, RepoTold{now, seq});
      if (!first) it->second.seq = std::max(it->second.seq, seq);
    }
    if (notice.to > notice.from) state_->told[notice.from] = notice.to;
  }
  state_->wake.notify_one();
}

void ChangeStreams::set_charge(Charge charge) {
  std::lock_guard lock(state_->mutex);
  state_->charge = std::move(charge);
}

void ChangeStreams::run() {
  StreamFollower& follower = *state_->follower;
  while (true) {
    std::vector<std::pair<StreamRequest, std::shared_ptr<HeldAnswer>>> incoming;
    std::map<std::string, RepoTold> woken;
    std::map<std::int64_t, std::int64_t> told;
    bool stopping = false;
    std::optional<Charge> charge;
    {
      std::unique_lock lock(state_->mutex);
      // Streams behind (catching up, or waiting for their client to take
      // what is queued) are looked at often; otherwise a tick drives the
      // heartbeats, the polls and the sweep.
      const auto tick =
          follower.any_behind() ? std::chrono::milliseconds(10) : std::chrono::milliseconds(100);
      state_->wake.wait_for(lock, tick, [&] {
        return state_->stopping || !state_->incoming.empty() || !state_->woken.empty();
      });
      incoming.swap(state_->incoming);
      woken.swap(state_->woken);
      told.swap(state_->told);
      stopping = state_->stopping;
      state_->pending -= incoming.size();
      charge.swap(state_->charge);
    }
    try {
      if (charge) follower.set_charge(std::move(*charge));
      for (auto& [request, answer] : incoming) follower.add(std::move(request), std::move(answer));
      if (stopping) {
        follower.shut_down();
        return;
      }
      follower.turn(woken, told);
    } catch (const std::exception& e) {
      spdlog::error("change streams: {}", e.what());
    }
  }
}

}  // namespace bulleted::appview
