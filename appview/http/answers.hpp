// What the HTTP front reads from a request line and writes as an answer's
// head (internal to appview/http/): header names compared as lower case, a
// request target split into its decoded path and raw query, and the head of
// an answer as it goes out (nosniff on every answer; HEAD with its GET's
// framing).
#pragma once

#include <string>
#include <string_view>

#include "appview/http/server.hpp"

namespace bulleted::appview::http_detail {

// Lowercased, surrounding blanks dropped (header names).
std::string lower_trimmed(std::string_view text);

// Adds one line's value to a header's joined value (", " between lines),
// in place: a head of thousands of lines of one name costs what it holds,
// not its square.
void join_field(std::string& joined, std::string_view value);

// A request target as the front reads it.
struct Target {
  std::string path;   // percent-decoded, no query
  std::string query;  // raw, without '?' (and without a fragment)
  // The target is of the form //host/path: it names no path of this server
  // (and must not read as "/").
  bool network_path = false;
  // Neither a path, an absolute URL nor "*", or a path whose percent
  // escapes are broken.
  bool invalid = false;
};
Target parse_target(std::string_view target);

// The reason phrase sent with a status.
std::string_view reason_phrase(int status);

// How an answer's body is framed on the wire.
enum class Framing {
  kLength,      // Content-Length: the whole body is known
  kChunked,     // streamed or held, to an HTTP/1.1 client
  kUntilClose,  // streamed or held, to an HTTP/1.0 client: ended by closing
};

// The head of `out` (status line and headers, up to the blank line):
// the answer's own headers (line breaks in names or values dropped),
// X-Content-Type-Options: nosniff unless it says otherwise, its type, its
// framing (for HEAD, what its GET would have), and Connection: close when
// `close`.
std::string answer_head(const HttpResponse& out, Framing framing, bool close);

}  // namespace bulleted::appview::http_detail
