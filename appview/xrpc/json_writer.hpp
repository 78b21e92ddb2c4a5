// JSON written straight into the answer's string, for the answers built
// from many rows (pages, windows, subtrees, changes): no document tree, one
// buffer. Strings are escaped as JSON requires; bytes that are not UTF-8 are
// written as U+FFFD, as the rest of the API does.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace bulleted::appview {

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  // The name of the next member of an object.
  JsonWriter& key(std::string_view name);
  // A name written in the source (a literal: plain ASCII, nothing to escape).
  template <std::size_t N>
  JsonWriter& key(const char (&name)[N]) {
    return plain_key(std::string_view(name, N - 1));
  }
  JsonWriter& string(std::string_view text);
  // One string made of `parts`, each escaped (no temporary string).
  JsonWriter& string_of(std::initializer_list<std::string_view> parts);
  JsonWriter& number(std::int64_t value);
  JsonWriter& boolean(bool value);
  // A value that is already JSON.
  JsonWriter& raw(std::string_view json);

 private:
  void separate();
  JsonWriter& plain_key(std::string_view name);

  std::string& out_;
  // Per open container: whether it holds a value yet.
  std::vector<bool> filled_;
  bool after_key_ = false;
};

}  // namespace bulleted::appview
