// The app.bulleted.node record: parsed from its JSON form (the AT Protocol
// data model), validated, and classified for the index.
//
// A record that breaks the lexicon (text missing or over its limits, a parent
// that is not an AT-URI, a bad createdAt) is rejected with a reason. A bad or
// missing sortKey is not a rejection: the record is kept, its raw key shown,
// and it sorts after every valid key.
#pragma once

#include <cstddef>
#include <expected>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bulleted::schema {

// The most of a text (a bullet's, a note's) the app view reads: a
// published note holds up to 100,000 bytes and 20,000 graphemes.
inline constexpr std::size_t kMaxTextBytes = 100'000;
inline constexpr std::size_t kMaxTextGraphemes = 20'000;
// The effective sort key of a record without a canonical sortKey: '~' sorts
// after every base-62 digit.
inline constexpr std::string_view kInvalidSortKey = "~";
// Where a record this app view writes keeps what of its text passes the
// published limits (written_text below).
inline constexpr std::string_view kTextRestField = "textRest";
inline constexpr std::string_view kTextRestFacetsField = "textRestFacets";

// Formatting features. WorkFlowy's inline styles are features of the
// project's own lexicon (app.bulleted.format: #bold, #italic, #underline,
// #strikethrough, #code, #highlight, #date), a link is the published
// facet's (app.bsky.richtext.facet#link). Records of an earlier build name
// the styles app.bulleted.node#<style>: they are read under the new names.
inline constexpr std::string_view kFormatPrefix = "app.bulleted.format#";
inline constexpr std::string_view kLegacyFormatPrefix = "app.bulleted.node#";
inline constexpr std::string_view kLinkFeature = "app.bsky.richtext.facet#link";
// The style a feature's $type names ("bold", "link", ...) under either name,
// or an empty view.
std::string_view style_of(std::string_view type);

// The published record's open sets (`layout`, `display`): any string is
// kept and served as written, up to this many bytes (the app view's own cap
// on hostile input; a longer one makes the record invalid).
inline constexpr std::size_t kMaxOpenValueBytes = 256;
// A facet feature of a type the app view does not know is kept and served
// verbatim (DESIGN.md section 12) when its JSON takes at most this many bytes.
inline constexpr std::size_t kMaxOtherFeatureBytes = 1024;

struct NodeRecord {
  std::string text;
  std::optional<std::string> note;
  std::optional<std::string> parent;    // AT-URI as written
  std::optional<std::string> sort_key;  // as written, canonical or not
  bool sort_key_valid = false;
  // Completed: the published record's `completedAt` is present (or an
  // earlier build's `completed: true`). `completed_at` is when, as written;
  // none for such an earlier record (served and written as its createdAt).
  bool completed = false;
  std::optional<std::string> completed_at;
  std::string created_at;
  std::optional<std::string> layout;   // "todo", "h1", ...: an open set
  std::optional<std::string> display;  // "expanded", "collapsed": an open set
  nlohmann::json facets;               // null when absent; kept for export

  // When it was completed, as the record says it: completed_at, else (an
  // earlier build's record) its createdAt; none when not completed.
  std::optional<std::string_view> completed_since() const {
    if (!completed) return std::nullopt;
    return completed_at ? std::string_view(*completed_at) : std::string_view(created_at);
  }
  // Marks it completed (keeping when it already was) or not, as a writer
  // does at `now`.
  void set_completed(bool done, std::string_view now) {
    if (done && !completed) completed_at = std::string(now);
    if (!done) completed_at.reset();
    completed = done;
  }

  // The key siblings are ordered by: the sortKey when canonical, else "~".
  std::string_view effective_sort_key() const {
    return sort_key_valid ? std::string_view(*sort_key) : kInvalidSortKey;
  }
};

// One field of a record as the validator sees it, whatever the encoding
// (JSON from clients, DAG-CBOR from the network).
struct RecordField {
  enum class Kind { kAbsent, kNull, kBool, kString, kArray, kOther };
  Kind kind = Kind::kAbsent;
  bool boolean = false;
  std::string_view text;  // for kString; valid while the source lives
};

class RecordFields {
 public:
  virtual ~RecordFields() = default;
  virtual bool is_object() const = 0;
  virtual RecordField get(std::string_view name) const = 0;
  // The facets array in its JSON form; called only when "facets" is an array.
  virtual nlohmann::json facets_json() const = 0;
  // The same of "textRestFacets" (kTextRestFacetsField).
  virtual nlohmann::json rest_facets_json() const = 0;
};

// A record's JSON form (from clients, the index's own column) as the
// validator's field source.
class JsonRecordFields final : public RecordFields {
 public:
  explicit JsonRecordFields(const nlohmann::json& json) : json_(json) {}
  bool is_object() const override { return json_.is_object(); }
  RecordField get(std::string_view name) const override {
    auto it = json_.find(name);
    if (it == json_.end()) return {};
    switch (it->type()) {
      case nlohmann::json::value_t::null:
        return {RecordField::Kind::kNull};
      case nlohmann::json::value_t::boolean:
        return {RecordField::Kind::kBool, it->get<bool>()};
      case nlohmann::json::value_t::string:
        return {RecordField::Kind::kString, false, it->get_ref<const std::string&>()};
      case nlohmann::json::value_t::array:
        return {RecordField::Kind::kArray};
      default:
        return {RecordField::Kind::kOther};
    }
  }
  nlohmann::json facets_json() const override { return json_.at("facets"); }
  nlohmann::json rest_facets_json() const override { return json_.at(kTextRestFacetsField); }

 private:
  const nlohmann::json& json_;
};

// Facets as the index keeps and serves them: each with a byte range inside
// the text on UTF-8 boundaries (start < end), 1 to kMaxFeatures known
// features rebuilt from their known fields (a link's URI http, https,
// mailto or at, at most kMaxLinkBytes; a highlight's colour and a date's
// start at most 64 bytes), at most kMaxFacets of them in at most
// kMaxFacetBytes of JSON. Whatever breaks a rule is dropped (the text is
// never touched) and, when `problems` is given, described there. Returns an
// array, or null when no facet is left.
inline constexpr std::size_t kMaxFacets = 1'000;
inline constexpr std::size_t kMaxFeatures = 8;
inline constexpr std::size_t kMaxLinkBytes = 2'048;
inline constexpr std::size_t kMaxFacetBytes = 64 * 1024;
nlohmann::json sanitize_facets(std::string_view text, const nlohmann::json& facets,
                               std::vector<std::string>* problems = nullptr);

// The facets of a stored record (its JSON form) as they are served: checked
// again by sanitize_facets (rows indexed before facets were checked on the
// way in); null when it has none.
nlohmann::json record_facets(std::string_view text, std::string_view record_json);
// record_facets as JSON text, as the index keeps it beside the record (the
// nodes table's facets column, written with the row) and serves it as is;
// none when the record has no facets.
std::optional<std::string> served_facets(std::string_view text, std::string_view record_json);
// The same of a record about to be written (what served_facets gives of its
// JSON form), without searching or parsing that form: a record without
// facets, as most are, costs nothing.
std::optional<std::string> served_facets(const NodeRecord& record);

// Parses and validates a record; the error is a reason for logs and counters.
// Invalid facets are dropped (sanitize_facets), not a rejection.
std::expected<NodeRecord, std::string> parse_node_record(const RecordFields& fields);
// Why a text field's value (`field`: "text" or "note") breaks the lexicon's
// limits (kMaxTextBytes, UTF-8, kMaxTextGraphemes), or none: what
// parse_node_record says of it, for writers that hold the value already.
std::optional<std::string> text_field_error(std::string_view field, std::string_view text);
// What this app view writes is held to the published lexicons' limits
// (reading is lenient, writing strict): a node's text at most 10,000 bytes
// and 2,000 graphemes, a note (the app.bulleted.note record's text) at most
// 100,000 bytes and 20,000 graphemes.
inline constexpr std::size_t kWrittenTextBytes = 10'000;
inline constexpr std::size_t kWrittenTextGraphemes = 2'000;
inline constexpr std::size_t kWrittenNoteBytes = 100'000;
inline constexpr std::size_t kWrittenNoteGraphemes = 20'000;
// Why a value a writer is about to write as `field` ("text" or "note")
// breaks those limits, or none.
std::optional<std::string> written_field_error(std::string_view field, std::string_view text);
// A text past those limits loses nothing (an imported bullet of years of
// notes): a record this app view writes carries the first part within them
// as `text` and the rest as `textRest`, and the facets that reach past the
// first part in `textRestFacets` (byte ranges of the whole text). Readers of
// the published lexicon see the first part; this app view reads the whole
// text back (and serves, searches and exports it).
struct WrittenText {
  std::string_view text;       // within the limits
  std::string_view rest;       // empty when the whole text fits
  nlohmann::json facets;       // those within `text`; null when none
  nlohmann::json rest_facets;  // the others; null when none
};
// Where `text` is cut: its longest prefix of at most `max_bytes` bytes and
// `max_graphemes` graphemes, at a grapheme boundary; its facets each go
// with the part they end in.
WrittenText written_text(std::string_view text, const nlohmann::json& facets,
                         std::size_t max_bytes = kWrittenTextBytes,
                         std::size_t max_graphemes = kWrittenTextGraphemes);
// The whole text and facets of a record read: `text` and `textRest`, the
// facets and `textRestFacets`; the reason when the whole text breaks the
// reading limits (text_field_error).
std::optional<std::string> read_whole_text(const RecordFields& fields, std::string_view text,
                                           std::string& whole, nlohmann::json& facets);
// A record without text: what parse_node_record and the writers say.
inline constexpr std::string_view kTextRequired = "text is required";
std::expected<NodeRecord, std::string> parse_node_record(const nlohmann::json& json);

// The record's JSON form, with $type, for storage and for writing to a PDS.
nlohmann::json to_json(const NodeRecord& record);
// The same as to_json(record).dump(), written directly (the apply hot path).
std::string to_json_text(const NodeRecord& record);

// Number of extended grapheme clusters in UTF-8 `text` (Unicode rules, ICU).
// REQUIRES: valid UTF-8.
std::size_t count_graphemes(std::string_view text);

// True when `text` is well-formed UTF-8.
bool is_valid_utf8(std::string_view text);

// The sibling group a record of `did` is filed in: "at://<did>" at the top
// level, the parent's AT-URI when it names an app.bulleted.node record of the
// same repo, otherwise the repo's unattached group (nobody can file a bullet
// into someone else's outline).
std::string sibling_group(std::string_view did, const std::optional<std::string>& parent);
std::string root_group(std::string_view did);
// The group of a node's children (its AT-URI).
std::string children_group(std::string_view did, std::string_view rkey);
// The group a node goes to under `parent_rkey`, or the top level.
std::string target_group(std::string_view did, const std::optional<std::string>& parent_rkey);
std::string unattached_group(std::string_view did);

}  // namespace bulleted::schema
