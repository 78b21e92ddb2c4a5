// What the operators' endpoints say of the database, kept by a thread of its
// own: every `every` it opens a write transaction on its own connection (to
// learn that the file is writable, without waiting on a writer) and reads
// the kept node total. /healthz, /readyz and /xrpc/_health answer from the
// last reading, on the connection's own thread, behind nothing; a reading older
// than `stale_after` (the probe itself stuck on a hung disk) is a problem
// of its own.
//
// Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace bulleted::schema {
class Store;
}

namespace bulleted::appview {

struct DatabaseReading {
  bool usable = false;    // the file opened and answered
  bool writable = false;  // a write transaction could begin (or a writer holds it)
  std::string problem;    // why not, for people
  std::int64_t nodes = -1;
  std::chrono::steady_clock::time_point at{};
};

class DatabaseProbe {
 public:
  DatabaseProbe(std::string db_path, int busy_timeout_ms,
                std::chrono::milliseconds every = std::chrono::seconds(1),
                std::chrono::milliseconds stale_after = std::chrono::seconds(10));
  ~DatabaseProbe();
  DatabaseProbe(const DatabaseProbe&) = delete;
  DatabaseProbe& operator=(const DatabaseProbe&) = delete;

  // Takes the first reading before it returns, then keeps reading.
  void start();
  void stop();
  // The last reading; a stale one says so in `problem` and is not usable.
  DatabaseReading reading() const;

 private:
  void run();
  DatabaseReading read_once();

  std::string db_path_;
  int busy_timeout_ms_;
  std::chrono::milliseconds every_;
  std::chrono::milliseconds stale_after_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  DatabaseReading last_;
  std::unique_ptr<schema::Store> store_;  // read on one thread at a time: start(), then run()
  std::thread thread_;
};

}  // namespace bulleted::appview
