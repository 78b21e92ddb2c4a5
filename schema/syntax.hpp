// AT Protocol identifiers, parsed once at the boundary (firehose decode, HTTP
// parameters, record fields) and trusted afterwards.
//
// Each parse function accepts exactly the strings the protocol's syntax rules
// accept and returns a reason otherwise. All functions are pure and
// thread-safe.
#pragma once

#include <expected>
#include <optional>
#include <string>
#include <string_view>

namespace bulleted::schema {

template <class T>
using Parsed = std::expected<T, std::string>;

// did:<method>:<identifier>, at most 2048 characters.
struct Did {
  std::string value;
  static Parsed<Did> parse(std::string_view text);
  friend auto operator<=>(const Did&, const Did&) = default;
};

// A DNS name of at least two labels; the last label starts with a letter.
struct Handle {
  std::string value;
  static Parsed<Handle> parse(std::string_view text);
};

// Reversed domain authority plus a name: com.example.fooBar.
struct Nsid {
  std::string value;
  static Parsed<Nsid> parse(std::string_view text);
};

// 1-512 characters of A-Za-z0-9 . - _ : ~, not "." or "..".
struct RecordKey {
  std::string value;
  static Parsed<RecordKey> parse(std::string_view text);
};

// at://<did-or-handle>[/<collection>[/<rkey>]].
struct AtUri {
  std::string authority;  // a DID or a handle
  std::optional<std::string> collection;
  std::optional<std::string> rkey;
  bool authority_is_did = false;

  static Parsed<AtUri> parse(std::string_view text);
  std::string str() const;
};

// The AT-URI of a record: at://<did>/<collection>/<rkey>.
std::string record_uri(std::string_view did, std::string_view collection, std::string_view rkey);

// RFC 3339 datetime in the protocol's strict profile (upper-case T and Z, a
// time zone required, no -00:00), and a real point in time at or after year 0.
struct Datetime {
  std::string value;
  static Parsed<Datetime> parse(std::string_view text);
};

inline constexpr std::string_view kNodeCollection = "app.bulleted.node";
// A node's note: a record of its own, at the node's record key.
inline constexpr std::string_view kNoteCollection = "app.bulleted.note";
// What titles and describes an outline (`self`) or a subtree of it.
inline constexpr std::string_view kOutlineCollection = "app.bulleted.outline";

}  // namespace bulleted::schema
