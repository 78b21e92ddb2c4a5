// Reader: search (DESIGN.md section 10) and tags. Work is counted in rows
// (index rows, nodes read, steps up to ancestors) against the request's
// budget, never in time; a page that runs out of it ends early with a
// cursor. Four ways through a repo, each with its cursor:
//   complete  the index found at most half the budget: every candidate is
//             read, filtered and sorted in the requested order (c|offset);
//   windows   relevance over more than that: the index's candidates newest
//             row first, a budget's worth at a time, each window sorted by
//             score (w|upper rowid|offset);
//   recent    the repo's nodes by change sequence, newest first, each held
//             against the whole query in the app view (t|change_seq);
//   outline   the outline in reading order, depth first, then the nodes
//             with no reading position by rkey (o|phase|rowid|step).
// Where a page continues never depends on other repos: the index's tokens
// carry the repo's code, the walks read the repo's rows only.
#include <algorithm>
#include <unordered_map>

#include "schema/base64.hpp"
#include "schema/datetime.hpp"
#include "schema/reader.hpp"
#include "schema/search_index.hpp"
#include "schema/sqlite.hpp"
#include "schema/syntax.hpp"

namespace bulleted::schema {
namespace {

#define CANDIDATE_COLUMNS \
  "rowid, rkey, grp, sort_key, text, note, completed, created_at, change_seq, indexed_at"
constexpr const char* kCandidateByRowid =
    "SELECT " CANDIDATE_COLUMNS " FROM nodes WHERE rowid = ?1 AND did = ?2";
constexpr const char* kPlaceByKey = "SELECT grp, sort_key, text FROM nodes WHERE did = ?1 AND rkey = ?2";
constexpr const char* kMatchesDown =
    "SELECT rowid FROM search_fts WHERE search_fts MATCH ?1 AND rowid < ?2 ORDER BY rowid DESC";
constexpr const char* kByChange = "SELECT " CANDIDATE_COLUMNS
                                  " FROM nodes WHERE did = ?1 AND change_seq < ?2"
                                  " ORDER BY change_seq DESC";
constexpr const char* kFirstChild = "SELECT " CANDIDATE_COLUMNS
                                    " FROM nodes WHERE grp = ?1 ORDER BY sort_key, rkey LIMIT 1";
constexpr const char* kNextSibling = "SELECT " CANDIDATE_COLUMNS
                                     " FROM nodes WHERE grp = ?1 AND (sort_key, rkey) > (?2, ?3)"
                                     " ORDER BY sort_key, rkey LIMIT 1";
constexpr const char* kByKeyFrom = "SELECT " CANDIDATE_COLUMNS
                                   " FROM nodes WHERE did = ?1 AND rkey >= ?2 ORDER BY rkey";

constexpr std::int64_t kNoRow = std::numeric_limits<std::int64_t>::max();

// A node as a search reads it: enough to filter, sort and place it.
struct Candidate {
  std::int64_t rowid = 0;
  std::string rkey, group, sort_key, text;
  std::optional<std::string> note;
  bool completed = false;
  std::string created_at;
  std::int64_t change_seq = 0;
  std::optional<std::int64_t> indexed_at;

  SearchDoc doc() const {
    return {text, note ? std::optional<std::string_view>(*note) : std::nullopt, completed,
            datetime_ms(created_at), indexed_at};
  }
};

Candidate read_candidate(const Statement& stmt) {
  Candidate c;
  c.rowid = stmt.integer(0);
  c.rkey = stmt.text(1);
  c.group = stmt.text(2);
  c.sort_key = stmt.text(3);
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

// A cursor: its kind, up to three numbers, and the search it belongs to.
struct SearchCursor {
  char kind = 0;
  std::int64_t a = 0, b = 0, c = 0;
};

std::string encode_cursor(const SearchCursor& cursor, std::uint64_t digest) {
  const std::string plain = std::string(1, cursor.kind) + "." + std::to_string(cursor.a) + "." +
                            std::to_string(cursor.b) + "." + std::to_string(cursor.c) + "." +
                            std::to_string(digest);
  return base64_encode(plain, Base64Alphabet::kUrl, false);
}

Result<SearchCursor> decode_cursor(std::string_view text, std::uint64_t digest) {
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
      got != digest || std::string_view("cwto").find(kind) == std::string_view::npos || a < 0 ||
      b < 0 || c < 0) {
    return refused();
  }
  cursor.kind = kind;
  cursor.a = a;
  cursor.b = b;
  cursor.c = c;
  return cursor;
}

// Where a node stands: its parent, whether it has a reading position
// (its parents lead to the top level) and whether `root` is above it.
struct Standing {
  bool known = false;
  bool reachable = false;
  bool under_root = false;
};

struct Place {
  bool missing = true;
  bool top = false;                   // filed at the top level
  std::optional<std::string> parent;  // filed under this node
  std::string sort_key;
  std::string text;  // cut for ancestors
  Standing standing;
};

// A found node as a page returns it.
struct Hit {
  Candidate node;
  std::vector<MatchRange> ranges;
  std::vector<SearchAncestor> ancestors;
  bool truncated = false;
};

class SearchRun {
 public:
  SearchRun(Database& db, const SearchRequest& request, std::string code)
      : db_(db),
        r_(request),
        matcher_(request.query, request.now_ms),
        code_(std::move(code)),
        top_group_("at://" + request.did),
        child_prefix_("at://" + request.did + "/" + std::string(kNodeCollection) + "/") {}

  // The page's hits, its cursor and what it cost.
  Result<void> run(std::vector<Hit>& hits, SearchPage& page);
  std::size_t examined() const { return examined_; }

 private:
  // The first candidate of a page is always decided, whatever it costs
  // (each page makes progress); every other stops at the budget.
  bool spent() const { return examined_ >= r_.budget_rows && !must_finish_; }
  bool full() const { return hits_->size() >= static_cast<std::size_t>(r_.limit); }

  Result<Place*> place(const std::string& rkey);
  Result<Standing> standing(const std::string& rkey);
  Result<Standing> standing_of(const Candidate& c);
  Result<std::optional<bool>> wanted(const Candidate& c, bool index_answered, bool check_scope);
  // Adds a hit; false when the answer's bytes are full (not added).
  Result<bool> add(const Candidate& c);
  Result<std::optional<Candidate>> load(const char* sql, std::int64_t rowid);
  void set_cursor(char kind, std::int64_t a, std::int64_t b = 0, std::int64_t c = 0) {
    page_->cursor = encode_cursor({kind, a, b, c}, search_digest(r_));
  }

  Result<bool> complete(const std::vector<std::int64_t>& rowids, std::int64_t offset);
  Result<void> windows(std::int64_t upper, std::int64_t offset);
  Result<void> recent(std::int64_t below);
  Result<void> outline(std::int64_t phase, std::int64_t rowid, std::int64_t step);
  Result<void> unplaced(std::int64_t rowid);
  Result<std::optional<std::vector<std::pair<std::string, std::string>>>> path(
      const Candidate& c, std::size_t& entries);

  Database& db_;
  const SearchRequest& r_;
  SearchMatcher matcher_;
  std::string code_;
  std::string top_group_, child_prefix_;
  std::optional<std::string> expression_;
  std::vector<bool> answered_;
  std::unordered_map<std::string, Place> places_;
  std::size_t examined_ = 0;
  bool must_finish_ = false;
  std::size_t bytes_ = 0;
  std::vector<Hit>* hits_ = nullptr;
  SearchPage* page_ = nullptr;
};

Result<Place*> SearchRun::place(const std::string& rkey) {
  auto known = places_.find(rkey);
  if (known != places_.end()) return &known->second;
  ++examined_;
  Place place;
  auto stmt = db_.prepare(kPlaceByKey);
  if (!stmt) return pass(stmt);
  (*stmt)->bind_view(1, r_.did).bind_view(2, rkey);
  auto row = (*stmt)->step();
  if (!row) return pass(row);
  if (*row) {
    place.missing = false;
    const std::string_view group = (*stmt)->text_view(0);
    place.top = group == top_group_;
    if (group.starts_with(child_prefix_)) place.parent = std::string(group.substr(child_prefix_.size()));
    place.sort_key = (*stmt)->text(1);
    place.text = cut_text((*stmt)->text_view(2), kMaxAncestorTextBytes);
  }
  return &places_.emplace(rkey, std::move(place)).first->second;
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
  ++examined_;
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
    place.text = cut_text(c.text, kMaxAncestorTextBytes);
    places_.emplace(c.rkey, std::move(place));
  }
  return standing(c.rkey);
}

// Whether `c` is a result: the clauses the index did not answer (all of
// them when `index_answered` is false), and the root above it when the
// search has one and `check_scope`. nullopt: the budget ran out deciding.
Result<std::optional<bool>> SearchRun::wanted(const Candidate& c, bool index_answered,
                                              bool check_scope) {
  if (r_.root_rkey && c.rkey == *r_.root_rkey) return std::optional<bool>(false);
  const SearchDoc doc = c.doc();
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
  bool top = false;
  std::optional<std::string> up;
  if (std::string_view(c.group).starts_with(child_prefix_)) up = c.group.substr(child_prefix_.size());
  while (up && !seen.contains(*up)) {
    seen.emplace(*up, true);
    auto node = place(*up);
    if (!node) return pass(node);
    if ((*node)->missing) break;
    if (hit.ancestors.size() == kMaxSearchAncestors) {
      hit.truncated = true;
      break;
    }
    hit.ancestors.push_back({*up, (*node)->text});
    top = (*node)->top;
    up = (*node)->parent;
  }
  (void)top;
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

Result<std::optional<std::vector<std::pair<std::string, std::string>>>> SearchRun::path(
    const Candidate& c, std::size_t& entries) {
  using Path = std::vector<std::pair<std::string, std::string>>;
  Path out{{c.sort_key, c.rkey}};
  std::optional<std::string> up;
  if (std::string_view(c.group).starts_with(child_prefix_)) up = c.group.substr(child_prefix_.size());
  while (up && !(r_.root_rkey && *up == *r_.root_rkey)) {
    const Place& node = places_[*up];
    if (node.missing) break;
    out.emplace_back(node.sort_key, *up);
    up = node.parent;
    if (++entries + examined_ > r_.budget_rows) return std::optional<Path>();
  }
  std::reverse(out.begin(), out.end());
  return std::optional<Path>(std::move(out));
}

// All candidates read, filtered and sorted; false when the budget ran out
// before they were (the caller then starts over the long way).
Result<bool> SearchRun::complete(const std::vector<std::int64_t>& rowids, std::int64_t offset) {
  struct Found {
    Candidate c;
    std::int64_t score = 0;
    bool placed = true;  // has a reading position (outline)
    std::vector<std::pair<std::string, std::string>> path;
  };
  std::vector<Found> found;
  const bool outline = r_.sort == SearchSort::kOutline;
  for (const std::int64_t rowid : rowids) {
    auto c = load(kCandidateByRowid, rowid);
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
  std::size_t at = static_cast<std::size_t>(std::min<std::int64_t>(offset, std::ssize(found)));
  while (at < found.size() && !full()) {
    auto added = add(found[at].c);
    if (!added) return pass(added);
    if (!*added) break;
    ++at;
  }
  if (at < found.size()) set_cursor('c', static_cast<std::int64_t>(at));
  return true;
}

Result<void> SearchRun::windows(std::int64_t upper, std::int64_t offset) {
  struct Found {
    Candidate c;
    std::int64_t score = 0;
  };
  std::vector<Found> found;
  bool exhausted = true;
  std::int64_t low = upper;
  {
    auto stmt = db_.prepare(kMatchesDown);
    if (!stmt) return pass(stmt);
    (*stmt)->bind_view(1, *expression_).bind(2, upper);
    while (true) {
      if (spent() && low != upper) {
        exhausted = false;
        break;
      }
      auto row = (*stmt)->step();
      if (!row) return pass(row);
      if (!*row) break;
      ++examined_;
      const std::int64_t rowid = (*stmt)->integer(0);
      auto c = load(kCandidateByRowid, rowid);
      if (!c) return pass(c);
      if (*c) {
        must_finish_ = low == upper;
        auto want = wanted(**c, true, true);
        must_finish_ = false;
        if (!want) return pass(want);
        if (!*want) {  // the budget ran out: the window ends before it
          exhausted = false;
          break;
        }
        if (*want && **want) found.push_back({std::move(**c), 0});
      }
      low = rowid;
    }
  }
  for (auto& f : found) f.score = matcher_.score(f.c.doc()).score;
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    return a.score != b.score ? a.score > b.score : a.c.rowid > b.c.rowid;
  });
  std::size_t at = static_cast<std::size_t>(std::min<std::int64_t>(offset, std::ssize(found)));
  while (at < found.size() && !full()) {
    auto added = add(found[at].c);
    if (!added) return pass(added);
    if (!*added) break;
    ++at;
  }
  if (at < found.size()) {
    set_cursor('w', upper, static_cast<std::int64_t>(at));
  } else if (!exhausted) {
    set_cursor('w', low, 0);
    page_->budget_cut = true;
  }
  return {};
}

Result<void> SearchRun::recent(std::int64_t below) {
  auto stmt = db_.prepare(kByChange);
  if (!stmt) return pass(stmt);
  (*stmt)->bind_view(1, r_.did).bind(2, below);
  bool first = true;
  while (true) {
    auto row = (*stmt)->step();
    if (!row) return pass(row);
    if (!*row) return {};
    Candidate c = read_candidate(**stmt);
    if (spent() && !first) {
      set_cursor('t', c.change_seq + 1);
      page_->budget_cut = true;
      return {};
    }
    ++examined_;
    must_finish_ = first;
    auto want = wanted(c, false, true);
    must_finish_ = false;
    if (!want) return pass(want);
    if (!*want) {
      set_cursor('t', c.change_seq + 1);
      page_->budget_cut = true;
      return {};
    }
    first = false;
    if (!**want) continue;
    auto added = add(c);
    if (!added) return pass(added);
    if (!*added) {
      set_cursor('t', c.change_seq + 1);
      return {};
    }
    if (full()) {
      set_cursor('t', c.change_seq);
      return {};
    }
  }
}

// The outline in reading order from where the cursor left off: `step` says
// what is next about node `rowid`: examine it (0), go down into it (1), or
// go on after its subtree (2); rowid 0 starts at the scope's first node.
Result<void> SearchRun::outline(std::int64_t phase, std::int64_t rowid, std::int64_t step) {
  if (phase == 1) return unplaced(rowid);
  const std::string scope = r_.root_rkey ? child_prefix_ + *r_.root_rkey : top_group_;
  auto first_in = [&](const std::string& group) -> Result<std::optional<Candidate>> {
    ++examined_;
    auto stmt = db_.prepare(kFirstChild);
    if (!stmt) return pass(stmt);
    (*stmt)->bind_view(1, group);
    auto row = (*stmt)->step();
    if (!row) return pass(row);
    if (!*row) return std::optional<Candidate>();
    return std::optional<Candidate>(read_candidate(**stmt));
  };
  auto after = [&](const Candidate& c) -> Result<std::optional<Candidate>> {
    ++examined_;
    auto stmt = db_.prepare(kNextSibling);
    if (!stmt) return pass(stmt);
    (*stmt)->bind_view(1, c.group).bind_view(2, c.sort_key).bind_view(3, c.rkey);
    auto row = (*stmt)->step();
    if (!row) return pass(row);
    if (!*row) return std::optional<Candidate>();
    return std::optional<Candidate>(read_candidate(**stmt));
  };
  std::optional<Candidate> at;
  if (rowid != 0) {
    auto c = load(kCandidateByRowid, rowid);
    if (!c) return pass(c);
    at = std::move(*c);
  }
  if (!at) {  // the start, or the node the cursor named is gone: from the top
    auto c = first_in(scope);
    if (!c) return pass(c);
    at = std::move(*c);
    step = 0;
  }
  bool first = true;
  while (at) {
    if (spent() && !first) {
      set_cursor('o', 0, at->rowid, step);
      page_->budget_cut = true;
      return {};
    }
    if (step == 0) {
      step = 1;
      if (r_.root_rkey && at->rkey == *r_.root_rkey) {
        step = 2;  // the root inside its own subtree (a cycle): never again
        continue;
      }
      first = false;
      ++examined_;
      auto want = wanted(*at, false, false);
      if (!want) return pass(want);
      if (*want && **want) {
        auto added = add(*at);
        if (!added) return pass(added);
        if (!*added) {
          set_cursor('o', 0, at->rowid, 0);
          return {};
        }
        if (full()) {
          set_cursor('o', 0, at->rowid, 1);
          return {};
        }
      }
    } else if (step == 1) {
      auto child = first_in(child_prefix_ + at->rkey);
      if (!child) return pass(child);
      if (*child) {
        at = std::move(*child);
        step = 0;
      } else {
        step = 2;
      }
    } else {
      auto next = after(*at);
      if (!next) return pass(next);
      if (*next) {
        at = std::move(*next);
        step = 0;
      } else if (at->group == scope) {
        at.reset();
      } else {
        // Up to the parent, whose subtree this ends.
        const std::string parent = at->group.substr(child_prefix_.size());
        ++examined_;
        auto stmt = db_.prepare(kByKeyFrom);
        if (!stmt) return pass(stmt);
        (*stmt)->bind_view(1, r_.did).bind_view(2, parent);
        auto row = (*stmt)->step();
        if (!row) return pass(row);
        if (!*row || (*stmt)->text_view(1) != parent) {
          at.reset();
        } else {
          at = read_candidate(**stmt);
        }
      }
    }
  }
  if (r_.root_rkey) return {};
  return unplaced(0);
}

// The nodes with no reading position (unattached, dangling, in a cycle), by
// rkey, from node `rowid` on (0: the first).
Result<void> SearchRun::unplaced(std::int64_t rowid) {
  std::string from;
  if (rowid != 0) {
    auto c = load(kCandidateByRowid, rowid);
    if (!c) return pass(c);
    if (*c) from = (*c)->rkey;
  }
  auto stmt = db_.prepare(kByKeyFrom);
  if (!stmt) return pass(stmt);
  (*stmt)->bind_view(1, r_.did).bind_view(2, from);
  bool first = true;
  while (true) {
    auto row = (*stmt)->step();
    if (!row) return pass(row);
    if (!*row) return {};
    Candidate c = read_candidate(**stmt);
    if (full() || (spent() && !first)) {
      set_cursor('o', 1, c.rowid, 0);
      page_->budget_cut = !full();
      return {};
    }
    ++examined_;
    must_finish_ = first;
    first = false;
    auto standing = standing_of(c);
    must_finish_ = false;
    if (!standing) return pass(standing);
    if (!standing->known) {
      set_cursor('o', 1, c.rowid, 0);
      page_->budget_cut = true;
      return {};
    }
    if (standing->reachable) continue;
    auto want = wanted(c, false, false);
    if (!want) return pass(want);
    if (!**want) continue;
    auto added = add(c);
    if (!added) return pass(added);
    if (!*added) {
      set_cursor('o', 1, c.rowid, 0);
      return {};
    }
  }
}

Result<void> SearchRun::run(std::vector<Hit>& hits, SearchPage& page) {
  hits_ = &hits;
  page_ = &page;
  std::optional<SearchCursor> cursor;
  if (r_.cursor) {
    auto decoded = decode_cursor(*r_.cursor, search_digest(r_));
    if (!decoded) return pass(decoded);
    cursor = *decoded;
  }
  if (code_.empty()) return {};  // nothing of the repo was ever indexed
  expression_ = fts_expression(r_.query, code_, &answered_);
  const std::size_t half = std::max<std::size_t>(r_.budget_rows / 2, 1);
  auto all_matches = [&]() -> Result<std::vector<std::int64_t>> {
    std::vector<std::int64_t> rowids;
    auto stmt = db_.prepare(kMatchesDown);
    if (!stmt) return pass(stmt);
    (*stmt)->bind_view(1, *expression_).bind(2, kNoRow);
    while (rowids.size() <= half) {
      auto row = (*stmt)->step();
      if (!row) return pass(row);
      if (!*row) break;
      ++examined_;
      rowids.push_back((*stmt)->integer(0));
    }
    return rowids;
  };
  auto the_long_way = [&]() -> Result<void> {
    if (r_.sort == SearchSort::kOutline) return outline(0, 0, 0);
    if (r_.sort == SearchSort::kRelevance && expression_) return windows(kNoRow, 0);
    return recent(kNoRow);
  };
  if (cursor) {
    switch (cursor->kind) {
      case 'c': {
        if (!expression_) return {};
        auto rowids = all_matches();
        if (!rowids) return pass(rowids);
        if (rowids->size() > half) rowids->resize(half);
        auto done = complete(*rowids, cursor->a);
        if (!done) return pass(done);
        return {};
      }
      case 'w':
        if (!expression_) return {};
        return windows(cursor->a, cursor->b);
      case 't':
        return recent(cursor->a);
      default:
        return outline(cursor->a, cursor->b, cursor->c);
    }
  }
  if (!expression_) return the_long_way();
  auto rowids = all_matches();
  if (!rowids) return pass(rowids);
  if (rowids->size() > half) return the_long_way();
  auto done = complete(*rowids, 0);
  if (!done) return pass(done);
  if (!*done) {
    // Too many steps up to place the candidates: the long way, next page.
    hits.clear();
    page.budget_cut = true;
    if (r_.sort == SearchSort::kOutline) {
      set_cursor('o', 0, 0, 0);
    } else if (r_.sort == SearchSort::kRelevance) {
      set_cursor('w', kNoRow, 0);
    } else {
      set_cursor('t', kNoRow);
    }
  }
  return {};
}

}  // namespace

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
  std::vector<Hit> hits;
  SearchRun run(db_, request, code->value_or(""));
  if (auto r = run.run(hits, page); !r) return pass(r);
  page.rows_examined = run.examined();
  for (auto& hit : hits) {
    auto node = find_node(request.did, hit.node.rkey);
    if (!node) return pass(node);
    if (!*node) continue;
    page.results.push_back(SearchResult{std::move(**node), std::move(hit.ancestors),
                                        hit.truncated, std::move(hit.ranges)});
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
    auto stmt = db_.prepare(
        "SELECT tag, n FROM search_tags WHERE did = ?1 ORDER BY n DESC, tag LIMIT ?2");
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
  // The tags starting with the prefix, at most kMaxTagsScanned of them (in
  // tag order), the most used first.
  const std::string low = fold_tag(prefix);
  auto stmt = db_.prepare(
      "SELECT tag, n FROM search_tags WHERE did = ?1 AND tag >= ?2 AND tag < ?2 || x'FF'"
      " LIMIT 10000");
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, did).bind(2, low);
  while (true) {
    auto row = (*stmt)->step();
    if (!row) return pass(row);
    if (!*row) break;
    out.push_back({(*stmt)->text(0), (*stmt)->integer(1)});
  }
  std::sort(out.begin(), out.end(), [](const TagCount& a, const TagCount& b) {
    return a.count != b.count ? a.count > b.count : a.tag < b.tag;
  });
  if (out.size() > static_cast<std::size_t>(limit)) out.resize(static_cast<std::size_t>(limit));
  return out;
}

}  // namespace bulleted::schema
