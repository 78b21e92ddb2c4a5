// Counters and latency histograms of the HTTP API, and the Prometheus text
// of everything operators watch (API, placement, firehose, index).
// Thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "firehose/metrics.hpp"
#include "schema/checkpointer.hpp"

namespace bulleted::appview {

class RequestMetrics {
 public:
  static constexpr std::array<double, 12> kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                      0.05,   0.1,   0.25,   0.5,   1.0,  2.5};

  void record(const std::string& method, int status, double seconds);
  // The time a request waited for a worker in `lane` ("requests",
  // "operators"): what a client's latency holds beyond the handler's.
  void record_wait(const std::string& lane, double seconds);

  std::atomic<std::uint64_t> placement_retries{0};
  std::atomic<std::uint64_t> stale_conflicts{0};
  // Search pages that stopped at their budget of rows, the rows searches
  // examined, and searches refused for want of a place.
  std::atomic<std::uint64_t> search_budget_cuts{0};
  std::atomic<std::uint64_t> search_rows{0};
  std::atomic<std::uint64_t> search_refused{0};

  // The Prometheus exposition of these and of `firehose` (may be null).
  std::string render(const firehose::FirehoseMetrics* firehose, std::int64_t node_count,
                     std::size_t in_flight, const schema::CheckpointCounts& checkpoints = {}) const;

 private:
  struct Histogram {
    std::array<std::uint64_t, kBuckets.size()> buckets{};
    std::uint64_t count = 0;
    double sum = 0;
    void add(double seconds);
  };
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, std::uint64_t> requests_;
  std::map<std::string, Histogram> latency_;
  std::map<std::string, Histogram> waits_;
};

}  // namespace bulleted::appview
