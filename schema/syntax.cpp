#include "schema/syntax.hpp"

#include <algorithm>
#include <array>
#include <span>

namespace bulleted::schema {
namespace {

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alnum(char c) { return is_alpha(c) || is_digit(c); }

// Calls `visit` on each `separator`-separated part of `text` until it
// returns false; true when every part passed.
template <class Visit>
bool all_parts(std::string_view text, char separator, Visit visit) {
  for (std::size_t start = 0;;) {
    const std::size_t end = text.find(separator, start);
    if (!visit(text.substr(start, end == std::string_view::npos ? end : end - start))) {
      return false;
    }
    if (end == std::string_view::npos) return true;
    start = end + 1;
  }
}

// A DNS label: 1-63 of [A-Za-z0-9-], no hyphen at either end.
bool is_label(std::string_view label) {
  if (label.empty() || label.size() > 63) return false;
  if (label.front() == '-' || label.back() == '-') return false;
  return std::all_of(label.begin(), label.end(), [](char c) { return is_alnum(c) || c == '-'; });
}

int number(std::string_view digits) {
  int value = 0;
  for (char c : digits) value = value * 10 + (c - '0');
  return value;
}

bool digits_at(std::string_view text, std::size_t pos, std::size_t count) {
  if (pos + count > text.size()) return false;
  for (std::size_t i = pos; i < pos + count; ++i) {
    if (!is_digit(text[i])) return false;
  }
  return true;
}

bool leap_year(int year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

int days_in_month(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && leap_year(year) ? 29 : kDays[month - 1];
}

}  // namespace

Parsed<Did> Did::parse(std::string_view text) {
  if (text.size() > 2048) return std::unexpected("a DID is at most 2048 characters");
  if (text.substr(0, 4) != "did:") return std::unexpected("a DID starts with 'did:'");
  const std::size_t method_end = text.find(':', 4);
  if (method_end == std::string_view::npos || method_end == 4) {
    return std::unexpected("a DID needs a method and an identifier");
  }
  for (std::size_t i = 4; i < method_end; ++i) {
    if (text[i] < 'a' || text[i] > 'z') {
      return std::unexpected("a DID method is lower-case letters only");
    }
  }
  const std::string_view id = text.substr(method_end + 1);
  if (id.empty()) return std::unexpected("a DID's identifier is empty");
  for (char c : id) {
    if (!is_alnum(c) && c != '.' && c != '_' && c != ':' && c != '%' && c != '-') {
      return std::unexpected("a DID's identifier has a character outside [A-Za-z0-9._:%-]");
    }
  }
  if (id.back() == ':' || id.back() == '%') {
    return std::unexpected("a DID cannot end with ':' or '%'");
  }
  return Did{std::string(text)};
}

Parsed<Handle> Handle::parse(std::string_view text) {
  if (text.size() > 253) return std::unexpected("a handle is at most 253 characters");
  const std::size_t last_dot = text.rfind('.');
  if (last_dot == std::string_view::npos) {
    return std::unexpected("a handle has at least two labels");
  }
  if (!all_parts(text, '.', is_label)) {
    return std::unexpected("a handle label is 1-63 of [A-Za-z0-9-]");
  }
  if (!is_alpha(text[last_dot + 1])) {
    return std::unexpected("a handle's last label starts with a letter");
  }
  return Handle{std::string(text)};
}

Parsed<Nsid> Nsid::parse(std::string_view text) {
  if (text.size() > 317) return std::unexpected("an NSID is at most 317 characters");
  if (std::count(text.begin(), text.end(), '.') < 2) {
    return std::unexpected("an NSID has at least three segments");
  }
  const std::size_t last_dot = text.rfind('.');
  if (!all_parts(text.substr(0, last_dot), '.', is_label)) {
    return std::unexpected("an NSID segment is 1-63 of [A-Za-z0-9-]");
  }
  if (is_digit(text.front())) {
    return std::unexpected("an NSID's first segment starts with a letter");
  }
  const std::string_view name = text.substr(last_dot + 1);
  if (name.empty() || name.size() > 63 || !is_alpha(name.front()) ||
      !std::all_of(name.begin(), name.end(), is_alnum)) {
    return std::unexpected("an NSID's name is a letter then up to 62 letters or digits");
  }
  return Nsid{std::string(text)};
}

Parsed<RecordKey> RecordKey::parse(std::string_view text) {
  if (text.empty() || text.size() > 512) return std::unexpected("a record key is 1-512 characters");
  if (text == "." || text == "..") return std::unexpected("a record key cannot be '.' or '..'");
  for (char c : text) {
    if (!is_alnum(c) && c != '.' && c != '-' && c != '_' && c != ':' && c != '~') {
      return std::unexpected("a record key has a character outside [A-Za-z0-9._:~-]");
    }
  }
  return RecordKey{std::string(text)};
}

Parsed<AtUri> AtUri::parse(std::string_view text) {
  if (text.size() > 8192) return std::unexpected("an AT-URI is at most 8 KiB");
  if (text.substr(0, 5) != "at://") return std::unexpected("an AT-URI starts with 'at://'");
  // authority[/collection[/rkey]], split without allocating (this runs for
  // every indexed record's parent).
  std::array<std::string_view, 3> parts_buffer;
  std::size_t part_count = 0;
  for (std::string_view rest = text.substr(5);;) {
    if (part_count == parts_buffer.size()) {
      return std::unexpected("an AT-URI has at most authority, collection, rkey");
    }
    const std::size_t slash = rest.find('/');
    parts_buffer[part_count++] = rest.substr(0, slash);
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  const std::span<const std::string_view> parts(parts_buffer.data(), part_count);
  AtUri uri;
  if (auto did = Did::parse(parts[0])) {
    uri.authority = std::move(did->value);
    uri.authority_is_did = true;
  } else if (auto handle = Handle::parse(parts[0])) {
    uri.authority = std::move(handle->value);
  } else {
    return std::unexpected("an AT-URI's authority is a DID or a handle");
  }
  if (parts.size() >= 2) {
    auto collection = Nsid::parse(parts[1]);
    if (!collection) return std::unexpected("an AT-URI's collection: " + collection.error());
    uri.collection = std::move(collection->value);
  }
  if (parts.size() == 3) {
    auto rkey = RecordKey::parse(parts[2]);
    if (!rkey) return std::unexpected("an AT-URI's record key: " + rkey.error());
    uri.rkey = std::move(rkey->value);
  }
  return uri;
}

std::string AtUri::str() const {
  std::string out = "at://" + authority;
  if (collection) out += "/" + *collection;
  if (rkey) out += "/" + *rkey;
  return out;
}

std::string record_uri(std::string_view did, std::string_view collection, std::string_view rkey) {
  std::string out;
  out.reserve(6 + did.size() + collection.size() + rkey.size() + 1);
  out.append("at://").append(did).append("/").append(collection).append("/").append(rkey);
  return out;
}

Parsed<Datetime> Datetime::parse(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)
  if (text.size() > 64) return std::unexpected("a datetime is at most 64 characters");
  if (!digits_at(text, 0, 4) || text.size() < 20 || text[4] != '-' || !digits_at(text, 5, 2) ||
      text[7] != '-' || !digits_at(text, 8, 2) || text[10] != 'T' || !digits_at(text, 11, 2) ||
      text[13] != ':' || !digits_at(text, 14, 2) || text[16] != ':' || !digits_at(text, 17, 2)) {
    return std::unexpected("a datetime looks like 1985-04-12T23:20:50.123Z");
  }
  std::size_t pos = 19;
  if (text[pos] == '.') {
    const std::size_t start = ++pos;
    while (pos < text.size() && is_digit(text[pos])) ++pos;
    if (pos == start) return std::unexpected("a datetime's fraction has at least one digit");
  }
  int offset_minutes = 0;
  const std::string_view zone = text.substr(pos);
  if (zone != "Z") {
    if (zone.size() != 6 || (zone[0] != '+' && zone[0] != '-') || !digits_at(zone, 1, 2) ||
        zone[3] != ':' || !digits_at(zone, 4, 2)) {
      return std::unexpected("a datetime needs a time zone: Z or +HH:MM");
    }
    if (zone == "-00:00") return std::unexpected("a datetime cannot use -00:00");
    const int hours = number(zone.substr(1, 2));
    const int minutes = number(zone.substr(4, 2));
    if (hours > 23 || minutes > 59) return std::unexpected("a datetime's offset is out of range");
    offset_minutes = (zone[0] == '+' ? 1 : -1) * (hours * 60 + minutes);
  }
  const int year = number(text.substr(0, 4));
  const int month = number(text.substr(5, 2));
  const int day = number(text.substr(8, 2));
  const int hour = number(text.substr(11, 2));
  const int minute = number(text.substr(14, 2));
  const int second = number(text.substr(17, 2));
  if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month) || hour > 23 ||
      minute > 59 || second > 60) {
    return std::unexpected("a datetime names no real time");
  }
  // Before year 0 once the offset is applied.
  if (year == 0 && month == 1 && day == 1 && hour * 60 + minute < offset_minutes) {
    return std::unexpected("a datetime before year 0");
  }
  return Datetime{std::string(text)};
}

}  // namespace bulleted::schema
