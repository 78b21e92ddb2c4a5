// Reader: the walk up from a node to the top (getAncestors, a move's cycle
// check), bounded in steps and bytes, and safe in parent cycles.
#include <set>

#include "schema/reader.hpp"
#include "schema/sqlite.hpp"

namespace bulleted::schema {

Result<std::vector<NodeRow>> Reader::ancestors(std::string_view did, std::string_view rkey,
                                               AncestorsEnd* end, std::size_t max_bytes) {
  auto tx = Transaction::begin(db_, Transaction::Kind::kRead);
  if (!tx) return pass(tx);
  auto start = visible_node(did, rkey);
  if (!start) return pass(start);
  std::vector<NodeRow> chain;
  std::set<std::string> seen{std::string(rkey)};
  std::optional<std::string> next = start->parent_rkey;
  AncestorsEnd how = AncestorsEnd::kTop;
  std::size_t used = 0;
  while (next) {
    if (chain.size() >= kMaxAncestors) {
      how = AncestorsEnd::kDepthLimit;
      break;
    }
    if (!seen.insert(*next).second) {
      how = AncestorsEnd::kCycle;
      break;
    }
    auto parent = find_node(did, *next);
    if (!parent) return pass(parent);
    if (!*parent) {  // dangling: the parent has not arrived
      how = AncestorsEnd::kMissingParent;
      break;
    }
    const std::size_t cost = view_bytes((*parent)->view());
    if (!chain.empty() && used + cost > max_bytes) {
      how = AncestorsEnd::kByteLimit;
      break;
    }
    used += cost;
    next = (*parent)->parent_rkey;
    chain.push_back(std::move(**parent));
  }
  if (end != nullptr) *end = how;
  return std::vector<NodeRow>(std::make_move_iterator(chain.rbegin()),
                              std::make_move_iterator(chain.rend()));
}

}  // namespace bulleted::schema
