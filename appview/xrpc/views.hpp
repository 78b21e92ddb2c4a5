// The JSON shapes the API answers with (NodeView and friends), built from
// index rows.
#pragma once

#include <nlohmann/json.hpp>

#include "schema/store.hpp"

namespace bulleted::appview {

// {uri, rkey, cid, parent, sortKey, sortKeyValid, text, note?, completed,
//  createdAt, childCount, unattached?, facets?}
nlohmann::json node_view(const schema::NodeRow& row);
// {node?, children: [...], more}
nlohmann::json subtree_view(const schema::SubtreeNode& tree);

}  // namespace bulleted::appview
