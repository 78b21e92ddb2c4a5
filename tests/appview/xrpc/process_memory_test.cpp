// The memory figures of /metrics: read from /proc/self/status, split into the
// process's own pages and file-backed ones.
#include "appview/xrpc/process_memory.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "appview/xrpc/request_metrics.hpp"

namespace bulleted::appview {
namespace {

TEST(ProcessMemory, ParsesTheKernelsFields) {
  const std::string status =
      "Name:\tbulleted-appview\nVmRSS:\t   60000 kB\nRssAnon:\t    7000 kB\n"
      "RssFile:\t   50000 kB\nRssShmem:\t    3000 kB\n";
  const ProcessMemory memory = parse_proc_status(status);
  EXPECT_EQ(memory.resident_anon_bytes, 7000u * 1024);
  EXPECT_EQ(memory.resident_file_bytes, 53000u * 1024);
}

TEST(ProcessMemory, AFieldNameInsideAnotherLineIsNotTaken) {
  const ProcessMemory memory = parse_proc_status("XRssAnon:\t5 kB\nRssAnon:\t9 kB\n");
  EXPECT_EQ(memory.resident_anon_bytes, 9u * 1024);
  EXPECT_FALSE(memory.resident_file_bytes.has_value());
}

TEST(ProcessMemory, ThisProcessHasResidentMemoryAndMetricsShowIt) {
  std::vector<char> touched(8 << 20, 1);  // 8 MiB of heap, resident
  const ProcessMemory memory = read_process_memory();
  ASSERT_TRUE(memory.resident_anon_bytes.has_value());
  EXPECT_GE(*memory.resident_anon_bytes, touched.size());
  EXPECT_EQ(touched[touched.size() / 2], 1);
  const std::string text = RequestMetrics().render(nullptr, 0, 0);
  EXPECT_NE(text.find("bulleted_process_resident_bytes{kind=\"anon\"} "), std::string::npos);
  EXPECT_NE(text.find("bulleted_process_resident_bytes{kind=\"file\"} "), std::string::npos);
}

}  // namespace
}  // namespace bulleted::appview
