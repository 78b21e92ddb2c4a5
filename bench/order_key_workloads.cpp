// The order-key workloads of docs/BENCHMARKS.md (a, b, c1, c2, d, e, e2),
// timed as the workload definitions say: only calls into the library are
// inside the timed region. Prints one JSON object per workload on stdout.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "ordering/order_key.hpp"
#include "tests/support/position_list.hpp"

namespace {

using bulleted::ordering::below;
using bulleted::ordering::between;
using bulleted::ordering::invalid_reason;
using bulleted::ordering::Mulberry32;
using bulleted::ordering::n_between;
using Clock = std::chrono::steady_clock;
using Keys = std::vector<std::string>;

constexpr std::uint32_t kJitterMask = 0xA5A5A5A5u;

Mulberry32 jitter_stream(std::uint32_t seed) { return Mulberry32::from_seed(seed ^ kJitterMask); }

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::uint32_t fnv1a32(const Keys& keys) {
  std::uint32_t h = 0x811C9DC5u;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (i > 0) h = (h ^ '\n') * 0x01000193u;
    for (unsigned char c : keys[i]) h = (h ^ c) * 0x01000193u;
  }
  return h;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Checks every workload reports: order, duplicates, design-invalid keys,
// lengths, fingerprint. `ascending` is the list the fingerprint is taken of.
nlohmann::json key_report(const Keys& generated, const Keys& ascending) {
  std::map<std::size_t, std::size_t> histogram;
  std::size_t max = 0;
  double total = 0;
  std::vector<std::size_t> lengths;
  std::size_t invalid = 0;
  for (const auto& key : generated) {
    ++histogram[key.size()];
    max = std::max(max, key.size());
    total += static_cast<double>(key.size());
    lengths.push_back(key.size());
    if (invalid_reason(key)) ++invalid;
  }
  std::sort(lengths.begin(), lengths.end());
  bool increasing = true;
  std::size_t duplicates = 0;
  for (std::size_t i = 1; i < ascending.size(); ++i) {
    if (ascending[i - 1] == ascending[i]) ++duplicates;
    if (!(ascending[i - 1] < ascending[i])) increasing = false;
  }
  nlohmann::json hist = nlohmann::json::object();
  for (auto [length, count] : histogram) hist[std::to_string(length)] = count;
  char fnv[16];
  std::snprintf(fnv, sizeof fnv, "%08x", fnv1a32(ascending));
  return {{"count", generated.size()},
          {"histogram", hist},
          {"maxLength", max},
          {"meanLength", generated.empty() ? 0.0 : total / static_cast<double>(generated.size())},
          {"p50Length", lengths.empty() ? 0 : lengths[lengths.size() / 2]},
          {"p99Length", lengths.empty() ? 0 : lengths[lengths.size() * 99 / 100]},
          {"strictlyIncreasing", increasing},
          {"duplicates", duplicates},
          {"designInvalid", invalid},
          {"fnv1a32", fnv}};
}

// (a) appends / (b) prepends: 1 warm-up + 5 timed repetitions.
nlohmann::json run_edges(bool append) {
  constexpr int kCount = 100'000;
  std::vector<double> rates;
  Keys keys;
  for (int rep = 0; rep < 6; ++rep) {
    auto jitter = jitter_stream(1);
    keys.assign(kCount, {});
    const std::string first = *between(std::nullopt, std::nullopt, jitter);
    const auto start = Clock::now();
    std::string_view previous = first;
    for (int i = 0; i < kCount; ++i) {
      keys[i] = *(append ? between(previous, std::nullopt, jitter)
                         : between(std::nullopt, previous, jitter));
      previous = keys[i];
    }
    const double elapsed = seconds_since(start);
    if (rep > 0) rates.push_back(kCount / elapsed);
  }
  Keys ascending;
  ascending.push_back("a0");
  ascending.insert(ascending.end(), keys.begin(), keys.end());
  if (!append) std::reverse(ascending.begin(), ascending.end());
  auto report = key_report(keys, ascending);
  report["workload"] = append ? "a" : "b";
  report["opsPerSecond"] = median(rates);
  report["bestOpsPerSecond"] = *std::max_element(rates.begin(), rates.end());
  report["last"] = keys.back();
  return report;
}

// (c1)/(c2): 1,000 inserts into one gap, seeds 1..20 (seed 0 warms up).
nlohmann::json run_hammer(bool after_first) {
  constexpr int kCount = 1'000;
  double timed = 0;
  std::vector<double> per_seed_max;
  double mean_sum = 0;
  Keys seed_one;
  for (std::uint32_t seed = 0; seed <= 20; ++seed) {
    auto jitter = jitter_stream(seed);
    const std::string k0 = *between(std::nullopt, std::nullopt, jitter);
    const std::string k1 = *between(k0, std::nullopt, jitter);
    Keys keys(kCount);
    std::string bound = after_first ? k1 : k0;
    const auto start = Clock::now();
    for (int i = 0; i < kCount; ++i) {
      bound = after_first ? *between(k0, bound, jitter) : *between(bound, k1, jitter);
      keys[i] = bound;
    }
    const double elapsed = seconds_since(start);
    if (seed == 0) continue;
    timed += elapsed;
    std::size_t max = 0;
    double total = 0;
    for (const auto& key : keys) {
      max = std::max(max, key.size());
      total += static_cast<double>(key.size());
    }
    per_seed_max.push_back(static_cast<double>(max));
    mean_sum += total / kCount;
    if (seed == 1) {
      seed_one.push_back(k0);
      if (after_first) {
        seed_one.insert(seed_one.end(), keys.rbegin(), keys.rend());
      } else {
        seed_one.insert(seed_one.end(), keys.begin(), keys.end());
      }
      seed_one.push_back(k1);
    }
  }
  auto report = key_report(Keys(seed_one.begin() + 1, seed_one.end() - 1), seed_one);
  report["workload"] = after_first ? "c1" : "c2";
  report["opsPerSecond"] = 20.0 * kCount / timed;
  report["maxLengthOverSeeds"] = {
      {"min", *std::min_element(per_seed_max.begin(), per_seed_max.end())},
      {"median", median(per_seed_max)},
      {"max", *std::max_element(per_seed_max.begin(), per_seed_max.end())}};
  report["meanLengthOverSeeds"] = mean_sum / 20;
  return report;
}

// The per-call timer of workload (d). On x86-64 it reads the time-stamp
// counter (invariant on every machine this runs on; the kernel's own clock
// source here is the same counter), calibrated against steady_clock: a pair of
// reads costs a few nanoseconds where steady_clock::now() costs 35-50 ns in a
// virtual machine, which is as much as the call being timed. Elsewhere it is
// steady_clock.
class CallTimer {
 public:
  CallTimer() {
#if defined(__x86_64__)
    const auto start = Clock::now();
    const std::uint64_t ticks = __rdtsc();
    while (seconds_since(start) < 0.05) {
    }
    seconds_per_tick_ = seconds_since(start) / static_cast<double>(__rdtsc() - ticks);
#endif
  }
  static const char* name() {
#if defined(__x86_64__)
    return "tsc";
#else
    return "steady_clock";
#endif
  }
  std::uint64_t now() const {
#if defined(__x86_64__)
    _mm_lfence();
    const std::uint64_t t = __rdtsc();
    _mm_lfence();
    return t;
#else
    return static_cast<std::uint64_t>(Clock::now().time_since_epoch().count());
#endif
  }
  double seconds(std::uint64_t ticks) const {
    return static_cast<double>(ticks) * seconds_per_tick_;
  }

 private:
  double seconds_per_tick_ = std::chrono::duration<double>(Clock::duration(1)).count();
};

// Seconds one start/stop pair of timer reads adds to a timed call.
double timer_pair_overhead(const CallTimer& timer) {
  constexpr int kPairs = 1'000'000;
  std::uint64_t sum = 0;
  for (int i = 0; i < kPairs; ++i) {
    const std::uint64_t start = timer.now();
    sum += timer.now() - start;
  }
  return timer.seconds(sum) / kPairs;
}

// (d): 100,000 inserts at random positions of a growing list, 3 repetitions.
nlohmann::json run_random_positions() {
  constexpr int kCount = 100'000;
  std::vector<double> rates;
  std::vector<double> corrected;
  std::vector<double> walls;
  Keys final_list;
  const CallTimer timer;
  const double overhead = timer_pair_overhead(timer);
  for (int rep = 0; rep < 3; ++rep) {
    auto positions = Mulberry32::from_seed(1);
    auto jitter = jitter_stream(1);
    bulleted::testing::PositionList list;
    std::uint64_t library_ticks = 0;
    const auto wall_start = Clock::now();
    for (int i = 0; i < kCount; ++i) {
      const auto p = below(positions.next(), static_cast<std::uint32_t>(list.size() + 1));
      const auto lo = list.before(p);
      const auto hi = list.at(p);
      // The key is kept where the call builds it, in the returned result (as
      // the JS side keeps the string it gets back); moving it out is list
      // maintenance, as the insert is.
      const std::uint64_t start = timer.now();
      auto key = between(lo, hi, jitter);
      library_ticks += timer.now() - start;
      if (!key) std::abort();
      list.insert(std::move(*key));
    }
    const double library_seconds = timer.seconds(library_ticks);
    walls.push_back(seconds_since(wall_start));
    rates.push_back(kCount / library_seconds);
    corrected.push_back(kCount / (library_seconds - kCount * overhead));
    if (rep == 0) list.for_each([&](const std::string& key) { final_list.push_back(key); });
  }
  auto report = key_report(final_list, final_list);
  report["workload"] = "d";
  report["opsPerSecond"] = median(rates);
  report["wallSecondsWithListMaintenance"] = median(walls);
  report["timer"] = CallTimer::name();
  report["timerOverheadNs"] = overhead * 1e9;
  report["opsPerSecondTimerCorrected"] = median(corrected);
  return report;
}

// (e) nBetween(null, null, 3000) / (e2) nBetween(k0, k1, 3000).
nlohmann::json run_bulk(bool into_gap) {
  constexpr std::size_t kCount = 3'000;
  std::vector<double> times;
  Keys keys;
  std::string k0;
  std::string k1;
  for (int rep = 0; rep < 22; ++rep) {
    auto jitter = jitter_stream(1);
    k0 = *between(std::nullopt, std::nullopt, jitter);
    k1 = *between(k0, std::nullopt, jitter);
    const auto start = Clock::now();
    keys = into_gap ? *n_between(k0, k1, kCount, jitter)
                    : *n_between(std::nullopt, std::nullopt, kCount, jitter);
    const double elapsed = seconds_since(start);
    if (rep >= 2) times.push_back(elapsed);
  }
  Keys ascending = keys;
  if (into_gap) {
    ascending.insert(ascending.begin(), k0);
    ascending.push_back(k1);
  }
  auto report = key_report(keys, ascending);
  report["workload"] = into_gap ? "e2" : "e";
  report["millisecondsPerCall"] = median(times) * 1e3;
  report["opsPerSecond"] = kCount / median(times);
  return report;
}

}  // namespace

int main() {
  for (const auto& report : {run_edges(true), run_edges(false), run_hammer(true), run_hammer(false),
                             run_random_positions(), run_bulk(false), run_bulk(true)}) {
    std::printf("%s\n", report.dump().c_str());
    std::fflush(stdout);
  }
  return 0;
}
