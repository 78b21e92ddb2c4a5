// Reader: getOutline's walk, pre-order with one bound across all levels.
// Each sibling group is read a few rows at a time (never more than the rows
// still allowed, and one to tell there are more), so a walk reads at most a
// few rows beyond the ones it gives, however wide the groups under it are.
#include <algorithm>

#include "schema/reader.hpp"
#include "schema/sqlite.hpp"

namespace bulleted::schema {
namespace {

constexpr int kChunkRows = 16;

}  // namespace

Result<OutlinePage> Reader::outline(const OutlineQuery& query) {
  auto tx = Transaction::begin(db_, Transaction::Kind::kRead);
  if (!tx) return pass(tx);
  // Known and shown: a repo row that is active, or (a repo the index holds
  // only nodes of) a node.
  auto status = query_value<std::string>(db_, "SELECT status FROM repos WHERE did = ?1", query.did);
  if (!status) return pass(status);
  if (*status && **status != "active") return fail(ErrorCode::kNotFound, "no such outline");
  if (!*status) {
    auto any =
        query_value<std::int64_t>(db_, "SELECT 1 FROM nodes WHERE did = ?1 LIMIT 1", query.did);
    if (!any) return pass(any);
    if (!*any) return fail(ErrorCode::kNotFound, "no such outline");
  }
  OutlinePage page;
  auto handle = query_value<std::string>(db_, "SELECT handle FROM repos WHERE did = ?1", query.did);
  if (!handle) return pass(handle);
  page.handle = std::move(*handle);
  std::string top = root_group(query.did);
  if (query.root_rkey) {
    auto root = find_node(query.did, *query.root_rkey);
    if (!root) return pass(root);
    if (!*root) return fail(ErrorCode::kNotFound, "no such bullet");
    top = children_group(query.did, *query.root_rkey);
    page.root = std::move(**root);
  }
  // The outline record in effect: at the zoomed bullet or its nearest
  // ancestor (walked only when the repo has records of subtrees), else self.
  std::vector<std::string> levels;
  if (query.root_rkey) {
    auto any = query_value<std::int64_t>(
        db_, "SELECT 1 FROM outlines WHERE did = ?1 AND root_rkey IS NOT NULL LIMIT 1", query.did);
    if (!any) return pass(any);
    if (*any) {
      levels.push_back(*query.root_rkey);
      auto chain = ancestors(query.did, *query.root_rkey);
      if (!chain) return pass(chain);
      for (auto it = chain->rbegin(); it != chain->rend(); ++it) levels.push_back(it->rkey);
    }
  }
  auto in_effect = [&](const char* sql, std::string_view key) -> Result<bool> {
    auto stmt = db_.prepare(sql);
    if (!stmt) return pass(stmt);
    (*stmt)->bind(1, query.did).bind(2, key);
    auto row = (*stmt)->step();
    if (!row) return pass(row);
    if (!*row) return false;
    const std::string rkey = (*stmt)->text(0);
    auto record = parse_outline_record(nlohmann::json::parse((*stmt)->text(1), nullptr, false),
                                       query.did, rkey);
    if (!record) return false;  // kept by an earlier rule, not one now
    page.outline_rkey = rkey;
    page.outline = std::move(*record);
    return true;
  };
  for (const auto& level : levels) {
    auto found = in_effect(
        "SELECT rkey, record FROM outlines WHERE did = ?1 AND root_rkey = ?2 ORDER BY rkey LIMIT 1",
        level);
    if (!found) return pass(found);
    if (*found) break;
  }
  if (!page.outline) {
    auto found =
        in_effect("SELECT rkey, record FROM outlines WHERE did = ?1 AND rkey = ?2", kOutlineSelf);
    if (!found) return pass(found);
  }
  // One frame a level: the rows of its group read so far, the next to give,
  // and where the group's next rows start.
  struct Frame {
    std::string group;
    int level = 1;
    std::vector<OutlineRow> rows;
    std::vector<std::size_t> costs;
    std::size_t next = 0;
    std::optional<std::pair<std::string, std::string>> after;
    bool more = true;
  };
  const auto limit = static_cast<std::size_t>(std::max(1, query.limit));
  std::size_t bytes = 0;
  auto fill = [&](Frame& frame) -> Result<void> {
    frame.rows.clear();
    frame.costs.clear();
    frame.next = 0;
    const int want =
        static_cast<int>(std::min<std::size_t>(limit - page.nodes.size() + 1, kChunkRows));
    auto read = visit_group_page(
        query.did, frame.group, want, frame.after, false, [&](const NodeRowView& row) {
          OutlineRow& kept = frame.rows.emplace_back();
          kept.rkey = row.rkey;
          kept.child_count = row.child_count;
          if (query.render) {
            query.render(row, kept.rendered);
            frame.costs.push_back(kept.rendered.size());
          } else {
            frame.costs.push_back(view_bytes(row));
          }
          frame.after = std::pair{std::string(row.sort_key), std::string(row.rkey)};
        });
    if (!read) return read;
    frame.more = static_cast<int>(frame.rows.size()) == want;
    return {};
  };
  std::vector<Frame> stack;
  stack.push_back(Frame{top});
  if (auto r = fill(stack.back()); !r) return pass(r);
  while (!stack.empty()) {
    Frame& frame = stack.back();
    if (frame.next == frame.rows.size()) {
      if (frame.more && !frame.rows.empty()) {
        if (auto r = fill(frame); !r) return pass(r);
        continue;
      }
      stack.pop_back();
      continue;
    }
    const std::size_t cost = frame.costs[frame.next];
    if (page.nodes.size() == limit || (!page.nodes.empty() && bytes + cost > query.max_bytes)) {
      page.stop = OutlineStop::kLimit;
      break;
    }
    OutlineRow& row = frame.rows[frame.next++];
    bytes += cost;
    const int level = frame.level;
    const bool children = row.child_count > 0;
    std::string group = children ? children_group(query.did, row.rkey) : std::string();
    page.nodes.push_back(std::move(row));
    if (!children) continue;
    if (level >= query.depth) {
      page.stop = OutlineStop::kDepth;
      continue;
    }
    stack.push_back(Frame{std::move(group), level + 1});
    if (auto r = fill(stack.back()); !r) return pass(r);
  }
  return page;
}

}  // namespace bulleted::schema
