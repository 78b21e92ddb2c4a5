// The names of an enum's values as one table: rows of (value, name) in the
// enum's order, checked at compile time to be in that order and to cover
// the enum up to its last value (the idiom of error.cpp's table), instead
// of a hand-written switch per enum. Lookups by value are an index; by name,
// a scan of the few rows.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

namespace bulleted::schema {

template <class Enum, std::size_t N>
struct EnumNames {
  std::array<std::pair<Enum, std::string_view>, N> rows;

  // Whether row i holds the value i, and the table ends at `last`.
  constexpr bool covers(Enum last) const {
    for (std::size_t i = 0; i < N; ++i) {
      if (static_cast<std::size_t>(rows[i].first) != i) return false;
    }
    return static_cast<std::size_t>(last) + 1 == N;
  }
  constexpr std::string_view name(Enum value) const {
    return rows[static_cast<std::size_t>(value)].second;
  }
  constexpr std::optional<Enum> parse(std::string_view text) const {
    for (const auto& [value, name] : rows) {
      if (name == text) return value;
    }
    return std::nullopt;
  }
};

}  // namespace bulleted::schema
