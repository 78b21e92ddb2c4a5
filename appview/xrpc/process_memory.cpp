#include "appview/xrpc/process_memory.hpp"

#include <dlfcn.h>

#include <charconv>
#include <fstream>
#include <sstream>
#include <string>

namespace bulleted::appview {
namespace {

// The value of "Field:   1234 kB" in bytes.
std::optional<std::uint64_t> kilobytes_field(std::string_view status, std::string_view field) {
  std::size_t at = 0;
  while ((at = status.find(field, at)) != std::string_view::npos) {
    const bool line_start = at == 0 || status[at - 1] == '\n';
    at += field.size();
    if (!line_start || at >= status.size() || status[at] != ':') continue;
    std::size_t digits = status.find_first_of("0123456789", at);
    if (digits == std::string_view::npos) return std::nullopt;
    std::uint64_t kib = 0;
    const auto [end, ec] =
        std::from_chars(status.data() + digits, status.data() + status.size(), kib);
    if (ec != std::errc()) return std::nullopt;
    return kib * 1024;
  }
  return std::nullopt;
}

// jemalloc's mallctl, looked up at run time: present only when the binary
// was linked with it (not in sanitizer builds).
using Mallctl = int (*)(const char*, void*, std::size_t*, void*, std::size_t);

std::optional<std::uint64_t> jemalloc_stat(Mallctl mallctl, const char* name) {
  std::size_t value = 0;
  std::size_t size = sizeof(value);
  if (mallctl(name, &value, &size, nullptr, 0) != 0) return std::nullopt;
  return value;
}

}  // namespace

ProcessMemory parse_proc_status(std::string_view status) {
  ProcessMemory memory;
  memory.resident_anon_bytes = kilobytes_field(status, "RssAnon");
  const auto file = kilobytes_field(status, "RssFile");
  const auto shmem = kilobytes_field(status, "RssShmem");
  if (file) memory.resident_file_bytes = *file + shmem.value_or(0);
  return memory;
}

ProcessMemory read_process_memory() {
  std::ifstream in("/proc/self/status");
  std::ostringstream text;
  text << in.rdbuf();
  ProcessMemory memory = parse_proc_status(text.str());
  if (auto mallctl = reinterpret_cast<Mallctl>(dlsym(RTLD_DEFAULT, "mallctl"))) {
    // Statistics are a snapshot taken when the epoch advances.
    std::uint64_t epoch = 1;
    std::size_t size = sizeof(epoch);
    mallctl("epoch", &epoch, &size, &epoch, size);
    memory.allocated_bytes = jemalloc_stat(mallctl, "stats.allocated");
    memory.allocator_resident_bytes = jemalloc_stat(mallctl, "stats.resident");
  }
  return memory;
}

}  // namespace bulleted::appview
