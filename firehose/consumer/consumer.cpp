#include "firehose/consumer/consumer.hpp"

#include <spdlog/spdlog.h>

#include <deque>
#include <map>
#include <random>

#include "firehose/bounded_queue.hpp"
#include "firehose/consumer/discovery.hpp"
#include "firehose/consumer/fetch_pool.hpp"
#include "firehose/consumer/http_fetcher.hpp"
#include "firehose/consumer/repo_fetcher.hpp"
#include "firehose/records.hpp"

namespace bulleted::firehose {
namespace {

using Clock = std::chrono::steady_clock;

void log_stats(const FirehoseMetrics& m) {
  std::uint64_t received = 0;
  for (const auto& count : m.received) received += count;
  std::uint64_t refused = 0;
  for (const auto& count : m.verification_failures) refused += count;
  spdlog::info(
      "firehose: stats events={} ops_applied={} ops_stale={} duplicates={} decode_errors={} "
      "records_rejected={} commits_verified={} verification_failures={} resyncs_started={} "
      "resyncs_done={} resyncs_failed={} repos_pending={} repos_in_flight={} backfilling={} "
      "reconnects={} last_seq={} lag_ms={}",
      received, m.ops_applied.load(), m.ops_stale.load(), m.duplicate_events.load(),
      m.decode_errors.load(), m.records_rejected.load(), m.commits_verified.load(), refused,
      m.resyncs_started.load(), m.resyncs_done.load(), m.resyncs_failed.load(),
      m.repos_pending.load(), m.repos_in_flight.load(), m.backfilling.load(), m.reconnects.load(),
      m.last_seq.load(), m.lag_ms.load());
}

struct QueueItem {
  std::optional<FirehoseEvent> event;
  bool full_resync = false;   // events may be missing: resync every known repo
  bool reset_cursor = false;  // the server's history does not reach our cursor
};

}  // namespace

// What the socket's handler thread and the consumer's threads share; owned
// jointly so that a late handler call never touches a destroyed consumer.
struct FirehoseConsumer::Shared {
  explicit Shared(std::size_t capacity) : queue(capacity) {}
  BoundedQueue<QueueItem> queue;
  std::atomic<bool> stopping{false};
  std::atomic<bool> indexing_done{false};
  std::mutex cursor_mutex;
  std::optional<std::int64_t> last_queued_seq;
  std::atomic<bool> restart_live{false};      // after FutureCursor: no cursor next time
  std::atomic<bool> resync_when_open{false};  // ...and resync once the live session is open
  std::mutex wake_mutex;
  std::condition_variable wake;
  // The initial backfill's listing, handed to the indexing thread.
  std::mutex discovered_mutex;
  std::vector<std::string> discovered;
  std::atomic<bool> discovery_running{false};
  std::atomic<bool> discovery_finished{false};
  std::atomic<bool> discovery_failed{false};
  bool discovery_ran = false;  // set before the threads start
};

namespace {

// The store's mark that the initial backfill's listing is done (a cursor
// row of its own: kept with the index, so a restart does not list again).
constexpr const char* kBackfillMark = "backfill:listed";
// ...and that it began: a start that finds this without the other lists
// again (a stop or a crash came in between).
constexpr const char* kBackfillBegun = "backfill:begun";

// The indexing thread's turns (FirehoseConsumer::indexing_loop): a frame
// (or the batch latency) into the ingestor, a batch flushed when due, the
// backfill's listing taken in, the resyncs' round, the backfill's end
// marked, the stats. Owns nothing it is given.
class Indexer {
 public:
  Indexer(const ConsumerOptions& options, FirehoseMetrics& metrics,
          FirehoseConsumer::Shared& shared, schema::Store& store, Ingestor& ingestor)
      : options_(options),
        metrics_(metrics),
        shared_(shared),
        store_(store),
        ingestor_(ingestor),
        records_at_last_stats_(metrics.repo_records_read.load()),
        backfill_marked_(!metrics.backfilling.load()) {}

  // One turn; false once stopping with every frame taken in indexed.
  bool step(FetchPool& pool) {
    if (store_failing_ && !try_flush()) {
      // Stop taking frames until the store accepts the pending batch.
      if (shared_.stopping) return false;
      std::unique_lock lock(shared_.wake_mutex);
      shared_.wake.wait_for(lock, std::chrono::seconds(1), [&] { return shared_.stopping.load(); });
      return true;
    }
    auto item = shared_.queue.pop(options_.max_batch_latency);
    metrics_.queue_depth = shared_.queue.size();
    const bool took = item.has_value();
    if (took && !take(std::move(*item))) return true;
    if (ingestor_.has_pending() &&
        (!took || Clock::now() - last_flush_ >= options_.max_batch_latency) && !try_flush()) {
      return true;
    }
    take_listing();
    if (shared_.stopping) pool.close();
    if (auto r = ingestor_.run_resyncs(pool); !r) {
      spdlog::error("firehose: resyncs: cannot write the index: {}", r.error().message);
      store_failing_ = true;
      return true;
    }
    mark_backfill_when_done();
    report();
    return !(shared_.stopping && !took && shared_.queue.size() == 0);
  }

  void finish() {
    if (!try_flush())
      spdlog::error("firehose: stopped with an unwritten batch; it will be replayed");
    if (auto cursor = ingestor_.resume_cursor())
      spdlog::info("firehose: stopped at cursor {}", *cursor);
    log_stats(metrics_);
  }

 private:
  bool take(QueueItem item) {
    if (item.reset_cursor) ingestor_.reset_cursor();
    Result<void> added =
        item.full_resync ? ingestor_.request_full_resync() : ingestor_.add(std::move(*item.event));
    if (added) return true;
    spdlog::error("firehose: indexing failed: {}", added.error().message);
    store_failing_ = true;
    return false;
  }

  bool try_flush() {
    if (auto r = ingestor_.flush(); !r) {
      if (!store_failing_) spdlog::error("firehose: cannot write the index: {}", r.error().message);
      store_failing_ = true;
      return false;
    }
    if (store_failing_) spdlog::info("firehose: the index is writable again");
    store_failing_ = false;
    last_flush_ = Clock::now();
    return true;
  }

  // The repos the initial backfill's listing found since the last turn.
  void take_listing() {
    std::vector<std::string> listed;
    {
      std::lock_guard lock(shared_.discovered_mutex);
      listed.swap(shared_.discovered);
    }
    for (const auto& did : listed) {
      if (auto r = ingestor_.request_backfill(did); !r) {
        spdlog::error("firehose: backfill of {} not recorded: {}", did, r.error().message);
      }
    }
  }

  // The initial backfill is done once listed and nothing is wanted or being
  // fetched: marked in the index (unless the listing failed, so that the
  // next start lists again).
  void mark_backfill_when_done() {
    if (backfill_marked_ || !shared_.discovery_finished) return;
    const auto& syncs = ingestor_.syncs();
    if (syncs.count(RepoSyncState::kWanted) + syncs.count(RepoSyncState::kFetching) > 0) return;
    {
      std::lock_guard lock(shared_.discovered_mutex);
      if (!shared_.discovered.empty()) return;
    }
    backfill_marked_ = true;
    metrics_.backfilling = false;
    if (shared_.discovery_ran && !shared_.discovery_failed) {
      schema::ApplyBatch mark;
      mark.cursor = std::make_pair(std::string(kBackfillMark), std::int64_t{1});
      (void)store_.apply(mark);
    }
    spdlog::info("firehose: backfill: done ({} repos listed, {} resynced, {} failed)",
                 metrics_.backfill_discovered.load(), metrics_.resyncs_done.load(),
                 metrics_.resyncs_failed.load());
  }

  void report() {
    const auto since = Clock::now() - last_stats_;
    if (since <= std::chrono::seconds(60)) return;
    const auto records = metrics_.repo_records_read.load();
    metrics_.repo_records_per_second =
        static_cast<std::uint64_t>(static_cast<double>(records - records_at_last_stats_) /
                                   std::chrono::duration<double>(since).count());
    records_at_last_stats_ = records;
    if (metrics_.backfilling || !ingestor_.syncs().idle()) {
      spdlog::info(
          "firehose: backfill: {} repos done, {} pending, {} in flight, {} failed (tried again "
          "later), {} records/s",
          metrics_.resyncs_done.load(), metrics_.repos_pending.load(),
          metrics_.repos_in_flight.load(), metrics_.repos_failed.load(),
          metrics_.repo_records_per_second.load());
    }
    log_stats(metrics_);
    last_stats_ = Clock::now();
  }

  const ConsumerOptions& options_;
  FirehoseMetrics& metrics_;
  FirehoseConsumer::Shared& shared_;
  schema::Store& store_;
  Ingestor& ingestor_;
  std::uint64_t records_at_last_stats_;
  bool backfill_marked_;
  bool store_failing_ = false;
  Clock::time_point last_flush_ = Clock::now();
  Clock::time_point last_stats_ = Clock::now();
};

}  // namespace

FirehoseConsumer::FirehoseConsumer(ConsumerOptions options, FirehoseMetrics& metrics)
    : options_(std::move(options)),
      metrics_(metrics),
      shared_(std::make_shared<Shared>(options_.queue_frames)) {}

FirehoseConsumer::~FirehoseConsumer() { stop(); }

std::string FirehoseConsumer::subscribe_url(const std::string& base,
                                            std::optional<std::int64_t> cursor) {
  std::string url = base;
  const std::string path = "/xrpc/com.atproto.sync.subscribeRepos";
  if (url.find(path) == std::string::npos) {
    while (!url.empty() && url.back() == '/') url.pop_back();
    url += path;
  }
  if (cursor)
    url += (url.find('?') == std::string::npos ? "?" : "&") + std::string("cursor=") +
           std::to_string(*cursor);
  return url;
}

Result<void> FirehoseConsumer::start() {
  // Read the committed cursor up front: the first connection resumes after it.
  auto store = schema::Store::open(options_.db_path, options_.store);
  if (!store) return std::unexpected(store.error());
  auto cursor = (*store)->read().cursor(options_.ingest.source);
  if (!cursor) return std::unexpected(cursor.error());
  shared_->last_queued_seq = *cursor;
  spdlog::info("firehose: following {} from {}", options_.url,
               *cursor ? "cursor " + std::to_string(**cursor) : std::string("the live end"));
  auto listed = (*store)->read().cursor(kBackfillMark);
  if (!listed) return std::unexpected(listed.error());
  // Repos an earlier build indexed for their nodes alone are read again
  // for the rest (their notes), like any repo whose resync was wanted.
  auto marked = (*store)->want_resync_for_new_collections();
  if (!marked) return std::unexpected(marked.error());
  if (*marked > 0) {
    spdlog::info("firehose: {} repos indexed by an earlier build are read again for their notes",
                 *marked);
  }
  auto unfinished = (*store)->read().unsynced_repos();
  if (!unfinished) return std::unexpected(unfinished.error());
  auto begun = (*store)->read().cursor(kBackfillBegun);
  if (!begun) return std::unexpected(begun.error());
  const bool discover = options_.backfill_on_start && !*listed && (!*cursor || *begun);
  metrics_.backfilling = discover || (!*listed && !unfinished->empty());
  if (discover && !*begun) {
    schema::ApplyBatch mark;
    mark.cursor = std::make_pair(std::string(kBackfillBegun), std::int64_t{1});
    if (auto r = (*store)->apply(mark); !r) return std::unexpected(r.error());
  }
  store->reset();
  shared_->discovery_ran = discover;
  shared_->discovery_finished = !discover;
  indexing_thread_ = std::thread([this] { indexing_loop(); });
  connection_thread_ = std::thread([this] { connection_loop(); });
  if (discover) {
    shared_->discovery_running = true;
    discovery_thread_ = std::thread([this] { discovery_loop(); });
  }
  return {};
}

void FirehoseConsumer::stop() {
  if (!connection_thread_.joinable() && !indexing_thread_.joinable()) return;
  shared_->stopping = true;
  shared_->wake.notify_all();
  // Frames still arriving are refused; those already queued get indexed.
  shared_->queue.close();
  if (discovery_thread_.joinable()) discovery_thread_.join();
  if (connection_thread_.joinable()) connection_thread_.join();
  if (indexing_thread_.joinable()) indexing_thread_.join();
  metrics_.connection = static_cast<int>(ConnectionState::kDisconnected);
}

void FirehoseConsumer::discovery_loop() {
  auto shared = shared_;
  const std::string service =
      options_.repo_service_url.empty() ? http_origin_of(options_.url) : options_.repo_service_url;
  auto client = make_http_xrpc_client(options_.fetch_timeout, 64 << 20);
  spdlog::info("firehose: backfill: listing the repos with app.bulleted.* records at {}", service);
  auto listed = discover_repos(*client, {.source = service,
                                         .on_page =
                                             [&](const std::vector<std::string>& page) {
                                               metrics_.backfill_discovered += page.size();
                                               std::lock_guard lock(shared->discovered_mutex);
                                               shared->discovered.insert(shared->discovered.end(),
                                                                         page.begin(), page.end());
                                             },
                                         .stopping = [&] { return shared->stopping.load(); }});
  if (listed) {
    spdlog::info("firehose: backfill: {} repos listed ({})", listed->repos, listed->method);
  } else {
    // The live stream goes on; repos first seen there are still backfilled.
    spdlog::error("firehose: backfill: cannot list the source's repos: {}", listed.error().message);
    shared->discovery_failed = true;
  }
  shared->discovery_finished = true;
  shared->discovery_running = false;
}

void FirehoseConsumer::connection_loop() {
  auto shared = shared_;
  FirehoseMetrics* metrics = &metrics_;
  std::mt19937 rng(std::random_device{}());
  auto backoff = options_.reconnect_min;
  // Decodes frames and their records on the socket's thread, so the
  // indexing thread only applies; blocks there while the queue is full.
  const FrameHandler on_frame = [shared, metrics](std::string_view bytes) {
    auto event = decode_frame(bytes);
    if (!event) {
      metrics->decode_errors++;
      spdlog::warn("firehose: undecodable frame ({} bytes): {}", bytes.size(),
                   event.error().message);
      return true;
    }
    if (auto* error = std::get_if<ErrorEvent>(&*event)) {
      metrics->received[5]++;
      metrics->errored[5]++;
      spdlog::warn("firehose: error frame {}: {}", error->error, error->message.value_or(""));
      if (error->error == "FutureCursor") {
        // The server has less history than the cursor says: start from the
        // live end and resync everything, since events may be missing.
        shared->restart_live = true;
        shared->resync_when_open = true;
      }
      return false;
    }
    predecode_records(*event);
    const auto seq = event_seq(*event);
    if (!shared->queue.push(QueueItem{std::move(*event), false, false})) return false;
    metrics->queue_depth = shared->queue.size();
    if (seq) {
      std::lock_guard lock(shared->cursor_mutex);
      shared->last_queued_seq = *seq;
    }
    return true;
  };
  while (!shared->stopping) {
    std::optional<std::int64_t> cursor;
    {
      std::lock_guard lock(shared->cursor_mutex);
      if (shared->restart_live.exchange(false)) shared->last_queued_seq.reset();
      cursor = shared->last_queued_seq;
    }
    const std::string url = subscribe_url(options_.url, cursor);
    metrics_.connection = static_cast<int>(ConnectionState::kConnecting);
    spdlog::info("firehose: connecting to {}", url);
    SessionOptions session = options_.session;
    const bool live = !cursor.has_value();
    session.on_open = [metrics, shared, url, live] {
      metrics->connection = static_cast<int>(ConnectionState::kConnected);
      spdlog::info("firehose: connected to {}", url);
      // Events between the old cursor and now are unknown: resync every repo,
      // after the live stream has started so that nothing falls in between.
      // Only a live session may do it: the session that was refused with
      // FutureCursor can report its own opening after that refusal.
      if (live && shared->resync_when_open.exchange(false))
        shared->queue.push(QueueItem{std::nullopt, true, true});
    };
    const SessionEnd end = run_websocket_session(url, on_frame, shared->stopping, session);
    metrics_.connection = static_cast<int>(ConnectionState::kDisconnected);
    if (shared->stopping) break;
    metrics_.reconnects++;
    backoff = end.connected && end.frames > 0 ? options_.reconnect_min
                                              : std::min(backoff * 2, options_.reconnect_max);
    // Jitter: 50% to 150% of the backoff, so many consumers do not retry in step.
    const auto wait = std::chrono::milliseconds(static_cast<std::int64_t>(
        static_cast<double>(backoff.count()) * (0.5 + (rng() % 1000) / 1000.0)));
    spdlog::warn("firehose: session ended after {} frames: {}; reconnecting in {} ms", end.frames,
                 end.reason, wait.count());
    std::unique_lock lock(shared->wake_mutex);
    shared->wake.wait_for(lock, wait, [&] { return shared->stopping.load(); });
  }
}

void FirehoseConsumer::indexing_loop() {
  auto shared = shared_;
  auto store = schema::Store::open(options_.db_path, options_.store);
  if (!store) {
    spdlog::error("firehose: cannot open the index: {}", store.error().message);
    shared->indexing_done = true;
    return;
  }
  identity::IdentityResolver identity(
      make_http_fetcher({.allow_private_addresses = options_.identity.allow_private_addresses}),
      options_.identity);
  IngestOptions ingest = options_.ingest;
  ingest.keys = &identity;
  ingest.resync_attempts = options_.resync_attempts;
  Ingestor ingestor(**store, ingest, metrics_);
  if (auto r = ingestor.start(); !r) {
    spdlog::error("firehose: cannot read the cursor: {}", r.error().message);
    shared->indexing_done = true;
    return;
  }
  const std::string service =
      options_.repo_service_url.empty() ? http_origin_of(options_.url) : options_.repo_service_url;
  auto fetcher = make_http_repo_fetcher(
      {.source = service,
       .timeout = options_.fetch_timeout,
       .max_repo_bytes = options_.max_repo_bytes,
       .pds_of = [&identity](const std::string& did) { return identity.pds_of(did); },
       .allow_private_addresses = options_.identity.allow_private_addresses,
       .host_requests_per_second = options_.host_requests_per_second});
  FetchPool pool(*fetcher, options_.fetch_concurrency);
  Indexer indexer(options_, metrics_, *shared, **store, ingestor);
  while (indexer.step(pool)) {
  }
  indexer.finish();
  shared->indexing_done = true;
}

}  // namespace bulleted::firehose
