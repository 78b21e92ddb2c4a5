#include "appview/live/stream_follow.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>
#include <tuple>

#include "schema/reader.hpp"

namespace bulleted::appview {
namespace {

constexpr int kPageChanges = 1000;

std::string error_data(std::string_view name, std::string_view message) {
  return R"({"error":")" + std::string(name) + R"(","message":")" + std::string(message) + "\"}";
}

}  // namespace

Result<std::unique_ptr<StreamFollower>> StreamFollower::create(std::unique_ptr<schema::Store> store,
                                                               const StreamLimits& limits,
                                                               ChangeStreams::ChangeWriter writer,
                                                               StreamCounters& counters) {
  auto sequence = store->read().change_sequence();
  if (!sequence) return std::unexpected(sequence.error());
  std::unique_ptr<StreamFollower> follower(
      new StreamFollower(std::move(store), limits, std::move(writer), counters));
  follower->polled_ = *sequence;
  return follower;
}

StreamFollower::StreamFollower(std::unique_ptr<schema::Store> store, const StreamLimits& limits,
                               ChangeStreams::ChangeWriter writer, StreamCounters& counters)
    : store_(std::move(store)),
      limits_(limits),
      writer_(std::move(writer)),
      counters_(counters),
      random_(std::random_device{}()) {}

std::optional<std::string> StreamFollower::repo_status(const std::string& repo) {
  auto state = store_->read().repo(repo);
  if (!state) return std::nullopt;
  return *state ? std::string(schema::to_string((*state)->status)) : std::string("active");
}

void StreamFollower::add(StreamRequest request, std::shared_ptr<HeldAnswer> answer) {
  ++counters_.open;
  const std::uint64_t serial = next_serial_++;
  Stream& stream = streams_[serial];
  stream.repo = std::move(request.repo);
  stream.client = std::move(request.client);
  stream.answer = std::move(answer);
  groups_[stream.repo].streams.push_back(serial);
  clients_[stream.client].push_back(serial);
  auto sequence = store_->read().change_sequence();
  auto status = repo_status(stream.repo);
  if (!sequence || !status) {
    close(serial, StreamEnd::kFailed,
          "event: error\ndata: " + error_data("InternalServerError", "the index cannot be read") +
              "\n\n");
    return;
  }
  if (request.cursor && *request.cursor > *sequence) {
    std::string text;
    sse_event(text, -1, "error",
              error_data("FutureCursor", "the cursor " + std::to_string(*request.cursor) +
                                             " is beyond the index's changes (" +
                                             std::to_string(*sequence) + ")"));
    close(serial, StreamEnd::kFutureCursor, text);
    return;
  }
  stream.status = *status;
  stream.cursor = stream.last_id = request.cursor.value_or(*sequence);
  if (request.cursor && *request.cursor < *sequence) stream.history_until = *sequence;
  Group& group = groups_[stream.repo];
  if (group.streams.size() == 1) {
    // The first beat within the period, at random: groups opened together
    // (a restart's reconnects) do not all beat in one turn.
    std::uniform_int_distribution<std::int64_t> within(0, limits_.heartbeat.count());
    group.next_heartbeat = now() + std::chrono::milliseconds(within(random_));
  }
  // Past its client's limit, the client's oldest stream ends (a reloaded
  // page never locks its user out).
  auto& mine = clients_[stream.client];
  while (mine.size() > limits_.per_client) {
    // One whose client is not reading what it has is cut off at once; the
    // others are told why, and what they have queued must go out within the
    // front's write timeout.
    const bool reading = streams_.at(mine.front()).answer->queued() < limits_.buffer_bytes;
    std::string text;
    if (reading) {
      sse_event(text, -1, "error",
                error_data("TooManyStreams",
                           "this client opened more streams than "
                           "limits.streamsPerClient; the oldest ends"));
    }
    close(mine.front(), StreamEnd::kReplaced, text, !reading);
  }
  if (!request.cursor) {
    // Where it starts: a reconnect before any change resumes from here.
    std::string text;
    sse_event(text, stream.last_id, "cursor",
              R"({"cursor":")" + std::to_string(stream.last_id) + "\"}");
    stream.answer->write(text);
  }
  set_behind(stream, true);  // reads what came after its cursor on this turn
}

void StreamFollower::set_behind(Stream& stream, bool behind) {
  if (stream.behind == behind) return;
  stream.behind = behind;
  if (behind) {
    ++behind_;
  } else {
    --behind_;
  }
}

void StreamFollower::turn(const std::map<std::string, RepoTold>& woken,
                          const std::map<std::int64_t, std::int64_t>& told) {
  const auto started = now();
  std::map<std::string, std::optional<RepoTold>> due;
  for (const auto& [repo, told_of] : woken) due[repo] = told_of;
  if (started >= next_poll_) {
    next_poll_ = started + limits_.poll;
    if (others_committed(told)) {
      for (const auto& [repo, group] : groups_) due.try_emplace(repo, std::nullopt);
    }
  } else {
    told_.insert(told.begin(), told.end());
  }
  // Small groups first: a repo with one follower is not kept waiting behind
  // the writes of one with a thousand.
  std::vector<std::pair<std::size_t, const std::string*>> order;
  for (const auto& [repo, at] : due) {
    auto group = groups_.find(repo);
    order.emplace_back(group == groups_.end() ? 0 : group->second.streams.size(), &repo);
  }
  std::sort(order.begin(), order.end());
  for (const auto& [size, repo] : order) serve(*repo, due.at(*repo));
  // Then streams behind (catching up, or refilled after their client took
  // what was queued): a few pages a turn, repos in turn, so that catch-up
  // (which an anonymous client may ask for) never starves the changes being
  // made now.
  if (behind_ > 0) {
    std::vector<std::string> behind;
    for (const auto& [serial, stream] : streams_) {
      if (!stream.behind) continue;
      if (stream.full && stream.answer->queued() >= limits_.buffer_bytes) continue;
      if (behind.empty() || behind.back() != stream.repo) behind.push_back(stream.repo);
    }
    std::sort(behind.begin(), behind.end());
    behind.erase(std::unique(behind.begin(), behind.end()), behind.end());
    CatchUp budget;
    // In rounds: each client is read for once a round (a client with many
    // streams takes what the others leave).
    for (int round = 0; round < 8 && budget.pages > 0 && budget.reads > 0; ++round) {
      const std::size_t pages = budget.pages;
      const std::size_t reads = budget.reads;
      budget.clients.clear();
      auto next = std::upper_bound(behind.begin(), behind.end(), caught_up_last_);
      for (std::size_t i = 0; i < behind.size() && budget.pages > 0 && budget.reads > 0; ++i) {
        if (next == behind.end()) next = behind.begin();
        caught_up_last_ = *next++;
        auto told = due.find(caught_up_last_);
        serve(caught_up_last_, told == due.end() ? std::nullopt : told->second, &budget);
      }
      if (budget.pages == pages && budget.reads == reads) break;
    }
  }
  std::vector<std::string> beats;
  for (const auto& [repo, group] : groups_) {
    if (group.next_heartbeat <= started) beats.push_back(repo);
  }
  for (const auto& repo : beats) heartbeat(repo);
  if (started >= next_sweep_) {
    next_sweep_ = started + std::min<Clock::duration>(std::chrono::seconds(1), limits_.stall / 4);
    sweep();
  }
}

bool StreamFollower::others_committed(const std::map<std::int64_t, std::int64_t>& told) {
  told_.insert(told.begin(), told.end());
  auto sequence = store_->read().change_sequence();
  if (!sequence) return false;
  // The commits told cover the sequence from the last poll without gaps
  // unless another process committed too.
  std::int64_t reached = polled_;
  for (auto it = told_.find(reached); it != told_.end(); it = told_.find(reached)) {
    reached = it->second;
  }
  const bool others = reached < *sequence;
  polled_ = std::max(polled_, *sequence);
  told_.erase(told_.begin(), told_.lower_bound(polled_));
  return others;
}

void StreamFollower::serve(const std::string& repo, std::optional<RepoTold> told,
                           CatchUp* catch_up) {
  auto found = groups_.find(repo);
  if (found == groups_.end()) return;
  // Streams at one cursor share each page's read and text. One whose client
  // has not taken what is queued is read no further (it costs no reads).
  std::map<std::int64_t, std::vector<Stream*>> at;
  std::vector<Stream*> open;
  for (std::uint64_t serial : found->second.streams) {
    Stream& stream = streams_.at(serial);
    if (stream.answer->over()) continue;
    open.push_back(&stream);
    stream.full = stream.answer->queued() >= limits_.buffer_bytes;
    if (stream.full) {
      set_behind(stream, true);
      continue;
    }
    // Catching up is paced (a few pages a turn): a change told now does not
    // read for a stream still far behind.
    if (catch_up == nullptr && stream.behind) continue;
    // Under the bound: whatever the sweep saw, the client took what was
    // queued (a reader whose refills keep it near the bound is not stalled).
    stream.full_since.reset();
    at[stream.cursor].push_back(&stream);
  }
  if (catch_up != nullptr && at.empty()) return;
  auto status = repo_status(repo);
  if (!status) return;
  for (Stream* stream : open) {
    if (stream->status == *status) continue;
    std::string text;
    sse_event(text, -1, "info", R"({"name":"RepoStatus","status":")" + *status + "\"}");
    stream->answer->write(text);
    stream->status = *status;
  }
  // One page a cursor a turn: what is left is read on the next turns.
  for (auto& [cursor, at_cursor] : at) {
    std::vector<Stream*> readers = at_cursor;
    if (catch_up != nullptr) {
      // The rest stay behind, for the next turns.
      if (catch_up->pages == 0 || catch_up->reads == 0) break;
      // A client is read for once a turn, and history only while what it
      // may read lasts (one byte asked of it): the others stay behind.
      std::erase_if(readers, [&](Stream* stream) {
        return catch_up->clients.contains(stream->client) ||
               (charge_ && stream->cursor < stream->history_until &&
                charge_(stream->client, 1, true) == 0);
      });
      if (readers.empty()) continue;
      --catch_up->reads;
    }
    auto page = store_->read().changes(repo, std::to_string(cursor), kPageChanges,
                                       limits_.buffer_bytes / 2);
    if (!page) {
      spdlog::warn("change streams: cannot read {}'s changes: {}", repo, page.error().message);
      continue;
    }
    if (page->changes.empty()) {
      for (Stream* stream : readers) set_behind(*stream, false);
      continue;
    }
    if (catch_up != nullptr) {
      --catch_up->pages;
      for (Stream* stream : readers) catch_up->clients.insert(stream->client);
    }
    std::string text;
    std::string data;
    for (const auto& change : page->changes) {
      data.clear();
      writer_(data, change);
      sse_event(text, change.seq, "change", data);
    }
    const std::int64_t last = page->changes.back().seq;
    const auto count = static_cast<std::int64_t>(page->changes.size());
    const double waited =
        told ? std::chrono::duration<double>(Clock::now() - told->at).count() : -1;
    // A page that read to the repo's last change, or past what was told:
    // nothing more is known to be there (a heartbeat's read leaves a live
    // stream live). Short of it, there may be more: read on (the next read
    // finds none, or the rest).
    const bool reached = !page->more || (told && told->seq > 0 && last >= told->seq);
    for (Stream* stream : readers) {
      if (!stream->answer->write(text)) continue;
      stream->cursor = stream->last_id = last;
      counters_.events += count;
      if (waited >= 0) counters_.delivered(waited, count);
      // What it read counts against what its client may read (history
      // whole; live changes from what is left).
      if (charge_) charge_(stream->client, text.size(), cursor < stream->history_until);
      set_behind(*stream, !reached);
    }
  }
}

void StreamFollower::heartbeat(const std::string& repo) {
  Group& group = groups_.at(repo);
  group.next_heartbeat = now() + limits_.heartbeat;
  // The sequence first: once the streams have read their changes, every
  // change of the repo up to it is theirs.
  auto sequence = store_->read().change_sequence();
  if (!sequence) return;
  serve(repo, std::nullopt);
  for (std::uint64_t serial : groups_.at(repo).streams) {
    Stream& stream = streams_.at(serial);
    if (stream.behind || stream.answer->over()) continue;
    std::string text = ":\n";
    const std::int64_t tip = std::max(stream.cursor, *sequence);
    const bool moved = tip > stream.last_id;
    sse_event(text, moved ? tip : -1, "cursor", R"({"cursor":")" + std::to_string(tip) + "\"}");
    if (stream.answer->write(text) && moved) stream.cursor = stream.last_id = tip;
  }
}

void StreamFollower::sweep() {
  const auto at = now();
  std::vector<std::pair<std::uint64_t, StreamEnd>> ending;
  // What every stream keeps queued, together: past the total bound, those
  // keeping the most are closed first (the ones past their own bound before
  // any other), until it holds.
  std::size_t total = 0;
  std::vector<std::tuple<bool, std::size_t, std::uint64_t>> heaviest;
  for (auto& [serial, stream] : streams_) {
    if (stream.answer->over()) {
      ending.emplace_back(serial, StreamEnd::kClient);
      continue;
    }
    const std::size_t queued = stream.answer->queued();
    total += queued;
    if (queued > 0) heaviest.emplace_back(queued > limits_.buffer_bytes, queued, serial);
    if (queued <= limits_.buffer_bytes) {
      stream.full_since.reset();
    } else if (!stream.full_since) {
      stream.full_since = at;
    } else if (at - *stream.full_since >= limits_.stall) {
      ending.emplace_back(serial, StreamEnd::kStalled);
    }
  }
  if (total > limits_.total_buffer_bytes) {
    std::sort(heaviest.begin(), heaviest.end(), std::greater<>());
    for (const auto& [past, queued, serial] : heaviest) {
      if (total <= limits_.total_buffer_bytes) break;
      total -= queued;
      if (std::find_if(ending.begin(), ending.end(), [serial = serial](const auto& end) {
            return end.first == serial;
          }) == ending.end()) {
        ending.emplace_back(serial, StreamEnd::kStalled);
      }
    }
  }
  for (const auto& [serial, why] : ending) {
    if (why == StreamEnd::kStalled) {
      spdlog::info("change streams: closing a stream of {} whose client stopped reading",
                   streams_.at(serial).client);
    }
    close(serial, why, {}, why == StreamEnd::kStalled);
  }
}

void StreamFollower::close(std::uint64_t serial, StreamEnd why, std::string_view text, bool abort) {
  auto found = streams_.find(serial);
  if (found == streams_.end()) return;
  Stream& stream = found->second;
  if (!text.empty()) stream.answer->write(text);
  stream.answer->end(abort);
  set_behind(stream, false);
  auto& group = groups_[stream.repo].streams;
  std::erase(group, serial);
  if (group.empty()) groups_.erase(stream.repo);
  auto& mine = clients_[stream.client];
  std::erase(mine, serial);
  if (mine.empty()) clients_.erase(stream.client);
  streams_.erase(found);
  --counters_.open;
  ++counters_.closed[static_cast<std::size_t>(why)];
}

void StreamFollower::shut_down() {
  std::uniform_int_distribution<int> retry(1000, 5000);
  std::vector<std::uint64_t> serials;
  for (const auto& [serial, stream] : streams_) serials.push_back(serial);
  for (std::uint64_t serial : serials) {
    const std::string text = "event: info\ndata: {\"name\":\"ServerShutdown\"}\nretry: " +
                             std::to_string(retry(random_)) + "\n\n";
    close(serial, StreamEnd::kShutdown, text);
  }
}

}  // namespace bulleted::appview
