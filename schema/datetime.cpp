#include "schema/datetime.hpp"

#include <cstdio>
#include <ctime>

#include "schema/syntax.hpp"

namespace bulleted::schema {
namespace {

std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

}  // namespace

std::optional<std::int64_t> datetime_ms(std::string_view text) {
  if (!Datetime::parse(text)) return std::nullopt;
  auto num = [&](std::size_t pos, std::size_t len) {
    std::int64_t v = 0;
    for (std::size_t i = pos; i < pos + len; ++i) v = v * 10 + (text[i] - '0');
    return v;
  };
  std::int64_t ms = days_from_civil(num(0, 4), static_cast<unsigned>(num(5, 2)),
                                    static_cast<unsigned>(num(8, 2))) *
                    86'400'000;
  ms += (num(11, 2) * 3600 + num(14, 2) * 60 + num(17, 2)) * 1000;
  std::size_t pos = 19;
  if (text[pos] == '.') {
    std::int64_t fraction = 0;
    int digits = 0;
    for (++pos; pos < text.size() && text[pos] >= '0' && text[pos] <= '9'; ++pos) {
      if (digits < 3) {
        fraction = fraction * 10 + (text[pos] - '0');
        ++digits;
      }
    }
    while (digits++ < 3) fraction *= 10;
    ms += fraction;
  }
  if (text[pos] != 'Z') {
    const std::int64_t offset = (num(pos + 1, 2) * 60 + num(pos + 4, 2)) * 60'000;
    ms += text[pos] == '+' ? -offset : offset;
  }
  return ms;
}

std::string format_datetime(std::chrono::system_clock::time_point when) {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(when.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[80];  // room for any int the compiler can imagine in each field
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<int>(ms % 1000));
  return buffer;
}

std::string now_datetime() { return format_datetime(std::chrono::system_clock::now()); }

}  // namespace bulleted::schema
