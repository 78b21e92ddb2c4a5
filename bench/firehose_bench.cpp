// Replay throughput of the ingest path on a frame stream (bench/make_frames):
// decode + verify (frames, their records, each commit's MST proof and
// signature against the key directory FRAMES.keys.json; commits without an
// app.bulleted.node op are skipped, as the consumer skips those of repos it
// does not track), then decode + verify + apply to a fresh SQLite index.
// Prints JSON lines.
// Usage: firehose_bench FRAMES [DB_PATH | --decode-only]   (--decode-only: for profiling)
#include <time.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string_view>
#include <thread>

#include "bench/frame_stream.hpp"
#include "bench/key_directory.hpp"
#include "bench/scratch_index.hpp"
#include "firehose/bounded_queue.hpp"
#include "firehose/ingestor.hpp"
#include "firehose/records.hpp"
#include "schema/store.hpp"

using namespace bulleted;
using Clock = std::chrono::steady_clock;

// CPU seconds of the calling thread, or of the whole process (both count the
// time spent in the kernel on its behalf).
double cpu_seconds(clockid_t clock) {
  timespec now{};
  clock_gettime(clock, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: firehose_bench FRAMES [DB_PATH | --decode-only]\n");
    return 2;
  }
  const auto frames = bench::read_frame_stream(argv[1]);
  bench::KeyDirectory keys(std::string(argv[1]) + ".keys.json");
  if (keys.size() == 0) {
    std::fprintf(stderr, "no key directory at %s.keys.json\n", argv[1]);
    return 2;
  }
  std::size_t bytes = 0;
  for (const auto& f : frames) bytes += f.size();

  // Decode only: best of 3 passes.
  double best = 1e9;
  std::size_t ops = 0;
  for (int pass = 0; pass < 3; ++pass) {
    ops = 0;
    const auto t0 = Clock::now();
    for (const auto& frame : frames) {
      auto event = firehose::decode_frame(frame);
      if (!event) return 1;
      if (auto* commit = std::get_if<firehose::CommitEvent>(&*event)) {
        auto records = firehose::commit_records(*commit);
        if (!records) return 1;
        // No app.bulleted.node op (the network's other repos): skipped, as
        // the consumer skips them for repos it does not track.
        if (!records->read_car) continue;
        if (!records->proof || !*records->proof) return 1;
        auto key = keys.key(commit->repo, false);
        if (!key || !firehose::check_signature(**records->proof, *key)) return 1;
        ops += records->ops.size();
      }
    }
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::printf("%s\n", nlohmann::json{{"benchmark", "decodeAndVerify"},
                                     {"frames", frames.size()},
                                     {"ops", ops},
                                     {"megabytes", static_cast<double>(bytes) / 1e6},
                                     {"seconds", best},
                                     {"framesPerSecond", static_cast<double>(frames.size()) / best},
                                     {"opsPerSecond", static_cast<double>(ops) / best}}
                          .dump()
                          .c_str());

  if (argc > 2 && std::string_view(argv[2]) == "--decode-only") return 0;

  // Decode + apply, as the consumer does: frames and their records decoded
  // on one thread (the socket's, in the server), applied in batches on
  // another through a queue of 1,000 frames.
  const std::string path = argc > 2 ? argv[2] : "/tmp/bulleted-firehose-bench.db";
  bench::remove_index(path);
  auto store = schema::Store::open(path);
  if (!store) return 1;
  firehose::FirehoseMetrics metrics;
  firehose::Ingestor ingestor(**store, {.keys = &keys}, metrics);
  if (!ingestor.start()) return 1;
  firehose::BoundedQueue<firehose::FirehoseEvent> queue(1000);
  bool decoded_all = true;
  const auto t0 = Clock::now();
  const double thread_cpu0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
  const double process_cpu0 = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
  std::thread decoder([&] {
    for (const auto& frame : frames) {
      auto event = firehose::decode_frame(frame);
      if (!event) {
        decoded_all = false;
        break;
      }
      firehose::predecode_records(*event);
      if (!queue.push(std::move(*event))) break;
    }
    queue.close();
  });
  bool applied_all = true;
  while (auto event = queue.pop(std::chrono::seconds(10))) {
    if (!ingestor.add(std::move(*event))) {
      applied_all = false;
      queue.close();
      break;
    }
  }
  decoder.join();
  if (!decoded_all || !applied_all || !ingestor.flush()) return 1;
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  // This thread verifies and applies; the decoder's thread and the
  // checkpointer's count in the process's time.
  const double apply_cpu = cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - thread_cpu0;
  const double process_cpu = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - process_cpu0;
  std::printf(
      "%s\n",
      nlohmann::json{{"benchmark", "decodeAndApply"},
                     {"verifyAndApplyCpuSeconds", apply_cpu},
                     {"processCpuSeconds", process_cpu},
                     {"frames", frames.size()},
                     {"opsApplied", metrics.ops_applied.load()},
                     {"seconds", seconds},
                     {"framesPerSecond", static_cast<double>(frames.size()) / seconds},
                     {"opsPerSecond", static_cast<double>(metrics.ops_applied.load()) / seconds},
                     {"commitsVerified", metrics.commits_verified.load()},
                     {"verificationFailures",
                      [&] {
                        std::uint64_t n = 0;
                        for (const auto& count : metrics.verification_failures) n += count;
                        return n;
                      }()},
                     {"resyncsRequested", metrics.resyncs_started.load()}}
          .dump()
          .c_str());
  store->reset();
  bench::remove_index(path);
  return 0;
}
