// Reader: nodes, pages, windows, positions and subtrees (ancestors, changes
// and sibling keys in reader_*.cpp). Each public read runs in one read
// transaction.
#include "schema/reader.hpp"

#include <charconv>
#include <deque>
#include <filesystem>
#include <set>

#include "schema/base64.hpp"
#include "schema/positions.hpp"
#include "schema/sqlite.hpp"
#include "schema/syntax.hpp"

namespace bulleted::schema {
namespace {

// Columns of a NodeRow after its repo and group, in the order field_views
// expects. The child count is the one kept in group_counts, joined on the
// node's own children group (one key lookup; no row: no children). Rows of
// one page share their repo and group, so pages do not read them again, and
// pages bind the children groups' common prefix as ?5 (one concatenation a
// row, not three; the join rather than a subquery a row: a quarter less of
// the statement's time over a 2,000-node subtree). Pages, windows and
// subtrees never read the record itself (SQLite copies every text column a
// row returns, and the record is the largest): its served facets and its
// length are kept beside it. A single node's read adds the record.
#define NODE_FIELDS                                                                \
  "n.rkey, n.cid, n.rev, n.sort_key, n.sort_key_raw, n.text, n.note, n.completed," \
  " n.created_at, n.change_seq, coalesce(c.n, 0), n.facets, n.record_bytes,"       \
  " n.completed_at, n.layout, n.display, n.mirror_of"
#define NODE_COLUMNS "n.did, n.grp, " NODE_FIELDS ", n.record"
#define PAGE_FROM " FROM nodes n LEFT JOIN group_counts c ON c.grp = ?5 || n.rkey"

// The children page: a range scan of nodes_children, keyset-paginated.
constexpr const char* kChildrenFirst = "SELECT " NODE_FIELDS PAGE_FROM
                                       " WHERE n.grp = ?1"
                                       " ORDER BY n.sort_key, n.rkey LIMIT ?4";
constexpr const char* kChildrenAfter = "SELECT " NODE_FIELDS PAGE_FROM
                                       " WHERE n.grp = ?1 AND (n.sort_key, n.rkey) > (?2, ?3)"
                                       " ORDER BY n.sort_key, n.rkey LIMIT ?4";
constexpr const char* kChildrenFirstReverse = "SELECT " NODE_FIELDS PAGE_FROM
                                              " WHERE n.grp = ?1"
                                              " ORDER BY n.sort_key DESC, n.rkey DESC LIMIT ?4";
constexpr const char* kChildrenBefore = "SELECT " NODE_FIELDS PAGE_FROM
                                        " WHERE n.grp = ?1 AND (n.sort_key, n.rkey) < (?2, ?3)"
                                        " ORDER BY n.sort_key DESC, n.rkey DESC LIMIT ?4";
constexpr const char* kNodeByKey = "SELECT " NODE_COLUMNS
                                   " FROM nodes n LEFT JOIN group_counts c"
                                   " ON c.grp = 'at://' || ?1 || '/app.bulleted.node/' || n.rkey"
                                   " WHERE n.did = ?1 AND n.rkey = ?2";

// Where a group files its nodes: "at://<did>/app.bulleted.node/<rkey>" names
// the parent, "at://<did>" is the top level, anything else is unattached.
void file_under(NodeRow& row) {
  std::string_view rest(row.group);
  const bool own = rest.starts_with("at://") && rest.substr(5).starts_with(row.did);
  if (own) rest.remove_prefix(5 + row.did.size());
  if (own && rest.empty()) return;
  if (own && rest.size() > kNodeCollection.size() + 2 && rest[0] == '/' &&
      rest.substr(1, kNodeCollection.size()) == kNodeCollection &&
      rest[1 + kNodeCollection.size()] == '/') {
    row.parent_rkey = std::string(rest.substr(kNodeCollection.size() + 2));
  } else {
    row.unattached = true;
  }
}

// NODE_FIELDS from column `at` on, as views into the statement's row.
NodeRowView field_views(const Statement& stmt, int at) {
  auto optional_view = [&](int column) {
    return stmt.is_null(column) ? std::nullopt
                                : std::optional<std::string_view>(stmt.text_view(column));
  };
  NodeRowView fields;
  fields.rkey = stmt.text_view(at);
  fields.cid = stmt.text_view(at + 1);
  fields.rev = stmt.text_view(at + 2);
  fields.sort_key = stmt.text_view(at + 3);
  fields.sort_key_raw = optional_view(at + 4);
  fields.sort_key_valid = fields.sort_key != kInvalidSortKey;
  fields.text = stmt.text_view(at + 5);
  fields.note = optional_view(at + 6);
  fields.completed = stmt.integer(at + 7) != 0;
  fields.created_at = stmt.text_view(at + 8);
  fields.change_seq = stmt.integer(at + 9);
  fields.child_count = stmt.integer(at + 10);
  fields.facets = optional_view(at + 11);
  fields.record_bytes = static_cast<std::size_t>(stmt.integer(at + 12));
  fields.completed_at = optional_view(at + 13);
  fields.layout = optional_view(at + 14);
  fields.display = optional_view(at + 15);
  fields.mirror_of = optional_view(at + 16);
  // A mirror stands for its original and is never expanded: no children of
  // its own (walks do not descend into what names it as a parent).
  if (fields.mirror_of) fields.child_count = 0;
  return fields;
}

// A row of NODE_COLUMNS: the node with its whole record.
NodeRow read_row(const Statement& stmt) {
  NodeRowView fields = field_views(stmt, 2);
  fields.did = stmt.text_view(0);
  fields.group = stmt.text_view(1);
  fields.record_json = stmt.text_view(19);
  NodeRow row = NodeRow::from(fields);
  file_under(row);
  return row;
}

// The rows of a page of `group` (of repo `did`), each to `visit`.
Result<void> visit_page(Statement& stmt, std::string_view did, std::string_view group,
                        const Reader::RowVisitor& visit) {
  NodeRow shared;
  shared.did = did;
  shared.group = group;
  file_under(shared);
  const NodeRowView filed = shared.view();
  while (true) {
    auto more = stmt.step();
    if (!more) return pass(more);
    if (!*more) return {};
    NodeRowView fields = field_views(stmt, 0);
    fields.did = filed.did;
    fields.group = filed.group;
    fields.parent_rkey = filed.parent_rkey;
    fields.unattached = filed.unattached;
    visit(fields);
  }
}

// Whether repo `did` holds node `rkey`: one lookup in the (did, rkey)
// index, no row read.
Result<bool> holds_node(Database& db, std::string_view did, std::string_view rkey) {
  auto found =
      query_value<std::int64_t>(db, "SELECT 1 FROM nodes WHERE did = ?1 AND rkey = ?2", did, rkey);
  if (!found) return pass(found);
  return found->has_value();
}

Error not_found(std::string_view did, std::string_view rkey) {
  return Error{ErrorCode::kNotFound,
               "no node " + std::string(rkey) + " in repo " + std::string(did)};
}

}  // namespace

Result<bool> Reader::repo_visible(std::string_view did) {
  auto status = query_value<std::string>(db_, "SELECT status FROM repos WHERE did = ?1", did);
  if (!status) return std::unexpected(status.error());
  return !*status || **status == "active";
}

Result<std::optional<NodeRow>> Reader::find_node(std::string_view did, std::string_view rkey) {
  auto stmt = db_.prepare(kNodeByKey);
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, did).bind(2, rkey);
  auto row = (*stmt)->step();
  if (!row) return pass(row);
  if (!*row) return std::optional<NodeRow>();
  return std::optional<NodeRow>(read_row(**stmt));
}

Result<void> Reader::visit_group_page(
    std::string_view did, std::string_view group, int limit,
    const std::optional<std::pair<std::string, std::string>>& after, bool reverse,
    const RowVisitor& visit) {
  const char* sql = reverse ? (after ? kChildrenBefore : kChildrenFirstReverse)
                            : (after ? kChildrenAfter : kChildrenFirst);
  auto stmt = db_.prepare(sql);
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, group).bind(4, limit).bind(5, children_group(did, ""));
  if (after) (*stmt)->bind(2, after->first).bind(3, after->second);
  return visit_page(**stmt, did, group, visit);
}

Result<std::vector<NodeRow>> Reader::group_page(
    std::string_view did, std::string_view group, int limit,
    const std::optional<std::pair<std::string, std::string>>& after, bool reverse) {
  std::vector<NodeRow> rows;
  rows.reserve(static_cast<std::size_t>(std::max(limit, 0)));
  auto read = visit_group_page(did, group, limit, after, reverse,
                               [&](const NodeRowView& row) { rows.push_back(NodeRow::from(row)); });
  if (!read) return pass(read);
  return rows;
}

Result<NodeRow> Reader::visible_node(std::string_view did, std::string_view rkey) {
  auto visible = repo_visible(did);
  if (!visible) return pass(visible);
  auto found = *visible ? find_node(did, rkey) : Result<std::optional<NodeRow>>();
  if (!found) return pass(found);
  if (!*found) return std::unexpected(not_found(did, rkey));
  return std::move(**found);
}

Result<NodeRow> Reader::node(std::string_view did, std::string_view rkey) {
  auto tx = Transaction::begin(db_, Transaction::Kind::kRead);
  if (!tx) return pass(tx);
  auto found = visible_node(did, rkey);
  if (!found) return pass(found);
  return std::move(*found);
}

Result<ChildrenPage> Reader::children(const ChildrenQuery& query) {
  ChildrenPage page;
  auto cursor =
      children(query, [&](const NodeRowView& row) { page.nodes.push_back(NodeRow::from(row)); });
  if (!cursor) return pass(cursor);
  page.cursor = std::move(*cursor);
  return page;
}

Result<std::optional<std::string>> Reader::children(const ChildrenQuery& query,
                                                    const RowVisitor& visit) {
  if (query.limit < 1 || query.limit > 1000) {
    return fail(ErrorCode::kInvalidRequest, "limit must be from 1 to 1000");
  }
  std::optional<std::pair<std::string, std::string>> after;
  if (query.cursor) {
    after = decode_page_cursor(*query.cursor);
    if (!after) return fail(ErrorCode::kInvalidRequest, "malformed cursor");
  }
  auto tx = Transaction::begin(db_, Transaction::Kind::kRead);
  if (!tx) return pass(tx);
  auto visible = repo_visible(query.did);
  if (!visible) return pass(visible);
  if (!*visible) return std::optional<std::string>();
  std::string group = root_group(query.did);
  if (query.parent_rkey) {
    auto parent = holds_node(db_, query.did, *query.parent_rkey);
    if (!parent) return pass(parent);
    if (!*parent) return std::unexpected(not_found(query.did, *query.parent_rkey));
    group = children_group(query.did, *query.parent_rkey);
  }
  // One row past the page says whether another follows; the cursor is the
  // key of the page's last row. A page full in bytes ends early, with a
  // cursor.
  int seen = 0;
  int given = 0;
  std::size_t used = 0;
  bool full = false;
  std::string last_key, last_rkey;
  auto read = visit_group_page(query.did, group, query.limit + 1, after, query.reverse,
                               [&](const NodeRowView& row) {
                                 if (++seen > query.limit || full) return;
                                 const std::size_t cost = view_bytes(row);
                                 if (given > 0 && used + cost > query.max_bytes) {
                                   full = true;
                                   return;
                                 }
                                 used += cost;
                                 ++given;
                                 last_key = row.sort_key;
                                 last_rkey = row.rkey;
                                 visit(row);
                               });
  if (!read) return pass(read);
  if (seen <= query.limit && !full) return std::optional<std::string>();
  return std::optional<std::string>(encode_page_cursor(last_key, last_rkey));
}

Result<Window> Reader::window(std::string_view did, std::string_view anchor_rkey, int before,
                              int after, std::size_t max_bytes) {
  if (before < 0 || after < 0 || before > 1000 || after > 1000) {
    return fail(ErrorCode::kInvalidRequest, "before and after must be from 0 to 1000");
  }
  auto tx = Transaction::begin(db_, Transaction::Kind::kRead);
  if (!tx) return pass(tx);
  auto anchor = visible_node(did, anchor_rkey);
  if (!anchor) return pass(anchor);
  const auto position = std::make_pair(anchor->sort_key, anchor->rkey);
  // Each side is read as far as its count and half the bytes left allow:
  // one row past either says there is more.
  const std::size_t anchor_bytes = view_bytes(anchor->view());
  const std::size_t side_bytes =
      max_bytes > anchor_bytes ? (max_bytes - anchor_bytes) / 2 : std::size_t{0};
  auto side = [&](int count, bool reverse, bool& more) -> Result<std::vector<NodeRow>> {
    std::vector<NodeRow> rows;
    std::size_t used = 0;
    auto read = visit_group_page(
        did, anchor->group, count + 1, position, reverse, [&](const NodeRowView& row) {
          if (more) return;
          const std::size_t cost = view_bytes(row);
          if (static_cast<int>(rows.size()) == count || used + cost > side_bytes) {
            more = true;
            return;
          }
          used += cost;
          rows.push_back(NodeRow::from(row));
        });
    if (!read) return pass(read);
    return rows;
  };
  Window window;
  auto lower = side(before, true, window.has_before);
  if (!lower) return pass(lower);
  auto upper = side(after, false, window.has_after);
  if (!upper) return pass(upper);
  window.nodes.assign(std::make_move_iterator(lower->rbegin()),
                      std::make_move_iterator(lower->rend()));
  window.nodes.push_back(std::move(*anchor));
  window.nodes.insert(window.nodes.end(), std::make_move_iterator(upper->begin()),
                      std::make_move_iterator(upper->end()));
  return window;
}

Result<Position> Reader::position(std::string_view did, std::string_view rkey) {
  auto tx = Transaction::begin(db_, Transaction::Kind::kRead);
  if (!tx) return pass(tx);
  auto anchor = visible_node(did, rkey);
  if (!anchor) return pass(anchor);
  auto size =
      query_value<std::int64_t>(db_, "SELECT n FROM group_counts WHERE grp = ?1", anchor->group);
  if (!size) return pass(size);
  auto index = count_before(db_, anchor->group, SiblingKey{anchor->sort_key, anchor->rkey},
                            size->value_or(0));
  if (!index) return pass(index);
  return Position{*index, size->value_or(0)};
}

Result<void> Reader::subtree(const SubtreeQuery& query, SubtreeSink& sink) {
  if (query.depth < 0 || query.depth > 64) {
    return fail(ErrorCode::kInvalidRequest, "depth must be from 0 to 64");
  }
  auto tx = Transaction::begin(db_, Transaction::Kind::kRead);
  if (!tx) return pass(tx);
  auto visible = repo_visible(query.did);
  if (!visible) return pass(visible);
  // Breadth first: every node of a level before any of the next, so a small
  // budget shows the most useful part of the tree. Only nodes with children
  // wait in the queue.
  struct Pending {
    std::size_t id;
    std::optional<std::string> rkey;  // none: the top level of the repo
    int depth;
  };
  std::deque<Pending> queue;
  std::size_t used = 0;
  if (query.root_rkey) {
    auto root =
        *visible ? find_node(query.did, *query.root_rkey) : Result<std::optional<NodeRow>>();
    if (!root) return pass(root);
    if (!*root) return std::unexpected(not_found(query.did, *query.root_rkey));
    const NodeRowView fields = (*root)->view();
    used += view_bytes(fields);
    sink.top(&fields);
    if (fields.child_count > 0) {
      queue.push_back({0, std::string(fields.rkey), 0});
    } else {
      sink.settled(0);
    }
  } else {
    sink.top(nullptr);
    if (*visible) {
      queue.push_back({0, std::nullopt, 0});
    } else {
      sink.settled(0);
    }
  }
  auto stmt = db_.prepare(kChildrenFirst);
  if (!stmt) return pass(stmt);
  const std::string prefix = children_group(query.did, "");
  constexpr int kMaxChildrenPerNode = 1000;
  std::size_t next_id = 1;
  bool out_of_budget = false;
  while (!queue.empty()) {
    const Pending pending = std::move(queue.front());
    queue.pop_front();
    if (out_of_budget || pending.depth >= query.depth) {
      sink.more(pending.id);
      sink.settled(pending.id);
      continue;
    }
    const std::string group = pending.rkey ? prefix + *pending.rkey : root_group(query.did);
    std::optional<std::string_view> parent_rkey;
    if (pending.rkey) parent_rkey = *pending.rkey;
    (*stmt)->reset();
    (*stmt)->bind(1, group).bind(4, kMaxChildrenPerNode + 1).bind(5, prefix);
    for (int rows = 0;; ++rows) {
      auto more = (*stmt)->step();
      if (!more) return pass(more);
      if (!*more) break;
      if (rows == kMaxChildrenPerNode) {
        sink.more(pending.id);
        break;
      }
      NodeRowView row = field_views(**stmt, 0);
      row.did = query.did;
      row.group = group;
      row.parent_rkey = parent_rkey;
      const std::size_t cost = view_bytes(row);
      if (used + cost > query.budget_bytes) {
        out_of_budget = true;
        sink.more(pending.id);
        break;
      }
      // A parent cycle brings the root back as a descendant: list it once.
      // No other node can come twice, as each is filed in one group only and
      // each group is read once, for its parent.
      if (query.root_rkey && row.rkey == *query.root_rkey) continue;
      used += cost;
      const std::size_t id = next_id++;
      sink.child(pending.id, row);
      if (row.child_count > 0) {
        queue.push_back({id, std::string(row.rkey), pending.depth + 1});
      } else {
        sink.settled(id);
      }
    }
    sink.settled(pending.id);
  }
  return {};
}

Result<SubtreeNode> Reader::subtree(const SubtreeQuery& query) {
  // The tree of rows: each node's children arrive together, so a node's
  // children are a run of consecutive ids.
  class Builder final : public SubtreeSink {
   public:
    void top(const NodeRowView* root) override {
      nodes_.push_back({});
      if (root != nullptr) nodes_.back().node = NodeRow::from(*root);
    }
    void child(std::size_t parent, const NodeRowView& node) override {
      if (nodes_[parent].children == 0) nodes_[parent].first = nodes_.size();
      ++nodes_[parent].children;
      nodes_.push_back({.node = NodeRow::from(node)});
    }
    void more(std::size_t id) override { nodes_[id].more = true; }
    SubtreeNode tree(std::size_t id = 0) {
      SubtreeNode out{std::move(nodes_[id].node), {}, nodes_[id].more};
      out.children.reserve(nodes_[id].children);
      for (std::size_t k = 0; k < nodes_[id].children; ++k) {
        out.children.push_back(tree(nodes_[id].first + k));
      }
      return out;
    }

   private:
    struct Entry {
      std::optional<NodeRow> node;
      std::size_t first = 0;
      std::size_t children = 0;
      bool more = false;
    };
    std::vector<Entry> nodes_;
  };
  Builder builder;
  if (auto read = subtree(query, builder); !read) return pass(read);
  return builder.tree();
}

Result<std::string> Reader::explain(std::string_view kind) {
  const char* sql = kind == "children_first"           ? kChildrenFirst
                    : kind == "children_after"         ? kChildrenAfter
                    : kind == "children_first_reverse" ? kChildrenFirstReverse
                    : kind == "children_before"        ? kChildrenBefore
                                                       : nullptr;
  if (sql == nullptr) return fail(ErrorCode::kInvalidRequest, "unknown query");
  const std::string text = std::string("EXPLAIN QUERY PLAN ") + sql;
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db_.handle(), text.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
    return std::unexpected(sqlite_error(db_.handle(), SQLITE_ERROR, "explain"));
  }
  Statement stmt(db_.handle(), raw);
  std::string plan;
  while (true) {
    auto row = stmt.step();
    if (!row) return pass(row);
    if (!*row) break;
    plan += stmt.text(3);
    plan += '\n';
  }
  return plan;
}

}  // namespace bulleted::schema
