// Reader: the changes of a repo since a cursor (getChanges), newest last,
// and the cursor of its newest change. Live changes (the page following
// edits made elsewhere) read from here.
#include <charconv>

#include "schema/base64.hpp"
#include "schema/reader.hpp"
#include "schema/sqlite.hpp"

namespace bulleted::schema {

Result<std::string> Reader::latest_change_cursor(std::string_view did) {
  auto stmt = db_.prepare(
      "SELECT max(coalesce((SELECT max(change_seq) FROM nodes WHERE did = ?1), 0),"
      " coalesce((SELECT max(change_seq) FROM tombstones WHERE did = ?1), 0))");
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, did);
  auto row = (*stmt)->step();
  if (!row) return pass(row);
  return std::to_string(*row ? (*stmt)->integer(0) : 0);
}

Result<std::int64_t> Reader::change_sequence() {
  auto value =
      query_value<std::int64_t>(db_, "SELECT value FROM counters WHERE name = 'change_seq'");
  if (!value) return std::unexpected(value.error());
  return value->value_or(0);
}

Result<ChangesPage> Reader::changes(std::string_view did, std::optional<std::string_view> cursor,
                                    int limit, std::size_t max_bytes) {
  if (limit < 1 || limit > 1000)
    return fail(ErrorCode::kInvalidRequest, "limit must be from 1 to 1000");
  std::int64_t since = 0;
  if (cursor) {
    auto [end, ec] = std::from_chars(cursor->data(), cursor->data() + cursor->size(), since);
    if (ec != std::errc() || end != cursor->data() + cursor->size() || since < 0) {
      return fail(ErrorCode::kInvalidRequest, "malformed cursor");
    }
  }
  auto tx = Transaction::begin(db_, Transaction::Kind::kRead);
  if (!tx) return pass(tx);
  auto sequence = change_sequence();
  if (!sequence) return pass(sequence);
  if (since > *sequence) {
    return fail(ErrorCode::kFutureCursor, "the cursor " + std::to_string(since) +
                                              " is beyond the index's changes (" +
                                              std::to_string(*sequence) + ")");
  }
  ChangesPage page;
  page.cursor = std::to_string(since);
  auto visible = repo_visible(did);
  if (!visible) return pass(visible);
  if (!*visible) return page;
  auto stmt = db_.prepare(
      "SELECT 0, rkey, change_seq FROM nodes WHERE did = ?1 AND change_seq > ?2"
      " UNION ALL SELECT 1, rkey, change_seq FROM tombstones WHERE did = ?1 AND change_seq > ?2"
      " ORDER BY 3 LIMIT ?3");
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, did).bind(2, since).bind(3, limit);
  while (true) {
    auto row = (*stmt)->step();
    if (!row) return pass(row);
    if (!*row) break;
    page.changes.push_back(
        Change{(*stmt)->integer(0) != 0, (*stmt)->text(1), std::nullopt, (*stmt)->integer(2)});
  }
  page.more = limit > 0 && page.changes.size() >= static_cast<std::size_t>(limit);
  // A delete costs its record key; an upsert its node's view.
  std::size_t used = 0;
  for (std::size_t i = 0; i < page.changes.size(); ++i) {
    Change& change = page.changes[i];
    std::size_t cost = 64 + change.rkey.size();
    if (!change.deleted) {
      auto found = find_node(did, change.rkey);
      if (!found) return pass(found);
      change.node = std::move(*found);
      if (change.node) cost += view_bytes(change.node->view());
    }
    if (i > 0 && used + cost > max_bytes) {
      page.changes.resize(i);
      page.more = true;
      break;
    }
    used += cost;
  }
  if (!page.changes.empty()) page.cursor = std::to_string(page.changes.back().seq);
  return page;
}

}  // namespace bulleted::schema
