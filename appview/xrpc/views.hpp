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
void write_node_view(JsonWriter& json, const schema::NodeRowView& row);
void write_node_view(JsonWriter& json, const schema::NodeRow& row);
// {node?, children: [...], more}
void write_subtree_view(JsonWriter& json, const schema::SubtreeNode& tree);

// A getSubtree answer written as Store::subtree reads it: each node's view
// straight from the read into one buffer (no row copies), then the tree
// around them. The same text as write_subtree_view of the same tree.
class SubtreeAnswer final : public schema::SubtreeSink {
 public:
  SubtreeAnswer() = default;
  SubtreeAnswer(const SubtreeAnswer&) = delete;  // its writer writes into views_
  SubtreeAnswer& operator=(const SubtreeAnswer&) = delete;
  void top(const schema::NodeRowView* root) override;
  void child(std::size_t parent, const schema::NodeRowView& node) override;
  void more(std::size_t id) override;
  std::string text() const;

 private:
  struct Entry {
    std::size_t begin = 0;  // the node's view in views_; empty for a repo's top level
    std::size_t end = 0;
    std::size_t first = 0;  // its children: `children` entries from `first`
    std::size_t children = 0;
    bool more = false;
  };
  void write(std::string& out, std::size_t id) const;
  void add(const schema::NodeRowView* node);

  std::string views_;
  JsonWriter writer_{views_};
  std::vector<Entry> entries_;
};

// The same as documents, for callers that inspect them.
nlohmann::json node_view(const schema::NodeRow& row);
nlohmann::json subtree_view(const schema::SubtreeNode& tree);

}  // namespace bulleted::appview
