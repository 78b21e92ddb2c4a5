#include "appview/xrpc/views.hpp"

namespace bulleted::appview {

// No field is ever null: an absent value is an absent field (the lexicons
// declare no nullable field; the standard clients refuse a null).
nlohmann::json node_view(const schema::NodeRow& row) {
  nlohmann::json view = {
      {"uri", row.uri()},
      {"rkey", row.rkey},
      {"cid", row.cid},
      {"sortKey", row.sort_key_raw.value_or("")},
      {"sortKeyValid", row.sort_key_valid},
      {"text", row.text},
      {"completed", row.completed},
      {"createdAt", row.created_at},
      {"childCount", row.child_count},
  };
  if (row.parent_rkey) view["parent"] = *row.parent_rkey;
  if (row.note) view["note"] = *row.note;
  if (row.unattached) view["unattached"] = true;
  if (auto facets = schema::record_facets(row.text, row.record_json); !facets.is_null()) {
    view["facets"] = std::move(facets);
  }
  return view;
}

nlohmann::json subtree_view(const schema::SubtreeNode& tree) {
  nlohmann::json view = {{"children", nlohmann::json::array()}, {"more", tree.more}};
  if (tree.node) view["node"] = node_view(*tree.node);
  for (const auto& child : tree.children) view["children"].push_back(subtree_view(child));
  return view;
}

}  // namespace bulleted::appview
