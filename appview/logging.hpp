// The process logger (spdlog's default logger, the one global of the
// project): text lines or one JSON object a line, on stderr.
#pragma once

#include <string>

namespace bulleted::appview {

// Sets level ("trace".."error") and format ("text" or "json").
void configure_logging(const std::string& level, const std::string& format);

}  // namespace bulleted::appview
