// The firehose consumer: follows a subscribeRepos endpoint and keeps the
// index up to date, across disconnects and restarts.
//
// Two threads: the connection thread (connect, reconnect with capped
// exponential backoff and jitter, resume after the last frame taken in) and
// the indexing thread (decoded frames -> Ingestor -> one SQLite transaction
// per batch, flushed when full or after `max_batch_latency`; resyncs of
// repos whose chain broke). Between them a bounded queue: when the store is
// slower than the socket, reads slow down instead of memory growing.
//
// start() and stop() are called from one controlling thread.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "firehose/client/websocket_session.hpp"
#include "firehose/identity/identity.hpp"
#include "firehose/ingestor.hpp"
#include "firehose/metrics.hpp"
#include "schema/error.hpp"
#include "schema/store.hpp"

namespace bulleted::firehose {

struct ConsumerOptions {
  // ws(s)://host[:port] or the full .../xrpc/com.atproto.sync.subscribeRepos.
  std::string url;
  std::string db_path;
  schema::StoreOptions store;
  IngestOptions ingest;
  std::size_t queue_frames = 1000;
  std::chrono::milliseconds max_batch_latency{200};
  std::chrono::milliseconds reconnect_min{500};
  std::chrono::milliseconds reconnect_max{60'000};
  SessionOptions session;
  // Where getRepo is fetched for resyncs; empty: the firehose host itself.
  std::string repo_service_url;
  std::chrono::seconds fetch_timeout{60};
  int resync_attempts = 3;
  // DID documents: repo signing keys (every commit is verified against
  // one) and PDS endpoints (getRepo when the source does not serve it).
  identity::IdentityOptions identity;
  // getRepo fetches at once (resyncs and backfill); each holds one CAR.
  int fetch_concurrency = 4;
  // getRepo requests a second to any one host (the source, each PDS); 0: no limit.
  double host_requests_per_second = 10;
  // The largest getRepo answer read (more is refused and counted).
  std::size_t max_repo_bytes = 512ull * 1024 * 1024;
  // On first start (no cursor, no backfill done yet) list every repo with
  // app.bulleted.node records at the source and backfill them.
  bool backfill_on_start = true;
};

class FirehoseConsumer {
 public:
  FirehoseConsumer(ConsumerOptions options, FirehoseMetrics& metrics);
  ~FirehoseConsumer();
  FirehoseConsumer(const FirehoseConsumer&) = delete;
  FirehoseConsumer& operator=(const FirehoseConsumer&) = delete;

  // Opens the store, reads the cursor and starts both threads.
  Result<void> start();
  // Stops reading, indexes what was already taken in, commits the cursor and
  // joins both threads. Idempotent.
  void stop();

  // The subscribeRepos URL for a cursor.
  static std::string subscribe_url(const std::string& base, std::optional<std::int64_t> cursor);

  // What the consumer's threads share (defined in consumer.cpp).
  struct Shared;

 private:
  void connection_loop();
  void indexing_loop();
  void discovery_loop();

  ConsumerOptions options_;
  FirehoseMetrics& metrics_;
  std::shared_ptr<Shared> shared_;
  std::thread connection_thread_;
  std::thread indexing_thread_;
  std::thread discovery_thread_;
};

}  // namespace bulleted::firehose
