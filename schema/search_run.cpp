// A search's run: the way a page takes from its cursor, candidates read
// and held against the query, the places of their ancestors (cycle-safe,
// each read once a request), a page's hits and the complete set (the long
// ways: search_walks.cpp).
#include "schema/search_run.hpp"

#include <algorithm>
#include <cstdio>

#include "schema/base64.hpp"
#include "schema/search_index.hpp"
#include "schema/syntax.hpp"

namespace bulleted::schema::search {

Candidate read_candidate(const Statement& stmt) {
  Candidate c;
  c.rowid = stmt.integer(0);
  c.rkey = stmt.text(1);
  c.group = stmt.text(2);
  c.sort_key = stmt.text(3);
  if (stmt.columns() == 4) {  // kPlacedByRowid's
    c.partial = true;
    return c;
  }
  c.text = stmt.text(4);
  c.note = stmt.optional_text(5);
  c.completed = stmt.integer(6) != 0;
  c.created_at = stmt.text(7);
  c.change_seq = stmt.integer(8);
  if (!stmt.is_null(9)) c.indexed_at = stmt.integer(9);
  return c;
}

std::string cut_text(std::string_view text, std::size_t max) {
  if (text.size() <= max) return std::string(text);
  std::size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return std::string(text.substr(0, end));
}

std::uint64_t search_digest(const SearchRequest& r) {
  std::uint64_t h = 1469598103934665603ULL;
  auto mix = [&](std::string_view part) {
    for (const char c : part) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    h = (h ^ 0xFF) * 1099511628211ULL;
  };
  mix(r.q);
  mix(to_string(r.sort));
  mix(r.root_rkey.value_or(""));
  return h;
}

std::string encode_cursor(const SearchCursor& cursor, std::uint64_t digest) {
  const std::string plain = std::string(1, cursor.kind) + "." + std::to_string(cursor.a) + "." +
                            std::to_string(cursor.b) + "." + std::to_string(cursor.c) + "." +
                            std::to_string(digest);
  return base64_encode(plain, Base64Alphabet::kUrl, false);
}

Result<SearchCursor> decode_cursor(std::string_view text, const SearchRequest& request) {
  const std::uint64_t digest = search_digest(request);
  auto refused = [] {
    return fail(ErrorCode::kInvalidRequest,
                "cursor does not continue this search (same q, sort and root only)");
  };
  if (text.size() > kMaxSearchCursorBytes) return refused();
  auto plain = base64_decode(text, Base64Alphabet::kUrl);
  if (!plain) return refused();
  SearchCursor cursor;
  unsigned long long got = 0;
  long long a = 0, b = 0, c = 0;
  char kind = 0;
  if (std::sscanf(plain->c_str(), "%c.%lld.%lld.%lld.%llu", &kind, &a, &b, &c, &got) != 5 ||
      got != digest || std::string_view("cwtosv").find(kind) == std::string_view::npos || a < 0 ||
      b < 0 || c < 0 || (kind == 's' && !request.root_rkey) ||
      (kind == 'o' && a > (request.root_rkey ? 0 : 1))) {
    return refused();
  }
  cursor.kind = kind;
  cursor.a = a;
  cursor.b = b;
  cursor.c = c;
  return cursor;
}

Result<bool> SearchRun::walk_first() {
  if (broad_.empty() || r_.root_rkey) return false;
  const std::size_t rows = std::min(kProbeRows, r_.budget_rows / 4);
  if (rows < kMinProbeRows) return false;
  auto stmt = db_.prepare(kByChange);
  if (!stmt) return pass(stmt);
  (*stmt)->bind_view(1, r_.did).bind(2, kNoRow);
  std::size_t seen = 0, matched = 0;
  while (seen < rows) {
    auto row = (*stmt)->step();
    if (!row) return pass(row);
    if (!*row) break;
    ++seen;
    counted();
    if (matcher_.matches(read_candidate(**stmt).doc(asks_created_))) ++matched;
  }
  // limit / (matched / seen) rows to fill the page, at most a sixteenth of
  // the budget.
  const std::size_t limit = static_cast<std::size_t>(r_.limit);
  return matched > 0 && limit * seen * kProbeShareOfBudget <= matched * r_.budget_rows;
}

Result<Place*> SearchRun::place(const std::string& rkey) {
  auto known = places_.find(rkey);
  if (known != places_.end()) return &known->second;
  counted();
  Place place;
  auto stmt = db_.prepare(kPlaceByKey);
  if (!stmt) return pass(stmt);
  (*stmt)->bind_view(1, r_.did).bind_view(2, rkey);
  auto row = (*stmt)->step();
  if (!row) return pass(row);
  if (*row) {
    place.missing = false;
    place.rowid = (*stmt)->integer(0);
    const std::string_view group = (*stmt)->text_view(1);
    place.top = group == top_group_;
    if (group.starts_with(child_prefix_))
      place.parent = std::string(group.substr(child_prefix_.size()));
    place.sort_key = (*stmt)->text(2);
  }
  return &places_.emplace(rkey, std::move(place)).first->second;
}

Result<std::string> SearchRun::ancestor_text(Place& place) {
  if (place.text) return *place.text;
  auto stmt = db_.prepare(kTextByRowid);
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, place.rowid);
  auto row = (*stmt)->step();
  if (!row) return pass(row);
  place.text = *row ? cut_text((*stmt)->text_view(0), kMaxAncestorTextBytes) : std::string();
  return *place.text;
}

// Walks up from `start` until a node whose standing is known, the top, a
// missing or unattached parent, or a node seen on the way (a cycle), then
// gives every node on the way its standing, from the top down. Each node
// is read once a request; a budget spent on the way leaves it unknown.
Result<Standing> SearchRun::standing(const std::string& start) {
  std::vector<std::string> way;
  std::unordered_map<std::string, std::size_t> on_way;
  // What a child of node `rkey` inherits.
  auto from_parent = [&](const std::string& rkey) {
    const Standing& p = places_[rkey].standing;
    return Standing{true, p.reachable, p.under_root || (r_.root_rkey && rkey == *r_.root_rkey)};
  };
  std::string at = start;
  Standing last;  // the standing of way.back() when the walk ends without a cycle
  std::optional<std::size_t> cycle_from;
  while (true) {
    if (spent() && !places_.contains(at)) return Standing{};
    auto node = place(at);
    if (!node) return pass(node);
    if ((*node)->missing) {  // a parent that is not (yet) indexed: dangling
      if (way.empty()) return Standing{true, false, false};
      last = Standing{true, false, false};
      break;
    }
    if ((*node)->standing.known) {
      if (way.empty()) return (*node)->standing;
      last = from_parent(at);
      break;
    }
    if (auto seen = on_way.find(at); seen != on_way.end()) {
      cycle_from = seen->second;
      break;
    }
    on_way.emplace(at, way.size());
    way.push_back(at);
    if ((*node)->top || !(*node)->parent) {  // the top level, or unattached
      last = Standing{true, (*node)->top, false};
      break;
    }
    at = *(*node)->parent;
  }
  std::size_t below = way.size();
  if (cycle_from) {
    // No reading position; under the root when the root is one of them.
    bool root_in = false;
    for (std::size_t i = *cycle_from; i < way.size(); ++i) {
      root_in = root_in || (r_.root_rkey && way[i] == *r_.root_rkey);
    }
    for (std::size_t i = *cycle_from; i < way.size(); ++i) {
      places_[way[i]].standing = Standing{true, false, root_in};
    }
    below = *cycle_from;
  } else {
    places_[way.back()].standing = last;
    below = way.size() - 1;
  }
  for (std::size_t i = below; i-- > 0;) places_[way[i]].standing = from_parent(way[i + 1]);
  return places_[start].standing;
}

Result<std::optional<Candidate>> SearchRun::load(const char* sql, std::int64_t rowid) {
  counted();
  auto stmt = db_.prepare(sql);
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, rowid).bind_view(2, r_.did);
  auto row = (*stmt)->step();
  if (!row) return pass(row);
  if (!*row) return std::optional<Candidate>();
  return std::optional<Candidate>(read_candidate(**stmt));
}

Result<Standing> SearchRun::standing_of(const Candidate& c) {
  if (!places_.contains(c.rkey)) {
    Place place;
    place.missing = false;
    place.top = c.group == top_group_;
    if (std::string_view(c.group).starts_with(child_prefix_)) {
      place.parent = c.group.substr(child_prefix_.size());
    }
    place.sort_key = c.sort_key;
    place.rowid = c.rowid;
    if (!c.partial) place.text = cut_text(c.text, kMaxAncestorTextBytes);
    places_.emplace(c.rkey, std::move(place));
  }
  return standing(c.rkey);
}

Result<bool> SearchRun::inside_root(const Candidate& c) {
  must_finish_ = true;
  auto standing = standing_of(c);
  must_finish_ = false;
  if (!standing) return pass(standing);
  return standing->under_root;
}

// Whether `c` is a result: the clauses the index did not answer (all of
// them when `index_answered` is false), and the root above it when the
// search has one and `check_scope`. nullopt: the budget ran out deciding.
Result<std::optional<bool>> SearchRun::wanted(const Candidate& c, bool index_answered,
                                              bool check_scope) {
  if (r_.root_rkey && c.rkey == *r_.root_rkey) return std::optional<bool>(false);
  const SearchDoc doc = c.doc(asks_created_);
  if (index_answered) {
    for (std::size_t i = 0; i < answered_.size(); ++i) {
      if (!answered_[i] && !matcher_.matches_clause(doc, i)) return std::optional<bool>(false);
    }
  } else if (!matcher_.matches(doc)) {
    return std::optional<bool>(false);
  }
  if (!check_scope || !r_.root_rkey) return std::optional<bool>(true);
  auto standing = standing_of(c);
  if (!standing) return pass(standing);
  if (!standing->known) return std::optional<bool>();
  return std::optional<bool>(standing->under_root);
}

Result<bool> SearchRun::add(const Candidate& c) {
  Hit hit;
  // The 32 nearest ancestors (and whether there are more), nearest first.
  std::unordered_map<std::string, bool> seen{{c.rkey, true}};
  std::optional<std::string> up;
  if (std::string_view(c.group).starts_with(child_prefix_))
    up = c.group.substr(child_prefix_.size());
  while (up && !seen.contains(*up)) {
    seen.emplace(*up, true);
    auto node = place(*up);
    if (!node) return pass(node);
    if ((*node)->missing) break;
    if (hit.ancestors.size() == kMaxSearchAncestors) {
      hit.truncated = true;
      break;
    }
    auto text = ancestor_text(**node);
    if (!text) return pass(text);
    hit.ancestors.push_back({*up, std::move(*text)});
    up = (*node)->parent;
  }
  std::reverse(hit.ancestors.begin(), hit.ancestors.end());
  hit.ranges = matcher_.score(c.doc()).ranges;
  // As view_bytes counts a node: its texts escaped at worst, its names and
  // the view's fields; and the ancestors' texts.
  std::size_t bytes = 2 * (c.text.size() + (c.note ? c.note->size() : 0)) + 3 * r_.did.size() +
                      3 * c.rkey.size() + 512 + 16 * hit.ranges.size();
  for (const auto& a : hit.ancestors) bytes += 2 * a.text.size() + a.rkey.size() + 32;
  if (!hits_->empty() && bytes_ + bytes > r_.max_bytes) return false;
  bytes_ += bytes;
  hit.node = c;
  hits_->push_back(std::move(hit));
  return true;
}

// Adds `sorted` from `offset` until the page is full; where it stopped.
Result<std::size_t> SearchRun::add_from(const std::vector<const Candidate*>& sorted,
                                        std::int64_t offset) {
  std::size_t at = static_cast<std::size_t>(std::min<std::int64_t>(offset, std::ssize(sorted)));
  while (at < sorted.size() && !full()) {
    std::optional<Candidate> whole;
    if (sorted[at]->partial) {
      auto stmt = db_.prepare(kCandidateByRowid);
      if (!stmt) return pass(stmt);
      (*stmt)->bind(1, sorted[at]->rowid).bind_view(2, r_.did);
      auto row = (*stmt)->step();
      if (!row) return pass(row);
      if (!*row) {  // not within one read transaction; never a hit without its text
        ++at;
        continue;
      }
      whole = read_candidate(**stmt);
    }
    auto added = add(whole ? *whole : *sorted[at]);
    if (!added) return pass(added);
    if (!*added) break;
    ++at;
  }
  return at;
}

Result<std::optional<SearchPath>> SearchRun::path(const Candidate& c, std::size_t& entries) const {
  SearchPath out;
  const std::string* at = &c.rkey;
  while (true) {
    // Every node on the way was placed (its standing is known).
    const auto node = places_.find(*at);
    if (node == places_.end() || node->second.missing) break;
    out.emplace_back(node->second.sort_key, node->first);
    const auto& up = node->second.parent;
    if (!up || (r_.root_rkey && *up == *r_.root_rkey)) break;
    at = &*up;
    if (++entries > kPathStepsPerRow * r_.budget_rows) return std::optional<SearchPath>();
  }
  std::reverse(out.begin(), out.end());
  return std::optional<SearchPath>(std::move(out));
}

// All candidates read, filtered and sorted; false when the budget ran out
// before they were (the caller then starts over the long way).
Result<bool> SearchRun::complete(const std::vector<std::int64_t>& rowids, std::int64_t offset) {
  struct Found {
    Candidate c;
    std::int64_t score = 0;
    bool placed = true;  // has a reading position (outline)
    SearchPath path;
  };
  std::vector<Found> found;
  const bool outline = r_.sort == SearchSort::kOutline;
  // Few candidates are placed at once; more are first looked for in reading
  // order (search_walks.cpp).
  if (outline && rowids.size() > kWalkMinCandidatesPerResult * static_cast<std::size_t>(r_.limit)) {
    auto walked = outline_among(rowids, offset);
    if (!walked) return pass(walked);
    if (*walked) return true;
  }
  // In reading order, when the index answers every clause, a candidate is
  // read only as far as placing it needs.
  const bool partial =
      outline && std::all_of(answered_.begin(), answered_.end(), [](bool b) { return b; });
  for (const std::int64_t rowid : rowids) {
    auto c = partial ? load(kPlacedByRowid, rowid) : load(kCandidateByRowid, rowid);
    if (!c) return pass(c);
    if (!*c) continue;
    auto want = wanted(**c, true, true);
    if (!want) return pass(want);
    if (!*want) return false;
    if (!**want) continue;
    Found f{std::move(**c)};
    if (r_.sort == SearchSort::kRelevance) f.score = matcher_.score(f.c.doc()).score;
    if (outline) {
      auto standing = standing_of(f.c);
      if (!standing) return pass(standing);
      if (!standing->known) return false;
      f.placed = r_.root_rkey ? true : standing->reachable;
    }
    found.push_back(std::move(f));
  }
  if (outline) {
    std::size_t entries = 0;
    for (auto& f : found) {
      if (!f.placed) continue;
      auto p = path(f.c, entries);
      if (!p) return pass(p);
      if (!*p) return false;
      f.path = std::move(**p);
    }
  }
  std::sort(found.begin(), found.end(), [&](const Found& a, const Found& b) {
    switch (r_.sort) {
      case SearchSort::kRelevance:
        return a.score != b.score ? a.score > b.score : a.c.rowid > b.c.rowid;
      case SearchSort::kRecent:
        return a.c.change_seq > b.c.change_seq;
      case SearchSort::kOutline:
        if (a.placed != b.placed) return a.placed;
        if (!a.placed) return a.c.rkey < b.c.rkey;
        return a.path < b.path;
    }
    return false;
  });
  std::vector<const Candidate*> sorted;
  for (const auto& f : found) sorted.push_back(&f.c);
  auto taken = add_from(sorted, offset);
  if (!taken) return pass(taken);
  const std::size_t at = *taken;
  if (at < found.size()) set_cursor('c', static_cast<std::int64_t>(at));
  return true;
}

Result<void> SearchRun::run(std::vector<Hit>& hits, SearchPage& page) {
  hits_ = &hits;
  page_ = &page;
  std::optional<SearchCursor> cursor;
  if (r_.cursor) {
    auto decoded = decode_cursor(*r_.cursor, r_);
    if (!decoded) return pass(decoded);
    cursor = *decoded;
  }
  if (code_.empty()) return {};  // nothing of the repo was ever indexed
  auto named = name_prefixes();
  if (!named) return pass(named);
  expression_ = fts_expression(r_.query, code_, &answered_, &*named, &broad_);
  page.index_query = expression_;
  // At most this many candidates are read and sorted whole; more take the
  // long way (relevance: windows; the other sorts: walks).
  const std::size_t half = r_.sort == SearchSort::kRelevance
                               ? window_rows(r_.budget_rows)
                               : std::max<std::size_t>(r_.budget_rows / 2, 1);
  // By relevance, the newest first (the first window's, when they are too
  // many); in the other sorts, a set whose order does not matter: the
  // index's own.
  auto all_matches = [&]() -> Result<std::vector<std::int64_t>> {
    std::vector<std::int64_t> rowids;
    const bool newest_first = r_.sort == SearchSort::kRelevance;
    auto stmt = newest_first ? db_.prepare(kMatchesDown) : db_.prepare(kMatchesUp);
    if (!stmt) return pass(stmt);
    (*stmt)->bind_view(1, *expression_);
    if (newest_first) (*stmt)->bind(2, kNoRow);
    while (rowids.size() <= half) {
      auto row = (*stmt)->step();
      if (!row) return pass(row);
      if (!*row) break;
      counted();
      rowids.push_back((*stmt)->integer(0));
    }
    return rowids;
  };
  // Words or tags to score by: by relevance without the index's help (all
  // of them too broad to ask it), windows of the nodes by change.
  const bool scored = std::any_of(r_.query.all.begin(), r_.query.all.end(), [](const auto& c) {
    return !c.negated && std::any_of(c.any.begin(), c.any.end(),
                                     [](const SearchTerm& t) { return t.in_index(); });
  });
  // `listed`: the newest matches, when all_matches has read them.
  auto the_long_way = [&](const std::vector<std::int64_t>& listed) -> Result<void> {
    if (r_.sort == SearchSort::kOutline) return outline(0, 0, 0);
    if (r_.sort == SearchSort::kRelevance && expression_) return windows('w', kNoRow, 0, listed);
    if (r_.sort == SearchSort::kRelevance && scored) return windows('v', kNoRow, 0);
    return recent(kNoRow);
  };
  // An empty page whose cursor starts the long way (filters alone by
  // relevance take recent order's, as the_long_way does).
  auto start_over = [&] {
    hits.clear();
    page.budget_cut = true;
    if (r_.sort == SearchSort::kOutline) {
      set_cursor('o', 0, 0, 0);
    } else if (r_.sort == SearchSort::kRelevance && expression_) {
      set_cursor('w', kNoRow, 0);
    } else if (r_.sort == SearchSort::kRelevance && scored) {
      set_cursor('v', kNoRow, 0);
    } else {
      set_cursor('t', kNoRow);
    }
  };
  if (cursor) {
    switch (cursor->kind) {
      // A cursor that asked the index, for a query it no longer asks (its
      // prefix grew too broad since): the long way, from the start.
      case 'c': {
        if (!expression_) {
          start_over();
          return {};
        }
        auto rowids = all_matches();
        if (!rowids) return pass(rowids);
        if (rowids->size() > half) rowids->resize(half);
        auto done = complete(*rowids, cursor->a);
        if (!done) return pass(done);
        return {};
      }
      case 'w':
        if (!expression_) {
          start_over();
          return {};
        }
        return windows('w', cursor->a, cursor->b);
      case 'v':
        return windows('v', cursor->a, cursor->b);
      case 't': {
        if (!expression_) return recent(cursor->a);
        auto walk = walk_first();
        if (!walk) return pass(walk);
        if (*walk) return recent(cursor->a);
        auto rowids = all_matches();
        if (!rowids) return pass(rowids);
        if (rowids->size() > half) return recent(cursor->a);
        return recent_among(*rowids, cursor->a);
      }
      case 's': {
        auto done = subtree(cursor->a);
        if (!done) return pass(done);
        if (!*done) start_over();  // the subtree grew past the walk
        return {};
      }
      default:
        return outline(cursor->a, cursor->b, cursor->c);
    }
  }
  // Too many matches to read whole: a zoomed search reads its subtree when
  // that is small, any other takes the long way.
  auto too_many = [&](const std::vector<std::int64_t>& listed) -> Result<void> {
    if (r_.root_rkey && r_.sort != SearchSort::kOutline) {
      auto done = subtree(0);
      if (!done) return pass(done);
      if (*done) return {};
    }
    return the_long_way(listed);
  };
  if (!expression_) return too_many({});
  auto walk = walk_first();
  if (!walk) return pass(walk);
  if (*walk) {
    return r_.sort == SearchSort::kRelevance ? windows('v', kNoRow, 0) : the_long_way({});
  }
  auto rowids = all_matches();
  if (!rowids) return pass(rowids);
  if (rowids->size() > half) return too_many(*rowids);
  if (r_.sort == SearchSort::kRecent) return recent_among(*rowids, kNoRow);
  auto done = complete(*rowids, 0);
  if (!done) return pass(done);
  // Too many steps up to place the candidates: the long way, next page.
  if (!*done) start_over();
  return {};
}

}  // namespace bulleted::schema::search
