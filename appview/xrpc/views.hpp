// The JSON shapes the API answers with (NodeView and friends), written
// straight from index rows into the answer's text (json_writer.hpp): no
// document tree for pages, windows, subtrees or changes.
#pragma once

#include <nlohmann/json.hpp>

#include "appview/xrpc/json_writer.hpp"
#include "schema/store.hpp"

namespace bulleted::appview {

// {uri, rkey, cid, parent?, sortKey, sortKeyValid, text, note?, completed,
//  createdAt, childCount, unattached?, facets?}
void write_node_view(JsonWriter& json, const schema::NodeRow& row);
// {node?, children: [...], more}
void write_subtree_view(JsonWriter& json, const schema::SubtreeNode& tree);

// The same as documents, for callers that inspect them.
nlohmann::json node_view(const schema::NodeRow& row);
nlohmann::json subtree_view(const schema::SubtreeNode& tree);

}  // namespace bulleted::appview
