// The process logger (spdlog's default logger, the one global of the
// project): text lines or one JSON object a line, on stderr.
//
// Whatever a message holds (request paths, identifiers, upstream errors),
// one message is one line: in text format control characters and
// backslashes are escaped (\n, \r, \t, \\, \xNN), in JSON format the
// message is a JSON string. A client cannot forge a log line.
#pragma once

#include <spdlog/formatter.h>

#include <memory>
#include <string>
#include <string_view>

namespace bulleted::appview {

// Sets level ("trace".."error") and format ("text" or "json").
void configure_logging(const std::string& level, const std::string& format);

// The formatter configure_logging installs for `format`.
std::unique_ptr<spdlog::formatter> make_log_formatter(const std::string& format);

// `text` with control characters (C0, DEL) and backslashes escaped.
std::string escape_log_text(std::string_view text);

}  // namespace bulleted::appview
