// Reads table-driven test data: one case a line, '#' comments, blank lines
// skipped, fields split on whitespace. In fields, "\xNN" is a raw byte and
// "(empty)" the empty string.
#pragma once

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace bulleted::testing {

struct VectorLine {
  int line_number;
  std::vector<std::string> fields;
  std::string rest_after(std::size_t field_count) const;  // joined remainder
  std::string raw;
};

inline std::string unescape_field(const std::string& field) {
  if (field == "(empty)") return "";
  std::string out;
  for (std::size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size() && field[i + 1] == 'x') {
      out.push_back(static_cast<char>(std::stoi(field.substr(i + 2, 2), nullptr, 16)));
      i += 3;
    } else {
      out.push_back(field[i]);
    }
  }
  return out;
}

inline std::string VectorLine::rest_after(std::size_t field_count) const {
  std::string out;
  for (std::size_t i = field_count; i < fields.size(); ++i) {
    if (!out.empty()) out += ' ';
    out += fields[i];
  }
  return out;
}

// Lines of a vector file; throws when the file cannot be read (a missing
// fixture must fail the test, not pass it with zero cases).
inline std::vector<VectorLine> read_vector_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<VectorLine> lines;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    VectorLine entry{number, {}, line};
    for (std::string word; words >> word;) entry.fields.push_back(word);
    if (!entry.fields.empty()) lines.push_back(std::move(entry));
  }
  return lines;
}

// Lines of an interop syntax file (one value a line, kept verbatim).
inline std::vector<std::string> read_syntax_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<std::string> values;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    values.push_back(line);
  }
  return values;
}

}  // namespace bulleted::testing
