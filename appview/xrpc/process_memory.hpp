// The server's memory as operators read it: resident pages split into the
// process's own (anonymous: heap, stacks) and file-backed ones (the index
// mapped by SQLite, the kernel's cache of it), and, when the process runs on
// jemalloc, the bytes the allocator has handed out and holds.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace bulleted::appview {

struct ProcessMemory {
  std::optional<std::uint64_t> resident_anon_bytes;
  std::optional<std::uint64_t> resident_file_bytes;       // RssFile + RssShmem
  std::optional<std::uint64_t> allocated_bytes;           // jemalloc: in live allocations
  std::optional<std::uint64_t> allocator_resident_bytes;  // jemalloc: pages it holds
};

// From /proc/self/status, and jemalloc's statistics when it is the allocator.
ProcessMemory read_process_memory();

// The RssAnon / RssFile + RssShmem figures of a /proc/PID/status text.
ProcessMemory parse_proc_status(std::string_view status);

}  // namespace bulleted::appview
