// Reader: search (DESIGN.md section 10) and tags. Work is counted in rows
// (index rows, nodes read, steps up to ancestors) against the request's
// budget, never in time; a page that runs out of it ends early with a
// cursor. Four ways through a repo, each with its cursor (the run is in
// search_run.cpp and search_walks.cpp):
//   complete  the index found few enough candidates (an eighth of the
//             budget for relevance, half for the other sorts): every one
//             is read, filtered and sorted in the requested order
//             (c|offset); in outline order, many candidates are first
//             looked for by walking the children index in reading order,
//             which gives the same page when they are dense;
//   windows   relevance over more than that: the index's candidates newest
//             row first, an eighth of the budget at a time, each window
//             sorted by score (w|upper rowid|offset); or, for a dense
//             prefix of many tokens (below), the repo's nodes by change,
//             each held against the query (v|upper change|offset);
//   recent    the repo's nodes by change sequence, newest first, each held
//             against the whole query in the app view (t|change_seq);
//   outline   the outline in reading order, depth first, then the nodes
//             with no reading position by rkey (o|phase|rowid|step).
// Where a page continues never depends on other repos: the index's tokens
// carry the repo's code, the walks read the repo's rows only. Before any
// way, a word's prefix is named as the few tokens it starts (search_terms:
// at most 64 seeks a search, each a lookup in the index's segments, not a
// row), which FTS5 reads lazily where its prefix query merges first. A
// prefix that starts too many tokens to name keeps that merge; its search
// first holds the query against the repo's newest nodes, and when they
// match densely takes the long way without asking the index (walk_first:
// search_run.hpp).
#include <algorithm>

#include "schema/reader.hpp"
#include "schema/search_index.hpp"
#include "schema/search_run.hpp"

namespace bulleted::schema {

std::string_view to_string(SearchSort sort) {
  switch (sort) {
    case SearchSort::kRelevance:
      return "relevance";
    case SearchSort::kOutline:
      return "outline";
    case SearchSort::kRecent:
      return "recent";
  }
  return "relevance";
}

std::optional<SearchSort> parse_search_sort(std::string_view text) {
  for (const auto sort : {SearchSort::kRelevance, SearchSort::kOutline, SearchSort::kRecent}) {
    if (text == to_string(sort)) return sort;
  }
  return std::nullopt;
}

Result<SearchPage> Reader::search(const SearchRequest& request) {
  auto tx = Transaction::begin(db_, Transaction::Kind::kRead);
  if (!tx) return pass(tx);
  SearchPage page;
  if (request.root_rkey) {
    auto root = visible_node(request.did, *request.root_rkey);
    if (!root) return pass(root);
  } else {
    auto visible = repo_visible(request.did);
    if (!visible) return pass(visible);
    if (!*visible) return page;
  }
  auto code = find_repo_code(db_, request.did);
  if (!code) return pass(code);
  std::vector<search::Hit> hits;
  search::SearchRun run(db_, request, code->value_or(""));
  if (auto r = run.run(hits, page); !r) return pass(r);
  page.rows_examined = run.examined();
  for (auto& hit : hits) {
    auto node = find_node(request.did, hit.node.rkey);
    if (!node) return pass(node);
    if (!*node) continue;
    page.results.push_back(SearchResult{std::move(**node), std::move(hit.ancestors), hit.truncated,
                                        std::move(hit.ranges)});
  }
  return page;
}

Result<std::vector<TagCount>> Reader::tags(std::string_view did, std::string_view prefix,
                                           int limit) {
  auto tx = Transaction::begin(db_, Transaction::Kind::kRead);
  if (!tx) return pass(tx);
  std::vector<TagCount> out;
  auto visible = repo_visible(did);
  if (!visible) return pass(visible);
  if (!*visible) return out;
  if (prefix.empty()) {
    auto stmt =
        db_.prepare("SELECT tag, n FROM search_tags WHERE did = ?1 ORDER BY n DESC, tag LIMIT ?2");
    if (!stmt) return pass(stmt);
    (*stmt)->bind(1, did).bind(2, limit);
    while (true) {
      auto row = (*stmt)->step();
      if (!row) return pass(row);
      if (!*row) break;
      out.push_back({(*stmt)->text(0), (*stmt)->integer(1)});
    }
    return out;
  }
  // The tags starting with the prefix, the most used first: when at most
  // kTagsScanned start with it, all of them (in tag order) sorted here;
  // when more do (a broad prefix), the repo's tags in the order of their
  // use, those starting with it kept, at most kTagsWalked read (the first
  // found are the most used: a page cut short there is still right).
  constexpr int kTagsScanned = 10'000;
  constexpr int kTagsWalked = 200'000;
  const std::string low = fold_tag(prefix);
  auto stmt = db_.prepare(
      "SELECT tag, n FROM search_tags WHERE did = ?1 AND tag >= ?2 AND tag < ?2 || x'FF'"
      " LIMIT ?3");
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, did).bind(2, low).bind(3, kTagsScanned + 1);
  while (true) {
    auto row = (*stmt)->step();
    if (!row) return pass(row);
    if (!*row) break;
    out.push_back({(*stmt)->text(0), (*stmt)->integer(1)});
  }
  if (out.size() > static_cast<std::size_t>(kTagsScanned)) {
    out.clear();
    auto used = db_.prepare(
        "SELECT tag, n FROM search_tags INDEXED BY search_tags_used WHERE did = ?1"
        " ORDER BY n DESC, tag LIMIT ?2");
    if (!used) return pass(used);
    (*used)->bind(1, did).bind(2, kTagsWalked);
    while (out.size() < static_cast<std::size_t>(limit)) {
      auto row = (*used)->step();
      if (!row) return pass(row);
      if (!*row) break;
      if ((*used)->text_view(0).starts_with(low)) {
        out.push_back({(*used)->text(0), (*used)->integer(1)});
      }
    }
    return out;
  }
  std::sort(out.begin(), out.end(), [](const TagCount& a, const TagCount& b) {
    return a.count != b.count ? a.count > b.count : a.tag < b.tag;
  });
  if (out.size() > static_cast<std::size_t>(limit)) out.resize(static_cast<std::size_t>(limit));
  return out;
}

}  // namespace bulleted::schema
