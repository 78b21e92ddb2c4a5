// What the change streams' thread does, one turn at a time (no thread of
// its own, so tests drive it turn by turn): each stream's cursor, its
// repo's group, its client's streams; reads of the index over its own
// connection; events written to the streams' answers.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "appview/live/change_streams.hpp"

namespace bulleted::appview {

class StreamFollower {
 public:
  using Clock = std::chrono::steady_clock;

  static Result<std::unique_ptr<StreamFollower>> create(std::unique_ptr<schema::Store> store,
                                                        const StreamLimits& limits,
                                                        ChangeStreams::ChangeWriter writer,
                                                        StreamCounters& counters);

  // Takes up a stream: FutureCursor ends it; past its client's limit the
  // client's oldest ends; from now it is told the cursor it starts at.
  void add(StreamRequest request, std::shared_ptr<HeldAnswer> answer);
  // One turn: the woken repos' streams that are not behind read what is new
  // (`woken`: when each was told, and how far), the commits told checked
  // against the change sequence (others' commits wake every repo), the
  // streams behind read on (a few pages, repos in turn), the heartbeats due
  // sent, and the answers swept (gone, or stalled).
  void turn(const std::map<std::string, RepoTold>& woken,
            const std::map<std::int64_t, std::int64_t>& told);
  // Every stream gets ServerShutdown (retry 1-5 s) and ends.
  void shut_down();
  bool any_behind() const { return behind_ > 0; }
  std::size_t size() const { return streams_.size(); }

  // What a client may read (ChangeStreams::set_charge).
  void set_charge(ChangeStreams::Charge charge) { charge_ = std::move(charge); }

  // The clock, for tests (heartbeats, stalls).
  void set_clock(std::function<Clock::time_point()> clock) { clock_ = std::move(clock); }

 private:
  struct Stream {
    std::string repo;
    std::string client;
    std::shared_ptr<HeldAnswer> answer;
    std::int64_t cursor = 0;                      // every change of the repo up to here was written
    std::int64_t last_id = 0;                     // the last event id written (ids only grow)
    std::string status;                           // the repo status the stream last heard
    std::optional<Clock::time_point> full_since;  // queued past the bound since
    bool behind = false;                          // there may be more to read for it
    bool full = false;                            // its client has not taken what is queued
    std::int64_t history_until = 0;               // changes up to here were made before it opened
  };
  struct Group {
    std::vector<std::uint64_t> streams;
    Clock::time_point next_heartbeat;
  };

  StreamFollower(std::unique_ptr<schema::Store> store, const StreamLimits& limits,
                 ChangeStreams::ChangeWriter writer, StreamCounters& counters);
  Clock::time_point now() const { return clock_ ? clock_() : Clock::now(); }
  // The streams of `repo` read a page of what is new after their cursors
  // and write it; one that reaches what was `told` is no longer behind.
  // Without `catch_up`, streams behind are left to their turn; with it, they
  // read too, within what it holds (it is taken from), and only when one of
  // them may be written to.
  // What streams behind may read in a turn, in all (repos take turns): a
  // few pages of changes, and more reads that find nothing (a crowd
  // reconnecting after a restart is caught up in a few turns).
  // A client is read one page for in a round of the turn (four addresses
  // catching up on 32 streams take a page each before any takes a second,
  // and another client's stream is read for in the same round).
  struct CatchUp {
    std::size_t pages = 8;
    std::size_t reads = 256;
    std::set<std::string> clients;  // read for in this turn
  };
  void serve(const std::string& repo, std::optional<RepoTold> told, CatchUp* catch_up = nullptr);
  void heartbeat(const std::string& repo);
  // Whether commits other than those told were made since the last poll.
  bool others_committed(const std::map<std::int64_t, std::int64_t>& told);
  void sweep();
  // Ends a stream with `text` (if any) and forgets it.
  void close(std::uint64_t serial, StreamEnd why, std::string_view text, bool abort = false);
  void set_behind(Stream& stream, bool behind);
  std::optional<std::string> repo_status(const std::string& repo);

  std::unique_ptr<schema::Store> store_;
  StreamLimits limits_;
  ChangeStreams::ChangeWriter writer_;
  ChangeStreams::Charge charge_;
  StreamCounters& counters_;
  std::function<Clock::time_point()> clock_;
  std::map<std::uint64_t, Stream> streams_;
  std::map<std::string, Group> groups_;                       // by repo
  std::map<std::string, std::deque<std::uint64_t>> clients_;  // oldest first
  std::map<std::int64_t, std::int64_t> told_;                 // commits told, not yet polled
  std::uint64_t next_serial_ = 1;
  std::string caught_up_last_;  // the repo the last catch-up read (they take turns)
  std::size_t behind_ = 0;
  std::int64_t polled_ = 0;  // the change sequence the last poll read
  Clock::time_point next_poll_;
  Clock::time_point next_sweep_;
  std::mt19937 random_;
};

}  // namespace bulleted::appview
