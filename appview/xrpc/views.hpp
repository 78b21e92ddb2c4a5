// The JSON shapes the API answers with (NodeView and friends), written
// straight from index rows into the answer's text (json_writer.hpp): no
// document tree for pages, windows, subtrees or changes.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string_view>

#include "appview/xrpc/json_writer.hpp"
#include "schema/store.hpp"

namespace bulleted::appview {

// {uri, rkey, cid, parent?, sortKey, sortKeyValid, text, note?, completed,
//  createdAt, childCount, unattached?, facets?}
void write_node_view(JsonWriter& json, const schema::NodeRowView& row);
void write_node_view(JsonWriter& json, const schema::NodeRow& row);
// One row of app.bulleted.getOutline (the published #node): the record's
// fields as stored, its AT-URI, DID and child count.
void write_outline_row(JsonWriter& json, const schema::NodeRowView& row);
// A change (app.bulleted.defs#change) as getChanges and change streams give
// it, appended to `out`.
void write_change(std::string& out, const schema::Change& change);
// {node?, children: [...], more}
void write_subtree_view(JsonWriter& json, const schema::SubtreeNode& tree);

// A getSubtree answer written as Store::subtree reads it: each node's view
// straight from the read into one buffer (no row copies), and the tree
// around them written, depth first, as far as the nodes read so far allow
// (settled()): breadth first, that is from the last level's first group on.
// The same text as write_subtree_view of the same tree.
class SubtreeAnswer final : public schema::SubtreeSink {
 public:
  using Flush = std::function<void(std::string_view)>;
  // Keeps the whole answer for text().
  SubtreeAnswer() = default;
  // Hands the answer over as it is written (the last piece at finish()),
  // so that sending can begin while the rest is read: a first piece of at
  // least `piece` bytes, each next one at least twice the last, up to 256
  // KiB (each piece handed over costs the sender a wake-up).
  explicit SubtreeAnswer(Flush flush, std::size_t piece = 32 * 1024)
      : flush_(std::move(flush)), piece_(piece) {}
  SubtreeAnswer(const SubtreeAnswer&) = delete;  // its writer writes into views_
  SubtreeAnswer& operator=(const SubtreeAnswer&) = delete;
  void top(const schema::NodeRowView* root) override;
  void child(std::size_t parent, const schema::NodeRowView& node) override;
  void more(std::size_t id) override;
  void settled(std::size_t id) override;
  // After a read that succeeded: hands over what is left.
  void finish();
  // The answer (without a Flush; with one, what is not yet handed over).
  const std::string& text() const { return out_; }

 private:
  struct Entry {
    std::size_t begin = 0;  // the node's view in views_; empty for a repo's top level
    std::size_t end = 0;
    std::size_t first = 0;  // its children: `children` entries from `first`
    std::size_t children = 0;
    bool more = false;
    bool settled = false;
  };
  struct Open {
    std::size_t id;
    std::size_t written = 0;  // of its children
  };
  void add(const schema::NodeRowView* node);
  void enter(std::size_t id);
  void advance();

  std::string views_;
  JsonWriter writer_{views_};
  std::vector<Entry> entries_;
  std::vector<Open> open_;  // the nodes being written, outermost first
  std::string out_;
  static constexpr std::size_t kLargestPiece = 256 * 1024;
  Flush flush_;
  std::size_t piece_ = 0;  // the least size of the next piece
};

// The same as documents, for callers that inspect them.
nlohmann::json node_view(const schema::NodeRow& row);
nlohmann::json subtree_view(const schema::SubtreeNode& tree);

}  // namespace bulleted::appview
