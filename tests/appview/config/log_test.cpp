// The log: request data cannot forge a line in either format.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "appview/logging.hpp"

namespace bulleted::appview {
namespace {

using nlohmann::json;

TEST(LogTest, RequestDataCannotForgeALine) {
  const std::string forged = std::string("GET /x\n2026-12-01T00:00:00.000Z error forged\r\t\\") +
                             std::string(1, '\0') + "\x1b[31m";
  for (const std::string format : {"text", "json"}) {
    std::ostringstream out;
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
    spdlog::logger logger("test", sink);
    logger.set_formatter(make_log_formatter(format));
    logger.info("request {} done", forged);
    logger.flush();
    const std::string line = out.str();
    EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1) << format << ": " << line;
    EXPECT_EQ(line.find('\0'), std::string::npos) << format;
    EXPECT_EQ(line.find('\x1b'), std::string::npos) << format;
    EXPECT_EQ(line.find('\r'), std::string::npos) << format;
    if (format == "json") {
      auto parsed = json::parse(line);
      EXPECT_EQ(parsed["msg"], "request " + forged + " done");
    } else {
      EXPECT_NE(line.find("GET /x\\n2026"), std::string::npos) << line;
      EXPECT_NE(line.find("\\x00\\x1b[31m"), std::string::npos) << line;
    }
  }
  EXPECT_EQ(escape_log_text("a\\b\x7f"), "a\\\\b\\x7f");
  EXPECT_EQ(escape_log_text("caf\xc3\xa9"), "caf\xc3\xa9") << "UTF-8 stays as it is";
}

}  // namespace
}  // namespace bulleted::appview
