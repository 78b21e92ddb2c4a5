// The app.bulleted.outline record: the title, description and image of an
// outline, and who may contribute to it (DESIGN.md sections 12 and 15).
// Record key `self` describes the repo's whole forest; any other key the
// subtree at `root`, a node of the same repo (present exactly when the key
// is not `self`). Read leniently within the app view's caps; a record that
// breaks those rules is invalid (counted, never indexed).
#pragma once

#include <expected>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace bulleted::schema {

inline constexpr std::string_view kOutlineSelf = "self";
// The app view's caps on what it keeps of an outline record (above the
// published limits: reading is lenient).
inline constexpr std::size_t kMaxOutlineTitleBytes = 3'000;
inline constexpr std::size_t kMaxOutlineTextBytes = 10'000;
inline constexpr std::size_t kMaxOutlineRecordBytes = 64 * 1024;

struct OutlineRecord {
  std::optional<std::string> root_rkey;  // none for `self`
  std::optional<std::string> title;
  std::optional<std::string> description;
  std::optional<std::string> image_cid;   // the blob's CID
  std::optional<std::string> image_mime;  // as the record says it
  std::optional<std::string> image_alt;
  std::string created_at;
  nlohmann::json record;  // the JSON form as read (contributors, for section 15)
};

// Parses the outline record found at `did`/`rkey` from its JSON form (a
// blob's ref as {"$link": cid}).
std::expected<OutlineRecord, std::string> parse_outline_record(const nlohmann::json& json,
                                                               std::string_view did,
                                                               std::string_view rkey);

// The published family's other records, kept as they came for what serves
// them (DESIGN.md section 15): app.bulleted.mirror (`original`, a node of
// any repo; `sortKey`; `createdAt`; `parent`), app.bulleted.comment
// (`subject`, `text`, `createdAt`) and app.bulleted.commentPolicy (`allow`,
// `createdAt`, `root` exactly when the key is not `self`). Checked for the
// published required fields and their types, within the app view's caps.
inline constexpr std::string_view kMirrorCollection = "app.bulleted.mirror";
inline constexpr std::string_view kCommentCollection = "app.bulleted.comment";
inline constexpr std::string_view kCommentPolicyCollection = "app.bulleted.commentPolicy";
std::expected<nlohmann::json, std::string> parse_kept_record(std::string_view collection,
                                                             const nlohmann::json& json,
                                                             std::string_view did,
                                                             std::string_view rkey);

}  // namespace bulleted::schema
