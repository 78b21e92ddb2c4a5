#include "appview/views.hpp"

namespace bulleted::appview {

nlohmann::json row_facets(const schema::NodeRow& row) {
  if (row.record_json.find("\"facets\"") == std::string::npos) return nullptr;
  auto record = nlohmann::json::parse(row.record_json, nullptr, false);
  if (!record.is_object() || !record.contains("facets")) return nullptr;
  // Rows stored before facets were checked on the way in are checked here.
  return schema::sanitize_facets(row.text, record["facets"]);
}

nlohmann::json node_view(const schema::NodeRow& row) {
  nlohmann::json view = {
      {"uri", row.uri()},
      {"rkey", row.rkey},
      {"cid", row.cid},
      {"parent", row.parent_rkey ? nlohmann::json(*row.parent_rkey) : nlohmann::json()},
      {"sortKey", row.sort_key_raw.value_or("")},
      {"sortKeyValid", row.sort_key_valid},
      {"text", row.text},
      {"completed", row.completed},
      {"createdAt", row.created_at},
      {"childCount", row.child_count},
  };
  if (row.note) view["note"] = *row.note;
  if (row.unattached) view["unattached"] = true;
  if (auto facets = row_facets(row); !facets.is_null()) view["facets"] = std::move(facets);
  return view;
}

nlohmann::json subtree_view(const schema::SubtreeNode& tree) {
  nlohmann::json view = {{"children", nlohmann::json::array()}, {"more", tree.more}};
  if (tree.node) view["node"] = node_view(*tree.node);
  for (const auto& child : tree.children) view["children"].push_back(subtree_view(child));
  return view;
}

}  // namespace bulleted::appview
