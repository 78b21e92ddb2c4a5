#include "appview/cli/progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <ostream>

namespace bulleted::cli {
namespace {

std::string duration(double seconds) {
  const auto s = static_cast<long long>(seconds + 0.5);
  char buffer[32];
  if (s >= 3600) {
    std::snprintf(buffer, sizeof buffer, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  } else {
    std::snprintf(buffer, sizeof buffer, "%lld:%02lld", s / 60, s % 60);
  }
  return buffer;
}

}  // namespace

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

Progress::Progress(std::ostream& out, bool terminal, std::int64_t total, std::string what)
    : out_(out), terminal_(terminal), total_(total), what_(std::move(what)) {}

std::string Progress::line(std::int64_t done, const std::string& note) const {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = elapsed > 0.05 ? static_cast<double>(done - first_done_) / elapsed : 0;
  const double fraction = total_ > 0 ? static_cast<double>(done) / static_cast<double>(total_) : 1;
  char numbers[160];
  std::snprintf(numbers, sizeof numbers, "%lld/%lld %s (%.0f%%), %.0f/s",
                static_cast<long long>(done), static_cast<long long>(total_), what_.c_str(),
                fraction * 100, rate);
  std::string text = numbers;
  if (rate > 0 && done < total_) {
    text += ", ETA " + duration(static_cast<double>(total_ - done) / rate);
  }
  if (!note.empty()) text += ", " + note;
  if (!terminal_) return text;
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(fraction * kWidth);
  return "[" + std::string(filled, '#') + std::string(kWidth - filled, '-') + "] " + text;
}

void Progress::update(std::int64_t done, const std::string& note) {
  if (first_done_ < 0) {
    first_done_ = done;
    start_ = std::chrono::steady_clock::now();
  }
  const auto now = std::chrono::steady_clock::now();
  const auto every = terminal_ ? std::chrono::milliseconds(100) : std::chrono::milliseconds(2000);
  if (now - last_print_ < every) return;
  last_print_ = now;
  if (terminal_) {
    out_ << "\r" << line(done, note) << "\x1b[K" << std::flush;
  } else {
    out_ << line(done, note) << "\n" << std::flush;
  }
}

void Progress::finish(std::int64_t done) {
  if (first_done_ < 0) first_done_ = done;
  if (terminal_) {
    out_ << "\r" << line(done, "") << "\x1b[K\n" << std::flush;
  } else {
    out_ << line(done, "") << "\n" << std::flush;
  }
}

}  // namespace bulleted::cli
