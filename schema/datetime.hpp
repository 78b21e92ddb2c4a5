// Times as the AT Protocol writes them (RFC 3339 datetimes), in one place:
// parsed to milliseconds, written from a clock, and now. Parsing validates
// with Datetime::parse (schema/syntax.hpp) first.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace bulleted::schema {

// Milliseconds since the epoch of a datetime ("...Z" or an offset), nullopt
// when it is not one.
std::optional<std::int64_t> datetime_ms(std::string_view text);
// UTC with milliseconds: "2026-11-30T14:00:00.000Z".
std::string format_datetime(std::chrono::system_clock::time_point when);
std::string now_datetime();

}  // namespace bulleted::schema
