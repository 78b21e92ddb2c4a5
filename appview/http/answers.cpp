#include "appview/http/answers.hpp"

#include <cctype>

namespace bulleted::appview::http_detail {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decoded; false when an escape is broken.
bool percent_decode(std::string_view in, std::string& out) {
  out.clear();
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out += in[i];
      continue;
    }
    if (i + 2 >= in.size()) return false;
    const int high = hex_value(in[i + 1]);
    const int low = hex_value(in[i + 2]);
    if (high < 0 || low < 0) return false;
    out += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return true;
}

bool starts_with_ci(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  }
  return true;
}

// A header line as it goes out: no line breaks can split it.
void add_header(std::string& head, std::string_view name, std::string_view value) {
  for (char c : name) {
    if (c != '\r' && c != '\n' && c != ':') head += c;
  }
  head += ": ";
  for (char c : value) {
    if (c != '\r' && c != '\n') head += c;
  }
  head += "\r\n";
}

}  // namespace

std::string lower_trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  std::string out(text);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

void join_field(std::string& joined, std::string_view value) {
  if (!joined.empty()) joined.append(", ");
  joined.append(value);
}

Target parse_target(std::string_view target) {
  Target out;
  if (target == "*") {
    out.path = "*";
    return out;
  }
  if (target.starts_with("//")) {
    out.network_path = true;
    return out;
  }
  // The absolute form (what a client talking to a proxy sends): its
  // authority is dropped, its path kept ("/" when it has none).
  bool absolute = false;
  for (std::string_view scheme : {"http://", "https://"}) {
    if (starts_with_ci(target, scheme)) {
      target.remove_prefix(scheme.size());
      const std::size_t rest = target.find_first_of("/?#");
      target = rest == std::string_view::npos ? std::string_view() : target.substr(rest);
      absolute = true;
      break;
    }
  }
  if (const std::size_t fragment = target.find('#'); fragment != std::string_view::npos) {
    target = target.substr(0, fragment);
  }
  std::string_view path = target;
  if (const std::size_t query = target.find('?'); query != std::string_view::npos) {
    path = target.substr(0, query);
    out.query = std::string(target.substr(query + 1));
  }
  if (absolute && path.empty()) {
    out.path = "/";
    return out;
  }
  if (!path.starts_with('/') || !percent_decode(path, out.path)) {
    out.invalid = true;
    out.path.clear();
  }
  return out;
}

std::string_view reason_phrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 303:
      return "See Other";
    case 304:
      return "Not Modified";
    case 307:
      return "Temporary Redirect";
    case 308:
      return "Permanent Redirect";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 406:
      return "Not Acceptable";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 411:
      return "Length Required";
    case 412:
      return "Precondition Failed";
    case 413:
      return "Request Entity Too Large";
    case 414:
      return "Request-URI Too Long";
    case 415:
      return "Unsupported Media Type";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Time-out";
    default:
      return "Unknown";
  }
}

std::string answer_head(const HttpResponse& out, Framing framing, bool close) {
  std::string head = "HTTP/1.1 " + std::to_string(out.status) + " ";
  head += reason_phrase(out.status);
  head += "\r\n";
  bool nosniff_said = false;
  for (const auto& [name, value] : out.headers) {
    if (lower_trimmed(name) == "x-content-type-options") nosniff_said = true;
    add_header(head, name, value);
  }
  // No answer is ever read as another type than it says it is.
  if (!nosniff_said) add_header(head, "X-Content-Type-Options", "nosniff");
  const bool bodiless = out.status == 204 || out.status == 304;
  if (!bodiless) {
    add_header(head, "Content-Type", out.content_type);
    if (framing == Framing::kLength) {
      add_header(head, "Content-Length", std::to_string(out.body.size()));
    } else if (framing == Framing::kChunked) {
      add_header(head, "Transfer-Encoding", "chunked");
    }
  }
  if (close || framing == Framing::kUntilClose) add_header(head, "Connection", "close");
  head += "\r\n";
  return head;
}

}  // namespace bulleted::appview::http_detail
