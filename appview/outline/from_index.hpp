// Outlines read from the index, for export: a repo's nodes in document
// order with their depths, as the outline formats write them.
//
// Reads through the caller's Store (one thread's connection).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "appview/outline/outline.hpp"
#include "schema/store.hpp"

namespace bulleted::appview::outline {

// Visits a repo's outline as the index holds it (`root` and its subtree, or
// the whole top level) in pre-order with each node's depth (`root` is depth
// 0), reading pages of siblings as it goes: memory is the depth times a
// page, never the outline. Cycle-safe. `visit` returns false to stop.
Result<void> walk_outline(schema::Store& store, const std::string& did,
                          const std::optional<std::string>& root,
                          const std::function<bool(const OutlineNode&, std::size_t)>& visit);

// The same walk collected into an Outline; kPayloadTooLarge past `max_nodes`.
Result<Outline> read_outline(schema::Store& store, const std::string& did,
                             const std::optional<std::string>& root, std::size_t max_nodes);

}  // namespace bulleted::appview::outline
