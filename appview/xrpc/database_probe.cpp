#include "appview/xrpc/database_probe.hpp"

#include <spdlog/spdlog.h>

#include <memory>

#include "schema/store.hpp"

namespace bulleted::appview {

DatabaseProbe::DatabaseProbe(std::string db_path, int busy_timeout_ms,
                             std::chrono::milliseconds every, std::chrono::milliseconds stale_after)
    : db_path_(std::move(db_path)),
      busy_timeout_ms_(busy_timeout_ms),
      every_(every),
      stale_after_(stale_after) {}

DatabaseProbe::~DatabaseProbe() { stop(); }

void DatabaseProbe::start() {
  {
    DatabaseReading first = read_once();
    std::lock_guard lock(mutex_);
    last_ = std::move(first);
  }
  thread_ = std::thread([this] { run(); });
}

void DatabaseProbe::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    wake_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

DatabaseReading DatabaseProbe::reading() const {
  std::lock_guard lock(mutex_);
  DatabaseReading out = last_;
  if (std::chrono::steady_clock::now() - out.at > stale_after_) {
    out.usable = false;
    out.writable = false;
    out.problem = "the database has not answered for " +
                  std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                     std::chrono::steady_clock::now() - out.at)
                                     .count()) +
                  " s";
  }
  return out;
}

DatabaseReading DatabaseProbe::read_once() {
  DatabaseReading reading;
  try {
    // A connection of the probe's own, opened again after a failure.
    auto& store = store_;
    if (!store) {
      auto opened = schema::Store::open(
          db_path_, {.busy_timeout_ms = busy_timeout_ms_, .background_checkpoints = false});
      if (!opened) throw std::runtime_error(opened.error().message);
      store = std::move(*opened);
    }
    auto nodes = store->read().node_count();
    if (!nodes) {
      store.reset();
      throw std::runtime_error(nodes.error().message);
    }
    reading.usable = true;
    reading.nodes = *nodes;
    if (auto writable = store->check_writable(); !writable) {
      reading.problem = "database not writable: " + writable.error().message;
    } else {
      reading.writable = true;
    }
  } catch (const std::exception& e) {
    reading.problem = std::string("database unusable: ") + e.what();
  }
  reading.at = std::chrono::steady_clock::now();
  return reading;
}

void DatabaseProbe::run() {
  std::string last_problem;
  while (true) {
    {
      std::unique_lock lock(mutex_);
      if (wake_.wait_for(lock, every_, [&] { return stopping_; })) return;
    }
    DatabaseReading next = read_once();
    if (next.problem != last_problem) {
      if (next.problem.empty()) {
        spdlog::info("database: answering again");
      } else {
        spdlog::error("database: {}", next.problem);
      }
      last_problem = next.problem;
    }
    std::lock_guard lock(mutex_);
    last_ = std::move(next);
  }
}

}  // namespace bulleted::appview
