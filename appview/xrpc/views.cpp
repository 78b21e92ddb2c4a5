#include "appview/xrpc/views.hpp"

#include <algorithm>

#include "schema/outline_record.hpp"
#include "schema/syntax.hpp"

namespace bulleted::appview {

namespace {

std::string_view collection_of(const schema::NodeRowView& row) {
  return row.mirror_of ? schema::kMirrorCollection : schema::kNodeCollection;
}

// A mirror's row: the original it stands for, not expanded. It has no
// children, display or note of its own.
void write_mirror(JsonWriter& json, const schema::NodeRowView& row) {
  json.key("mirror").begin_object();
  json.key("original").string(*row.mirror_of);
  json.end_object();
}

}  // namespace

// No field is ever null: an absent value is an absent field (the lexicons
// declare no nullable field; the standard clients refuse a null).
void write_node_view(JsonWriter& json, const schema::NodeRowView& row) {
  json.begin_object();
  json.key("uri").string_of({"at://", row.did, "/", collection_of(row), "/", row.rkey});
  json.key("rkey").string(row.rkey);
  json.key("cid").string(row.cid);
  json.key("sortKey").string(row.sort_key_raw.value_or(""));
  json.key("sortKeyValid").boolean(row.sort_key_valid);
  json.key("text").string(row.text);
  json.key("completed").boolean(row.completed);
  // completedAt as the record says it (an earlier build's completed record:
  // its createdAt), absent when not completed.
  if (row.completed) json.key("completedAt").string(row.completed_at.value_or(row.created_at));
  json.key("createdAt").string(row.created_at);
  if (row.layout) json.key("layout").string(*row.layout);
  if (row.mirror_of) {
    json.key("childCount").number(0);
    write_mirror(json, row);
  } else {
    if (row.display) json.key("display").string(*row.display);
    json.key("childCount").number(row.child_count);
  }
  if (row.parent_rkey) json.key("parent").string(*row.parent_rkey);
  if (row.note && !row.mirror_of) json.key("note").string(*row.note);
  if (row.unattached) json.key("unattached").boolean(true);
  // As the index keeps them: checked and written as JSON with the row.
  if (row.facets) json.key("facets").raw(*row.facets);
  json.end_object();
}

void write_outline_row(JsonWriter& json, const schema::NodeRowView& row) {
  json.begin_object();
  json.key("uri").string_of({"at://", row.did, "/", collection_of(row), "/", row.rkey});
  json.key("cid").string(row.cid);
  json.key("rkey").string(row.rkey);
  json.key("did").string(row.did);
  json.key("sortKey").string(row.sort_key_raw.value_or(""));
  json.key("text").string(row.text);
  if (row.facets) json.key("facets").raw(*row.facets);
  if (row.layout && !row.mirror_of) json.key("layout").string(*row.layout);
  if (row.display && !row.mirror_of) json.key("display").string(*row.display);
  if (row.mirror_of) write_mirror(json, row);
  if (row.parent_rkey) {
    json.key("parent").string_of(
        {"at://", row.did, "/", schema::kNodeCollection, "/", *row.parent_rkey});
  }
  json.key("createdAt").string(row.created_at);
  json.key("childCount").number(row.mirror_of ? 0 : row.child_count);
  if (row.completed) json.key("completedAt").string(row.completed_at.value_or(row.created_at));
  if (row.note && !row.mirror_of) json.key("note").string(*row.note);
  json.end_object();
}

void write_node_view(JsonWriter& json, const schema::NodeRow& row) {
  write_node_view(json, row.view());
}

void write_subtree_view(JsonWriter& json, const schema::SubtreeNode& tree) {
  json.begin_object();
  if (tree.node) {
    json.key("node");
    write_node_view(json, *tree.node);
  }
  json.key("children").begin_array();
  for (const auto& child : tree.children) write_subtree_view(json, child);
  json.end_array();
  json.key("more").boolean(tree.more);
  json.end_object();
}

void SubtreeAnswer::add(const schema::NodeRowView* node) {
  Entry entry;
  entry.begin = views_.size();
  if (node != nullptr) write_node_view(writer_, *node);
  entry.end = views_.size();
  entries_.push_back(entry);
}

void SubtreeAnswer::top(const schema::NodeRowView* root) {
  add(root);
  enter(0);
}

void SubtreeAnswer::child(std::size_t parent, const schema::NodeRowView& node) {
  Entry& of = entries_[parent];
  if (of.children++ == 0) of.first = entries_.size();
  add(&node);
}

void SubtreeAnswer::more(std::size_t id) { entries_[id].more = true; }

void SubtreeAnswer::settled(std::size_t id) {
  entries_[id].settled = true;
  advance();
}

// Writes node `id`'s opening, up to its children's array.
void SubtreeAnswer::enter(std::size_t id) {
  const Entry& entry = entries_[id];
  out_ += '{';
  if (entry.end > entry.begin) {
    out_ += "\"node\":";
    out_.append(views_, entry.begin, entry.end - entry.begin);
    out_ += ',';
  }
  out_ += "\"children\":[";
  open_.push_back({id});
}

// Writes on, depth first, from where it stopped, up to the first node whose
// children have not all been read: a node's children and its end are
// written only once it is settled.
void SubtreeAnswer::advance() {
  while (!open_.empty()) {
    Open& at = open_.back();
    const Entry& entry = entries_[at.id];
    if (!entry.settled) break;
    if (at.written < entry.children) {
      if (at.written > 0) out_ += ',';
      enter(entry.first + at.written++);
      continue;
    }
    out_ += "],\"more\":";
    out_ += entry.more ? "true}" : "false}";
    open_.pop_back();
  }
  if (flush_ && out_.size() >= piece_) {
    flush_(out_);
    out_.clear();
    piece_ = std::min(piece_ * 2, kLargestPiece);
  }
}

void SubtreeAnswer::finish() {
  if (flush_ && !out_.empty()) {
    flush_(out_);
    out_.clear();
  }
}

nlohmann::json node_view(const schema::NodeRow& row) {
  std::string text;
  JsonWriter json(text);
  write_node_view(json, row);
  return nlohmann::json::parse(text);
}

nlohmann::json subtree_view(const schema::SubtreeNode& tree) {
  std::string text;
  JsonWriter json(text);
  write_subtree_view(json, tree);
  return nlohmann::json::parse(text);
}

void write_change(std::string& out, const schema::Change& change) {
  JsonWriter json(out);
  json.begin_object();
  json.key("op").string(change.deleted ? "delete" : "upsert");
  json.key("rkey").string(change.rkey);
  if (change.node) {
    json.key("node");
    write_node_view(json, *change.node);
  }
  json.end_object();
}

}  // namespace bulleted::appview
