// Progress of long work on the command line: a bar redrawn in place on a
// terminal (count, rate, ETA), plain lines every few seconds otherwise.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <string>

namespace bulleted::cli {

class Progress {
 public:
  Progress(std::ostream& out, bool terminal, std::int64_t total, std::string what);
  // `note` (for example "waiting until ...") is shown after the numbers.
  void update(std::int64_t done, const std::string& note = "");
  void finish(std::int64_t done);

 private:
  std::string line(std::int64_t done, const std::string& note) const;

  std::ostream& out_;
  bool terminal_;
  std::int64_t total_;
  std::string what_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_print_{};
  std::int64_t first_done_ = -1;
};

// Whether standard error is a terminal.
bool stderr_is_terminal();

}  // namespace bulleted::cli
