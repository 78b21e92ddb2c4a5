#include "appview/outline/from_index.hpp"

#include <set>

namespace bulleted::appview::outline {

namespace {

OutlineNode outline_node(const schema::NodeRow& row, std::ptrdiff_t parent) {
  OutlineNode node;
  node.parent = parent;
  node.text = row.text;
  node.note = row.note;
  node.completed = row.completed;
  if (row.facets) {
    auto facets = nlohmann::json::parse(*row.facets, nullptr, false);
    if (facets.is_array()) node.facets = std::move(facets);
  }
  return node;
}

}  // namespace

Result<void> walk_outline(schema::Store& store, const std::string& did,
                          const std::optional<std::string>& root,
                          const std::function<bool(const OutlineNode&, std::size_t)>& visit) {
  // One frame per open level: its group, a page of the siblings still to
  // visit and where the next page starts. Memory is the depth times a page.
  constexpr int kPage = 16;
  struct Frame {
    std::optional<std::string> parent;  // nullopt: the top level
    std::size_t depth;
    std::vector<schema::NodeRow> page;
    std::size_t next = 0;
    std::optional<std::string> cursor;
    bool exhausted = false;
  };
  std::vector<Frame> stack;
  std::set<std::string> seen;  // a parent cycle reaches a node twice
  if (root) {
    auto row = store.read().node(did, *root);
    if (!row) return std::unexpected(row.error());
    seen.insert(*root);
    if (!visit(outline_node(*row, -1), 0)) return {};
    if (row->child_count > 0) stack.push_back(Frame{*root, 1, {}, 0, std::nullopt, false});
  } else {
    stack.push_back(Frame{std::nullopt, 0, {}, 0, std::nullopt, false});
  }
  while (!stack.empty()) {
    Frame& frame = stack.back();
    if (frame.next == frame.page.size()) {
      if (frame.exhausted) {
        stack.pop_back();
        continue;
      }
      auto page = store.read().children(
          {.did = did, .parent_rkey = frame.parent, .limit = kPage, .cursor = frame.cursor});
      if (!page) return std::unexpected(page.error());
      frame.page = std::move(page->nodes);
      frame.next = 0;
      frame.cursor = page->cursor;
      frame.exhausted = !page->cursor;
      continue;
    }
    const schema::NodeRow& row = frame.page[frame.next++];
    if (!seen.insert(row.rkey).second) continue;
    // A mirror is a reference to a bullet, not one: OPML and text have no
    // form for it, and its original is exported where it is.
    if (row.mirror_of) continue;
    const std::size_t depth = frame.depth;
    if (!visit(outline_node(row, -1), depth)) return {};
    if (row.child_count > 0) {
      std::string rkey = row.rkey;  // `frame` may move when the stack grows
      stack.push_back(Frame{std::move(rkey), depth + 1, {}, 0, std::nullopt, false});
    }
  }
  return {};
}

Result<Outline> read_outline(schema::Store& store, const std::string& did,
                             const std::optional<std::string>& root, std::size_t max_nodes) {
  Outline out;
  std::vector<std::ptrdiff_t> last_at_depth;  // the last node written at each depth
  bool too_many = false;
  auto walked = walk_outline(store, did, root, [&](const OutlineNode& node, std::size_t depth) {
    if (out.nodes.size() >= max_nodes) {
      too_many = true;
      return false;
    }
    OutlineNode copy = node;
    copy.parent = depth == 0 ? -1 : last_at_depth[depth - 1];
    last_at_depth.resize(depth);
    last_at_depth.push_back(static_cast<std::ptrdiff_t>(out.nodes.size()));
    out.nodes.push_back(std::move(copy));
    return true;
  });
  if (!walked) return std::unexpected(walked.error());
  if (too_many) {
    return fail(ErrorCode::kPayloadTooLarge,
                "the outline has more than " + std::to_string(max_nodes) + " nodes");
  }
  return out;
}

}  // namespace bulleted::appview::outline
