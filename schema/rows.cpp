// The index's vocabulary: names of the states, the copies and views of a
// node row, what a node costs in an answer, and page cursors.
#include "schema/rows.hpp"

#include "schema/base64.hpp"
#include "schema/enum_names.hpp"
#include "schema/syntax.hpp"

namespace bulleted::schema {

namespace {

// The stored and served names.
constexpr EnumNames<RepoStatus, 5> kRepoStatusNames{{{
    {RepoStatus::kActive, "active"},
    {RepoStatus::kTakendown, "takendown"},
    {RepoStatus::kSuspended, "suspended"},
    {RepoStatus::kDeactivated, "deactivated"},
    {RepoStatus::kDeleted, "deleted"},
}}};
static_assert(kRepoStatusNames.covers(RepoStatus::kDeleted));

constexpr EnumNames<SyncState, 5> kSyncStateNames{{{
    {SyncState::kSynced, "synced"},
    {SyncState::kDesynchronized, "desynchronized"},
    {SyncState::kResyncing, "resyncing"},
    {SyncState::kFailed, "failed"},
    {SyncState::kGivenUp, "given-up"},
}}};
static_assert(kSyncStateNames.covers(SyncState::kGivenUp));

}  // namespace

std::string_view to_string(RepoStatus status) { return kRepoStatusNames.name(status); }

std::optional<RepoStatus> parse_repo_status(std::string_view text) {
  return kRepoStatusNames.parse(text);
}

std::string_view to_string(SyncState state) { return kSyncStateNames.name(state); }

std::optional<SyncState> parse_sync_state(std::string_view text) {
  return kSyncStateNames.parse(text);
}

std::string_view collection_name(Collection collection) {
  switch (collection) {
    case Collection::kNote:
      return kNoteCollection;
    case Collection::kOutline:
      return kOutlineCollection;
    case Collection::kMirror:
      return kMirrorCollection;
    case Collection::kComment:
      return kCommentCollection;
    case Collection::kCommentPolicy:
      return kCommentPolicyCollection;
    case Collection::kNode:
      break;
  }
  return kNodeCollection;
}

std::optional<Collection> parse_collection(std::string_view name) {
  if (name == kNodeCollection) return Collection::kNode;
  if (name == kNoteCollection) return Collection::kNote;
  if (name == kOutlineCollection) return Collection::kOutline;
  if (name == kMirrorCollection) return Collection::kMirror;
  if (name == kCommentCollection) return Collection::kComment;
  if (name == kCommentPolicyCollection) return Collection::kCommentPolicy;
  return std::nullopt;
}

std::string NodeRow::uri() const {
  return record_uri(did, mirror_of ? kMirrorCollection : kNodeCollection, rkey);
}

NodeRow NodeRow::from(const NodeRowView& fields) {
  auto copy = [](std::optional<std::string_view> text) {
    return text ? std::optional<std::string>(*text) : std::nullopt;
  };
  return NodeRow{.did = std::string(fields.did),
                 .rkey = std::string(fields.rkey),
                 .cid = std::string(fields.cid),
                 .rev = std::string(fields.rev),
                 .group = std::string(fields.group),
                 .parent_rkey = copy(fields.parent_rkey),
                 .unattached = fields.unattached,
                 .sort_key = std::string(fields.sort_key),
                 .sort_key_raw = copy(fields.sort_key_raw),
                 .sort_key_valid = fields.sort_key_valid,
                 .text = std::string(fields.text),
                 .note = copy(fields.note),
                 .completed = fields.completed,
                 .created_at = std::string(fields.created_at),
                 .completed_at = copy(fields.completed_at),
                 .layout = copy(fields.layout),
                 .display = copy(fields.display),
                 .facets = copy(fields.facets),
                 .mirror_of = copy(fields.mirror_of),
                 .record_json = std::string(fields.record_json),
                 .record_bytes = fields.record_bytes,
                 .child_count = fields.child_count,
                 .change_seq = fields.change_seq};
}

NodeRowView NodeRow::view() const {
  auto view = [](const std::optional<std::string>& text) {
    return text ? std::optional<std::string_view>(*text) : std::nullopt;
  };
  return NodeRowView{.did = did,
                     .rkey = rkey,
                     .cid = cid,
                     .rev = rev,
                     .group = group,
                     .parent_rkey = view(parent_rkey),
                     .unattached = unattached,
                     .sort_key = sort_key,
                     .sort_key_raw = view(sort_key_raw),
                     .sort_key_valid = sort_key_valid,
                     .text = text,
                     .note = view(note),
                     .completed = completed,
                     .created_at = created_at,
                     .completed_at = view(completed_at),
                     .layout = view(layout),
                     .display = view(display),
                     .facets = view(facets),
                     .mirror_of = view(mirror_of),
                     .record_json = record_json,
                     .record_bytes = record_bytes,
                     .child_count = child_count,
                     .change_seq = change_seq};
}

std::size_t view_bytes(const NodeRowView& row) {
  // The record's text, note, facets, completedAt, layout and display
  // (record_bytes holds them, escaped as the view escapes them); the URI ("at://" + DID + the
  // collection + rkey) and rkey, parent and CID; the view's names, counts and flags, and a
  // subtree's {"node":..,"children":[],"more":false} around them.
  return row.record_bytes + row.did.size() + 3 * row.rkey.size() +
         (row.parent_rkey ? row.parent_rkey->size() : 0) + 400;
}

std::string encode_page_cursor(std::string_view sort_key, std::string_view rkey) {
  std::string raw(sort_key);
  raw += '\n';
  raw += rkey;
  return base64_encode(raw, Base64Alphabet::kUrl, false);
}

std::optional<std::pair<std::string, std::string>> decode_page_cursor(std::string_view cursor) {
  auto raw = base64_decode(cursor, Base64Alphabet::kUrl);
  if (!raw) return std::nullopt;
  const std::size_t split = raw->find('\n');
  if (split == std::string::npos || split == 0 || split + 1 >= raw->size()) return std::nullopt;
  return std::make_pair(raw->substr(0, split), raw->substr(split + 1));
}

}  // namespace bulleted::schema
