// JSON strings as the index and the API write them: escaped as JSON
// requires (as nlohmann::json::dump() does), bytes that are not UTF-8 written
// as U+FFFD. One escaper for stored records and for answers.
#pragma once

#include <string>
#include <string_view>

namespace bulleted::schema {

// Appends `text` as a JSON string (quotes included).
void append_json_string(std::string& out, std::string_view text);
// Appends `text` escaped for the inside of a JSON string.
void append_escaped(std::string& out, std::string_view text);

}  // namespace bulleted::schema
