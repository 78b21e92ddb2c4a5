#include "appview/xrpc/views.hpp"

#include "schema/syntax.hpp"

namespace bulleted::appview {

// No field is ever null: an absent value is an absent field (the lexicons
// declare no nullable field; the standard clients refuse a null).
void write_node_view(JsonWriter& json, const schema::NodeRowView& row) {
  json.begin_object();
  json.key("uri").string_of({"at://", row.did, "/", schema::kNodeCollection, "/", row.rkey});
  json.key("rkey").string(row.rkey);
  json.key("cid").string(row.cid);
  json.key("sortKey").string(row.sort_key_raw.value_or(""));
  json.key("sortKeyValid").boolean(row.sort_key_valid);
  json.key("text").string(row.text);
  json.key("completed").boolean(row.completed);
  json.key("createdAt").string(row.created_at);
  json.key("childCount").number(row.child_count);
  if (row.parent_rkey) json.key("parent").string(*row.parent_rkey);
  if (row.note) json.key("note").string(*row.note);
  if (row.unattached) json.key("unattached").boolean(true);
  // Only records that carry facets pay for reading them.
  if (auto facets = schema::record_facets(row.text, row.record_json); !facets.is_null()) {
    json.key("facets").raw(facets.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
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

void SubtreeAnswer::top(const schema::NodeRowView* root) { add(root); }

void SubtreeAnswer::child(std::size_t parent, const schema::NodeRowView& node) {
  Entry& of = entries_[parent];
  if (of.children++ == 0) of.first = entries_.size();
  add(&node);
}

void SubtreeAnswer::more(std::size_t id) { entries_[id].more = true; }

std::string SubtreeAnswer::text() const {
  std::string out;
  out.reserve(views_.size() + 40 * entries_.size() + 64);
  if (!entries_.empty()) write(out, 0);
  return out;
}

void SubtreeAnswer::write(std::string& out, std::size_t id) const {
  const Entry& entry = entries_[id];
  out += '{';
  if (entry.end > entry.begin) {
    out += "\"node\":";
    out.append(views_, entry.begin, entry.end - entry.begin);
    out += ',';
  }
  out += "\"children\":[";
  for (std::size_t k = 0; k < entry.children; ++k) {
    if (k > 0) out += ',';
    write(out, entry.first + k);
  }
  out += "],\"more\":";
  out += entry.more ? "true}" : "false}";
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

}  // namespace bulleted::appview
