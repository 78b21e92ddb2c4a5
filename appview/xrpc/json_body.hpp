// A procedure's JSON body, read without building a document tree: the
// top-level object's scalar members are kept (strings moved out of the
// lexer, never copied), nested values are skipped and only their kind is
// kept, so what is held is never larger than the body itself. Nesting deeper
// than `max_depth` stops the parse at once. Every procedure's input is a flat
// object (the lexicons), and unknown members are ignored (DESIGN section 6).
//
// Not thread-safe; a value type.
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "schema/error.hpp"

namespace bulleted::appview {

class JsonBody {
 public:
  static constexpr std::size_t kDefaultMaxDepth = 32;

  // kInvalidRequest: not JSON, not an object, or nested deeper than
  // `max_depth` (named in the message).
  static Result<JsonBody> parse(std::string_view text, std::size_t max_depth = kDefaultMaxDepth);

  // A member: a scalar as sent, or an empty object or array standing for a
  // nested value; nullptr when absent. A repeated name keeps its last value.
  const nlohmann::json* find(std::string_view name) const;
  // A string member moved out (nullopt when absent or not a string).
  std::optional<std::string> take_string(std::string_view name);

 private:
  friend class JsonBodyReader;
  std::map<std::string, nlohmann::json, std::less<>> members_;
};

}  // namespace bulleted::appview
