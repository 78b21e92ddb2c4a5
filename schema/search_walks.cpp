// A search's long ways: the repo's nodes by change sequence, the outline
// in reading order then the nodes with no reading position, a zoomed
// bullet's small subtree, and the relevance windows (the run that picks
// the way for a page: search_run.cpp).
#include <algorithm>
#include <tuple>
#include <unordered_set>

#include "schema/search_index.hpp"
#include "schema/search_run.hpp"

namespace bulleted::schema::search {

Result<bool> SearchRun::recent_step(const Candidate& c, bool first, bool index_answered,
                                    bool count_row) {
  if (spent() && !first) {
    set_cursor('t', c.change_seq + 1);
    page_->budget_cut = true;
    return false;
  }
  if (count_row) counted();
  must_finish_ = first;
  auto want = wanted(c, index_answered, true);
  must_finish_ = false;
  if (!want) return pass(want);
  if (!*want) {
    set_cursor('t', c.change_seq + 1);
    page_->budget_cut = true;
    return false;
  }
  if (!**want) return true;
  auto added = add(c);
  if (!added) return pass(added);
  if (!*added) {
    set_cursor('t', c.change_seq + 1);
    return false;
  }
  if (full()) {
    set_cursor('t', c.change_seq);
    return false;
  }
  return true;
}

Result<void> SearchRun::recent(std::int64_t below) {
  auto stmt = db_.prepare(kByChange);
  if (!stmt) return pass(stmt);
  (*stmt)->bind_view(1, r_.did).bind(2, below);
  for (bool first = true;; first = false) {
    auto row = (*stmt)->step();
    if (!row) return pass(row);
    if (!*row) return {};
    auto more = recent_step(read_candidate(**stmt), first, false, true);
    if (!more) return pass(more);
    if (!*more) return {};
  }
}

// The candidates (all of them, `rowids`) newest first from `below`: the
// change index walked down, the candidates read as it meets them; when the
// walk would cost more than reading them all, the rest read and sorted.
Result<void> SearchRun::recent_among(const std::vector<std::int64_t>& rowids, std::int64_t below) {
  // The candidates the walk has not met.
  std::unordered_set<std::int64_t> members(rowids.begin(), rowids.end());
  bool first = true;
  std::int64_t from = below;  // the walk has seen every entry at or above this
  {
    auto stmt = db_.prepare(kChangesDown);
    if (!stmt) return pass(stmt);
    (*stmt)->bind_view(1, r_.did).bind(2, below);
    std::size_t met = 0;
    for (std::size_t seen = 1;; ++seen) {
      auto row = (*stmt)->step();
      if (!row) return pass(row);
      if (!*row) return {};
      if (seen % kChangeEntriesPerRow == 0) counted();
      const std::int64_t rowid = (*stmt)->integer(0);
      from = (*stmt)->integer(1);
      if (members.erase(rowid) != 0) {
        ++met;
        auto c = load(kCandidateByRowid, rowid);
        if (!c) return pass(c);
        if (*c) {
          auto more = recent_step(**c, first, true);
          if (!more) return pass(more);
          if (!*more) return {};
          first = false;
        }
      }
      if (seen % 64 == 0) {
        const std::size_t need = static_cast<std::size_t>(r_.limit) - hits_->size();
        const std::size_t reading = kChangeEntriesPerRow * (rowids.size() - met);
        if (met == 0 ? seen >= reading : seen * need / met > reading) break;
      }
    }
  }
  std::vector<Candidate> rest;
  for (const std::int64_t rowid : rowids) {
    if (!members.contains(rowid)) continue;  // met on the walk
    auto c = load(kCandidateByRowid, rowid);
    if (!c) return pass(c);
    if (*c && (*c)->change_seq < from) rest.push_back(std::move(**c));
  }
  std::sort(rest.begin(), rest.end(),
            [](const Candidate& a, const Candidate& b) { return a.change_seq > b.change_seq; });
  for (const Candidate& c : rest) {
    auto more = recent_step(c, first, true);
    if (!more) return pass(more);
    if (!*more) return {};
    first = false;
  }
  return {};
}

namespace {

// The candidate a bound statement's first row holds, if any.
Result<std::optional<Candidate>> first_row(Statement& stmt) {
  auto row = stmt.step();
  if (!row) return pass(row);
  if (!*row) return std::optional<Candidate>();
  return std::optional<Candidate>(read_candidate(stmt));
}

}  // namespace

// The first node of `group` in reading order.
Result<std::optional<Candidate>> SearchRun::first_in_group(const std::string& group) {
  counted();
  auto stmt = db_.prepare(kFirstChild);
  if (!stmt) return pass(stmt);
  (*stmt)->bind_view(1, group);
  return first_row(**stmt);
}

// The sibling after `c` in its group.
Result<std::optional<Candidate>> SearchRun::next_sibling(const Candidate& c) {
  counted();
  auto stmt = db_.prepare(kNextSibling);
  if (!stmt) return pass(stmt);
  (*stmt)->bind_view(1, c.group).bind_view(2, c.sort_key).bind_view(3, c.rkey);
  return first_row(**stmt);
}

// The node `c` is filed under (none at the top, or for a missing parent).
Result<std::optional<Candidate>> SearchRun::parent_of(const Candidate& c) {
  if (!std::string_view(c.group).starts_with(child_prefix_)) return std::optional<Candidate>();
  const std::string parent = c.group.substr(child_prefix_.size());
  counted();
  auto stmt = db_.prepare(kByKeyFrom);
  if (!stmt) return pass(stmt);
  (*stmt)->bind_view(1, r_.did).bind_view(2, parent);
  auto row = (*stmt)->step();
  if (!row) return pass(row);
  if (!*row || (*stmt)->text_view(1) != parent) return std::optional<Candidate>();
  return std::optional<Candidate>(read_candidate(**stmt));
}

// The outline in reading order from where the cursor left off: `step` says
// what is next about node `rowid`: examine it (0), go down into it (1), or
// go on after its subtree (2); rowid 0 starts at the scope's first node.
Result<void> SearchRun::outline(std::int64_t phase, std::int64_t rowid, std::int64_t step) {
  if (phase == 1) return unplaced(rowid);
  const std::string scope = r_.root_rkey ? child_prefix_ + *r_.root_rkey : top_group_;
  std::optional<Candidate> at;
  if (rowid != 0) {
    auto c = load(kCandidateByRowid, rowid);
    if (!c) return pass(c);
    at = std::move(*c);
  }
  if (at && r_.root_rkey) {
    // The walk goes on only from inside the root. Deciding it costs the
    // node's depth at most, on top of the page's budget (as a first
    // candidate may).
    const std::size_t before = examined_;
    auto inside = inside_root(*at);
    if (!inside) return pass(inside);
    limit_rows_ += examined_ - before;
    if (!*inside) at.reset();
  }
  if (!at) {  // the start, or the node the cursor named is gone (or out): from the top
    auto c = first_in_group(scope);
    if (!c) return pass(c);
    at = std::move(*c);
    step = 0;
  }
  // Every step moves the cursor on (down, across or up): a page stops at
  // its budget after at least one.
  bool first = true;
  while (at) {
    if (spent() && !first) {
      set_cursor('o', 0, at->rowid, step);
      page_->budget_cut = true;
      return {};
    }
    first = false;
    if (step == 0) {
      step = 1;
      if (r_.root_rkey && at->rkey == *r_.root_rkey) {
        step = 2;  // the root inside its own subtree (a cycle): never again
        continue;
      }
      counted();
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
    } else if (auto moved = move(at, step, scope); !moved) {
      return moved;
    }
  }
  if (r_.root_rkey) return {};
  return unplaced(0);
}

// One move of a walk in reading order inside `scope`, from node `at` past
// its examination: into its children (step 1; step 2 when it has none) or
// past its subtree (step 2: its next sibling, else up to its parent, whose
// subtree this ends; empty at the end of the scope). A node to examine
// next comes with step 0.
Result<void> SearchRun::move(std::optional<Candidate>& at, std::int64_t& step,
                             const std::string& scope) {
  if (step == 1) {
    auto child = first_in_group(child_prefix_ + at->rkey);
    if (!child) return pass(child);
    if (*child) {
      at = std::move(*child);
      step = 0;
    } else {
      step = 2;
    }
    return {};
  }
  auto next = next_sibling(*at);
  if (!next) return pass(next);
  if (*next) {
    at = std::move(*next);
    step = 0;
  } else if (at->group == scope) {
    at.reset();
  } else {
    auto parent = parent_of(*at);
    if (!parent) return pass(parent);
    at = std::move(*parent);
  }
  return {};
}

namespace {

// The walk reads a group's entries this many at a time (a seek each time),
// and one at a time below this depth, so that a hostile outline (deep, and
// wide at every level) cannot make it hold more than one entry a step.
constexpr std::int64_t kEntriesPerRead = 16;
constexpr std::size_t kLevelsReadAhead = 64;

}  // namespace

// Reads the next entries of `level`'s group after `after` (all: from the
// first) into it, from its start: `count` of them at most.
Result<void> SearchRun::read_entries(WalkLevel& level, const WalkEntry* after, std::int64_t count) {
  auto stmt = db_.prepare(kChildEntries);
  if (!stmt) return pass(stmt);
  (*stmt)->bind_view(1, level.group);
  (*stmt)->bind_view(2, after ? std::string_view(after->sort_key) : std::string_view(""));
  (*stmt)->bind_view(3, after ? std::string_view(after->rkey) : std::string_view(""));
  (*stmt)->bind(4, count).bind_view(5, child_prefix_);
  level.entries.clear();
  level.at = 0;
  while (true) {
    auto row = (*stmt)->step();
    if (!row) return pass(row);
    if (!*row) break;
    level.entries.push_back(
        {(*stmt)->integer(0), (*stmt)->text(1), (*stmt)->text(2), (*stmt)->integer(3) != 0});
  }
  level.more = std::ssize(level.entries) == count;
  return {};
}

// Reading order is depth first with siblings by (sort_key, rkey), which is
// the order of complete()'s paths: the wanted candidates the walk meets are
// complete()'s first ones, in its order, so the page and its cursor (an
// offset among them) are the ones complete() would give. The walk holds
// the levels from the scope down to where it is; it skips the root inside
// its own subtree (a cycle), and never meets nodes without a reading
// position, which complete() puts last.
Result<bool> SearchRun::outline_among(const std::vector<std::int64_t>& rowids,
                                      std::int64_t offset) {
  std::unordered_set<std::int64_t> members(rowids.begin(), rowids.end());
  const std::size_t examined_before = examined_;
  // What placing every candidate would cost, in steps.
  const std::size_t placing = kWalkStepsPerRow * kRowsPerPlacedCandidate * rowids.size();
  // The wanted candidates before the page (a cursor's offset), and how many
  // the page needs the walk to meet.
  const std::size_t skip = std::min(static_cast<std::size_t>(offset), rowids.size());
  const std::size_t need = skip + static_cast<std::size_t>(r_.limit);
  auto leave_to_placing = [&] {
    hits_->clear();
    bytes_ = 0;
    examined_ = examined_before;
    page_->cursor.reset();
    return false;
  };
  std::vector<WalkLevel> levels(1);
  // How many entries a read takes at `depth` (0: the scope's children).
  auto batch = [](std::size_t depth) { return depth < kLevelsReadAhead ? kEntriesPerRead : 1; };
  levels[0].group = r_.root_rkey ? child_prefix_ + *r_.root_rkey : top_group_;
  if (auto read = read_entries(levels[0], nullptr, batch(0)); !read) return pass(read);
  std::size_t met = 0;  // wanted candidates met
  for (std::size_t steps = 1;; ++steps) {
    // On past the entries read to the next one: the level's next read, or
    // up a level.
    while (!levels.empty() && levels.back().at == levels.back().entries.size()) {
      WalkLevel& level = levels.back();
      if (!level.more) {
        levels.pop_back();
        if (!levels.empty()) ++levels.back().at;
        continue;
      }
      const WalkEntry last = level.entries.back();
      if (auto read = read_entries(level, &last, batch(levels.size() - 1)); !read) {
        return pass(read);
      }
    }
    if (levels.empty()) break;
    if (steps % kWalkStepsPerRow == 0) counted();
    if (steps % 16 == 0) {
      // At the density met so far, counting the next node as a match (so
      // that a walk that met none gives way early, when even that would
      // not do).
      const bool dearer = steps * need / (met + 1) > placing;
      if (dearer || spent()) return leave_to_placing();
    }
    const WalkEntry& at = levels.back().entries[levels.back().at];
    if (r_.root_rkey && at.rkey == *r_.root_rkey) {  // never into the root's own subtree
      ++levels.back().at;
      continue;
    }
    if (members.erase(at.rowid) != 0) {
      auto c = load(kCandidateByRowid, at.rowid);
      if (!c) return pass(c);
      auto want =
          *c ? wanted(**c, true, false) : Result<std::optional<bool>>(std::optional<bool>(false));
      if (!want) return pass(want);
      if (**want && met++ >= skip) {
        auto added = add(**c);
        if (!added) return pass(added);
        if (!*added) {
          set_cursor('c', static_cast<std::int64_t>(met - 1));
          return true;
        }
        if (full()) {
          if (!members.empty()) set_cursor('c', static_cast<std::int64_t>(met));
          return true;
        }
      }
    }
    // Down into its children, else on.
    if (!at.parent) {
      ++levels.back().at;
      continue;
    }
    WalkLevel below;
    below.group = child_prefix_ + at.rkey;
    if (auto read = read_entries(below, nullptr, batch(levels.size())); !read) return pass(read);
    if (below.entries.empty()) {  // none after all: on
      ++levels.back().at;
    } else {
      levels.push_back(std::move(below));
    }
  }
  // Every node in reading order met: the rest, if any, have no reading
  // position, and complete() places them last.
  if (members.empty() || r_.root_rkey) return true;
  return leave_to_placing();
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
    counted();
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

// A zoomed search whose matches are too many to read whole (a common word)
// reads the root's subtree instead, when it is small: every node of it in
// reading order, within half the budget; its matches sorted, the page from
// `offset` on. false when the subtree is larger (nothing added). Not for
// outline order, whose long way is the same walk, stopping at a full page.
Result<bool> SearchRun::subtree(std::int64_t offset) {
  const std::string scope = child_prefix_ + *r_.root_rkey;
  const std::size_t walk = std::max<std::size_t>(r_.budget_rows / 2, 1);
  const std::size_t stop = examined_ + walk;
  // A root with more children than the walk may read is not walked.
  counted();
  auto children =
      query_value<std::int64_t>(db_, "SELECT n FROM group_counts WHERE grp = ?1", scope);
  if (!children) return pass(children);
  if (children->value_or(0) > static_cast<std::int64_t>(walk)) return false;
  // A match: its row and what it sorts by (reading order, score, change).
  struct Found {
    std::int64_t rowid, first, second;
  };
  std::vector<Found> found;
  auto start = first_in_group(scope);
  if (!start) return pass(start);
  std::optional<Candidate> at = std::move(*start);
  std::int64_t step = 0;
  for (std::int64_t order = 0; at;) {
    if (examined_ >= stop) return false;
    if (step != 0) {
      if (auto moved = move(at, step, scope); !moved) return pass(moved);
      continue;
    }
    step = 1;
    if (at->rkey == *r_.root_rkey) {  // the root inside its own subtree (a cycle)
      step = 2;
      continue;
    }
    counted();
    const SearchDoc doc = at->doc(asks_created_);
    if (!matcher_.matches(doc)) continue;
    if (r_.sort == SearchSort::kOutline) {
      found.push_back({at->rowid, order++, 0});
    } else if (r_.sort == SearchSort::kRelevance && expression_) {
      found.push_back({at->rowid, -matcher_.score(doc).score, -at->rowid});
    } else {  // recent, and filters alone by relevance (as their long way)
      found.push_back({at->rowid, -at->change_seq, 0});
    }
  }
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    return std::tie(a.first, a.second) < std::tie(b.first, b.second);
  });
  std::size_t i = static_cast<std::size_t>(std::min<std::int64_t>(offset, std::ssize(found)));
  for (; i < found.size() && !full(); ++i) {
    auto c = load(kCandidateByRowid, found[i].rowid);
    if (!c) return pass(c);
    if (!*c) continue;
    auto added = add(**c);
    if (!added) return pass(added);
    if (!*added) break;
  }
  if (i < found.size()) set_cursor('s', static_cast<std::int64_t>(i));
  return true;
}

Result<void> SearchRun::windows(char kind, std::int64_t upper, std::int64_t offset,
                                const std::vector<std::int64_t>& listed) {
  struct Found {
    Candidate c;
    std::int64_t score = 0;
  };
  std::vector<Found> found;
  bool exhausted = true;
  std::int64_t low = upper;
  // The window's own rows, counted from here: every page of it reads the
  // same candidates, whatever the page spent before.
  limit_rows_ = examined_ + window_rows(r_.budget_rows);
  {
    // The next candidate below `upper` and where the window is at with it
    // (its rowid; its change for 'v'): for 'w', the matches newest first,
    // those the run listed already, then the index's from below the last of
    // them (asked only if needed), each row read; for 'v', the repo's nodes
    // by change. A match whose row is gone has no candidate.
    struct Next {
      std::int64_t at = 0;
      std::optional<Candidate> c;
    };
    std::size_t next_listed = 0;
    std::optional<StatementRef> stmt;
    auto next = [&]() -> Result<std::optional<Next>> {
      std::int64_t rowid = 0;
      if (kind == 'w' && next_listed < listed.size()) {
        rowid = listed[next_listed++];
      } else {
        if (!stmt && kind == 'w') {
          auto prepared = db_.prepare(kMatchesDown);
          if (!prepared) return pass(prepared);
          (*prepared)->bind_view(1, *expression_).bind(2, listed.empty() ? upper : listed.back());
          stmt.emplace(std::move(*prepared));
        } else if (!stmt) {
          auto prepared = db_.prepare(kByChange);
          if (!prepared) return pass(prepared);
          (*prepared)->bind_view(1, r_.did).bind(2, upper);
          stmt.emplace(std::move(*prepared));
        }
        auto row = (*stmt)->step();
        if (!row) return pass(row);
        if (!*row) return std::optional<Next>();
        if (kind == 'v') {
          Candidate c = read_candidate(**stmt);
          const std::int64_t at = c.change_seq;
          return std::optional<Next>(Next{at, std::move(c)});
        }
        rowid = (*stmt)->integer(0);
      }
      auto c = load(kCandidateByRowid, rowid);
      if (!c) return pass(c);
      return std::optional<Next>(Next{rowid, std::move(*c)});
    };
    while (true) {
      if (spent() && low != upper) {
        exhausted = false;
        break;
      }
      auto got = next();
      if (!got) return pass(got);
      if (!*got) break;
      // Counted whether listed or not: a window ends at the same row
      // whichever page reads it.
      counted();
      if ((*got)->c) {
        must_finish_ = low == upper;
        auto want = wanted(*(*got)->c, kind == 'w', true);
        must_finish_ = false;
        if (!want) return pass(want);
        if (!*want) {  // the budget ran out: the window ends before it
          exhausted = false;
          break;
        }
        if (*want && **want) found.push_back({std::move(*(*got)->c), 0});
      }
      low = (*got)->at;
    }
  }
  for (auto& f : found) f.score = matcher_.score(f.c.doc()).score;
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    return a.score != b.score ? a.score > b.score : a.c.rowid > b.c.rowid;
  });
  std::vector<const Candidate*> sorted;
  for (const auto& f : found) sorted.push_back(&f.c);
  auto taken = add_from(sorted, offset);
  if (!taken) return pass(taken);
  const std::size_t at = *taken;
  if (at < found.size()) {
    set_cursor(kind, upper, static_cast<std::int64_t>(at));
  } else if (!exhausted) {
    set_cursor(kind, low, 0);
    page_->budget_cut = true;
  }
  return {};
}

}  // namespace bulleted::schema::search
