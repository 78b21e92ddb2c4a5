#include "appview/xrpc/request_metrics.hpp"

#include <ostream>
#include <sstream>

#include "appview/xrpc/process_memory.hpp"

namespace bulleted::appview {
namespace {

void render_memory(std::ostream& out, const ProcessMemory& memory) {
  out << "# HELP bulleted_process_resident_bytes Resident memory: anon is the process's own "
         "(heap, stacks), file is mapped pages of the index (the kernel's cache of it).\n"
         "# TYPE bulleted_process_resident_bytes gauge\n";
  if (memory.resident_anon_bytes) {
    out << "bulleted_process_resident_bytes{kind=\"anon\"} " << *memory.resident_anon_bytes << "\n";
  }
  if (memory.resident_file_bytes) {
    out << "bulleted_process_resident_bytes{kind=\"file\"} " << *memory.resident_file_bytes << "\n";
  }
  if (memory.allocated_bytes && memory.allocator_resident_bytes) {
    out << "# HELP bulleted_allocator_bytes jemalloc: bytes in live allocations (allocated) and "
           "in pages it holds (resident).\n# TYPE bulleted_allocator_bytes gauge\n"
        << "bulleted_allocator_bytes{kind=\"allocated\"} " << *memory.allocated_bytes << "\n"
        << "bulleted_allocator_bytes{kind=\"resident\"} " << *memory.allocator_resident_bytes
        << "\n";
  }
}

// One histogram family: `name` with a `label` for each histogram.
template <typename Histograms>
void render_histograms(std::ostream& out, const char* name, const char* help, const char* label,
                       const Histograms& histograms) {
  out << "# HELP " << name << " " << help << "\n# TYPE " << name << " histogram\n";
  for (const auto& [value, h] : histograms) {
    const std::string labels = std::string(label) + "=\"" + value + "\"";
    for (std::size_t i = 0; i < RequestMetrics::kBuckets.size(); ++i) {
      out << name << "_bucket{" << labels << ",le=\"" << RequestMetrics::kBuckets[i] << "\"} "
          << h.buckets[i] << "\n";
    }
    out << name << "_bucket{" << labels << ",le=\"+Inf\"} " << h.count << "\n";
    out << name << "_sum{" << labels << "} " << h.sum << "\n";
    out << name << "_count{" << labels << "} " << h.count << "\n";
  }
}

// The index's gauges and its WAL checkpoints.
void render_index(std::ostringstream& out, std::int64_t node_count,
                  const schema::CheckpointCounts& checkpoints) {
  out << "# HELP bulleted_index_nodes Nodes in the index.\n# TYPE bulleted_index_nodes gauge\n"
      << "bulleted_index_nodes " << node_count << "\n";
  out << "# HELP bulleted_index_wal_checkpoints_total Background WAL checkpoints: passive runs "
         "that copied the whole WAL or part of it (a reader held the rest), and restarts that let "
         "the next writer start the WAL over or gave up (a lock or a reader held too long).\n"
         "# TYPE bulleted_index_wal_checkpoints_total counter\n"
      << "bulleted_index_wal_checkpoints_total{kind=\"passive\",outcome=\"whole\"} "
      << checkpoints.runs - checkpoints.partial_runs << "\n"
      << "bulleted_index_wal_checkpoints_total{kind=\"passive\",outcome=\"partial\"} "
      << checkpoints.partial_runs << "\n"
      << "bulleted_index_wal_checkpoints_total{kind=\"restart\",outcome=\"done\"} "
      << checkpoints.restarts << "\n"
      << "bulleted_index_wal_checkpoints_total{kind=\"restart\",outcome=\"gave_up\"} "
      << checkpoints.failed_restarts << "\n";
}

// The firehose consumer's counters and gauges.
void render_firehose(std::ostringstream& out, const firehose::FirehoseMetrics& m) {
  out << "# HELP bulleted_firehose_events_total Firehose events by type and outcome.\n"
         "# TYPE bulleted_firehose_events_total counter\n";
  for (std::size_t i = 0; i < firehose::FirehoseMetrics::kEventTypes.size(); ++i) {
    const auto type = firehose::FirehoseMetrics::kEventTypes[i];
    out << "bulleted_firehose_events_total{type=\"" << type << "\",outcome=\"received\"} "
        << m.received[i] << "\n"
        << "bulleted_firehose_events_total{type=\"" << type << "\",outcome=\"applied\"} "
        << m.applied[i] << "\n"
        << "bulleted_firehose_events_total{type=\"" << type << "\",outcome=\"skipped\"} "
        << m.skipped[i] << "\n"
        << "bulleted_firehose_events_total{type=\"" << type << "\",outcome=\"errored\"} "
        << m.errored[i] << "\n";
  }
  auto counter = [&out](const char* name, const char* help, std::uint64_t value) {
    out << "# HELP " << name << " " << help << "\n# TYPE " << name << " counter\n"
        << name << " " << value << "\n";
  };
  auto gauge = [&out](const char* name, const char* help, std::int64_t value) {
    out << "# HELP " << name << " " << help << "\n# TYPE " << name << " gauge\n"
        << name << " " << value << "\n";
  };
  counter("bulleted_firehose_ops_applied_total", "Record ops applied to the index.", m.ops_applied);
  counter("bulleted_firehose_ops_stale_total", "Record ops not newer than the index.", m.ops_stale);
  counter("bulleted_firehose_duplicate_events_total", "Events at or below the cursor.",
          m.duplicate_events);
  counter("bulleted_firehose_decode_errors_total", "Frames that did not decode.", m.decode_errors);
  counter("bulleted_firehose_records_rejected_total",
          "Invalid app.bulleted.node and app.bulleted.note records.", m.records_rejected);
  out << "# HELP bulleted_firehose_verification_failures_total Commits, syncs and repos "
         "refused by verification, by reason.\n"
         "# TYPE bulleted_firehose_verification_failures_total counter\n";
  for (std::size_t i = 0; i < firehose::FirehoseMetrics::kVerifyReasons.size(); ++i) {
    out << "bulleted_firehose_verification_failures_total{reason=\""
        << firehose::FirehoseMetrics::kVerifyReasons[i] << "\"} " << m.verification_failures[i]
        << "\n";
  }
  counter("bulleted_firehose_commits_verified_total", "Commits whose signature and MST proof held.",
          m.commits_verified);
  counter("bulleted_firehose_key_refreshes_total",
          "DID documents read again after a signature did not verify.", m.key_refreshes);
  counter("bulleted_firehose_resyncs_started_total", "Repos marked desynchronized.",
          m.resyncs_started);
  counter("bulleted_firehose_resyncs_done_total", "Repos resynced from getRepo.", m.resyncs_done);
  counter("bulleted_firehose_resyncs_failed_total", "Resyncs given up.", m.resyncs_failed);
  counter("bulleted_firehose_reconnects_total", "Websocket sessions that ended.", m.reconnects);
  counter("bulleted_firehose_batches_total", "Index transactions committed.", m.batches);
  counter("bulleted_firehose_apply_failures_total",
          "Index transactions that failed (disk full, read-only, busy); retried.",
          m.apply_failures);
  gauge("bulleted_firehose_last_seq", "Seq of the last committed event.", m.last_seq);
  gauge("bulleted_firehose_lag_milliseconds", "Now minus the last applied event's time.", m.lag_ms);
  gauge("bulleted_firehose_connected", "1 when the websocket session is open.",
        m.connection == static_cast<int>(firehose::ConnectionState::kConnected) ? 1 : 0);
  gauge("bulleted_firehose_backfill_repos_pending",
        "Repos waiting for a getRepo (backfill, resync).",
        static_cast<std::int64_t>(m.repos_pending.load()));
  gauge("bulleted_firehose_backfill_repos_in_flight", "Repos being fetched now.",
        static_cast<std::int64_t>(m.repos_in_flight.load()));
  gauge("bulleted_firehose_backfill_repos_failed",
        "Repos whose fetch failed, to be tried again later (and at the next start).",
        static_cast<std::int64_t>(m.repos_failed.load()));
  counter("bulleted_firehose_backfill_records_total",
          "Records read from getRepo CARs and applied (backfill, resync).", m.repo_records_read);
  gauge("bulleted_firehose_backfill_records_per_second",
        "Records from getRepo CARs applied a second, over the last minute.",
        static_cast<std::int64_t>(m.repo_records_per_second.load()));
  counter("bulleted_firehose_backfill_repos_listed_total",
          "Repos the initial backfill listed at the source.", m.backfill_discovered);
  counter("bulleted_firehose_repos_over_limit_total",
          "getRepo answers refused for firehose.maxRepoBytes or maxRepoRecords.",
          m.repos_over_limit);
  gauge("bulleted_firehose_backfilling", "1 until the initial backfill is done.",
        m.backfilling ? 1 : 0);
  gauge("bulleted_firehose_queue_depth", "Frames waiting between socket and index.",
        static_cast<std::int64_t>(m.queue_depth.load()));
}
}  // namespace

void RequestMetrics::Histogram::add(double seconds) {
  for (std::size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) ++buckets[i];
  }
  ++count;
  sum += seconds;
}

void RequestMetrics::record(const std::string& method, int status, double seconds) {
  std::lock_guard lock(mutex_);
  ++requests_[{method, status}];
  latency_[method].add(seconds);
}

void RequestMetrics::record_wait(const std::string& lane, double seconds) {
  std::lock_guard lock(mutex_);
  waits_[lane].add(seconds);
}

std::string RequestMetrics::render(const firehose::FirehoseMetrics* firehose,
                                   std::int64_t node_count, std::size_t in_flight,
                                   const schema::CheckpointCounts& checkpoints) const {
  std::ostringstream out;
  {
    std::lock_guard lock(mutex_);
    out << "# HELP bulleted_http_requests_total HTTP requests by XRPC method and status.\n"
           "# TYPE bulleted_http_requests_total counter\n";
    for (const auto& [key, count] : requests_) {
      out << "bulleted_http_requests_total{method=\"" << key.first << "\",status=\"" << key.second
          << "\"} " << count << "\n";
    }
    render_histograms(out, "bulleted_http_request_seconds",
                      "Request latency by XRPC method, from the handler's start to its answer (a "
                      "streamed answer's end).",
                      "method", latency_);
    render_histograms(out, "bulleted_http_queue_seconds",
                      "Time requests waited for a worker, by lane (requests: the worker pool; "
                      "operators: health, readiness, metrics).",
                      "lane", waits_);
  }
  out << "# HELP bulleted_http_in_flight Requests being handled.\n# TYPE bulleted_http_in_flight "
         "gauge\n"
      << "bulleted_http_in_flight " << in_flight << "\n";
  out << "# HELP bulleted_placement_retries_total Placements that re-read stale neighbours once.\n"
         "# TYPE bulleted_placement_retries_total counter\n"
      << "bulleted_placement_retries_total " << placement_retries.load() << "\n";
  out << "# HELP bulleted_placement_conflicts_total Placements answered 409 StaleNeighbours.\n"
         "# TYPE bulleted_placement_conflicts_total counter\n"
      << "bulleted_placement_conflicts_total " << stale_conflicts.load() << "\n";
  out << "# HELP bulleted_search_budget_cut_total Search pages cut short by their budget of rows.\n"
         "# TYPE bulleted_search_budget_cut_total counter\n"
      << "bulleted_search_budget_cut_total " << search_budget_cuts.load() << "\n";
  out << "# HELP bulleted_search_rows_examined_total Candidate rows searches examined.\n"
         "# TYPE bulleted_search_rows_examined_total counter\n"
      << "bulleted_search_rows_examined_total " << search_rows.load() << "\n";
  out << "# HELP bulleted_search_refused_total Searches refused: every place was taken.\n"
         "# TYPE bulleted_search_refused_total counter\n"
      << "bulleted_search_refused_total " << search_refused.load() << "\n";
  render_index(out, node_count, checkpoints);
  render_memory(out, read_process_memory());
  if (firehose != nullptr) render_firehose(out, *firehose);
  return out.str();
}

}  // namespace bulleted::appview
