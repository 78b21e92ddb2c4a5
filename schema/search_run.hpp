// The inside of a search (schema/reader_search.cpp): one request's run
// over the index and the rows, its candidates, the places of their
// ancestors and its cursors. Internal to schema/: the Reader is its only
// user, and tests reach it through the Reader.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "schema/datetime.hpp"
#include "schema/rows.hpp"
#include "schema/search_index.hpp"
#include "schema/search_match.hpp"
#include "schema/sqlite.hpp"
#include "schema/syntax.hpp"

namespace bulleted::schema::search {

#define CANDIDATE_COLUMNS \
  "rowid, rkey, grp, sort_key, text, note, completed, created_at, change_seq, indexed_at"
inline constexpr const char* kCandidateByRowid =
    "SELECT " CANDIDATE_COLUMNS " FROM nodes WHERE rowid = ?1 AND did = ?2";
// A place is read without its text (placing reads many nodes, and few are
// the ancestors of a page's hits): the text is read by rowid when one is.
inline constexpr const char* kPlaceByKey =
    "SELECT rowid, grp, sort_key FROM nodes WHERE did = ?1 AND rkey = ?2";
inline constexpr const char* kTextByRowid = "SELECT text FROM nodes WHERE rowid = ?1";
// A candidate as sorting it in reading order needs it, when the index
// answers every clause (its text, note and times are read for the page's
// hits alone): its row's first columns.
inline constexpr const char* kPlacedByRowid =
    "SELECT rowid, rkey, grp, sort_key FROM nodes WHERE rowid = ?1 AND did = ?2";
inline constexpr const char* kMatchesDown =
    "SELECT rowid FROM search_fts WHERE search_fts MATCH ?1 AND rowid < ?2 ORDER BY rowid DESC";
// The index's matches in its own order, which FTS5 reads for less than
// the other way (an AND of two words, 625 matches: 0.85 ms against 1.2 to
// 2.0): where the order they are listed in does not matter.
inline constexpr const char* kMatchesUp =
    "SELECT rowid FROM search_fts WHERE search_fts MATCH ?1 ORDER BY rowid";
inline constexpr const char* kByChange = "SELECT " CANDIDATE_COLUMNS
                                         " FROM nodes WHERE did = ?1 AND change_seq < ?2"
                                         " ORDER BY change_seq DESC";
inline constexpr const char* kChangesDown =
    "SELECT rowid, change_seq FROM nodes WHERE did = ?1 AND change_seq < ?2"
    " ORDER BY change_seq DESC";
inline constexpr const char* kFirstChild =
    "SELECT " CANDIDATE_COLUMNS " FROM nodes WHERE grp = ?1 ORDER BY sort_key, rkey LIMIT 1";
inline constexpr const char* kNextSibling =
    "SELECT " CANDIDATE_COLUMNS
    " FROM nodes WHERE grp = ?1 AND (sort_key, rkey) > (?2, ?3)"
    " ORDER BY sort_key, rkey LIMIT 1";
// A group's entries in reading order after a place (from its start: after
// ('', '')), from the children index alone (it holds all three), each with
// whether it has children (?5: the prefix of their group).
inline constexpr const char* kChildEntries =
    "SELECT rowid, rkey, sort_key,"
    " EXISTS (SELECT 1 FROM nodes k WHERE k.grp = ?5 || c.rkey)"
    " FROM nodes c WHERE grp = ?1 AND (sort_key, rkey) > (?2, ?3)"
    " ORDER BY sort_key, rkey LIMIT ?4";
// The index's tokens from one on, one token a statement: each is a seek in
// the index's segments (about 20 us), not a read of the token's rows.
inline constexpr const char* kTokenFrom = "SELECT term FROM search_terms WHERE term >= ?1 LIMIT 1";
// What FTS5's prefix query merges before its first row: the doclists of
// every token that starts the prefix, a cost no row count sees (a one-letter
// prefix, 995,000 bullets: up to a second). A search first counts the
// prefix's instances in the index (its words in nodes), to one past this
// many, each kInstancesPerRow a row of its budget; the prefix query is asked
// when they are no more.
inline constexpr std::size_t kMaxMergedInstances = 2048;
inline constexpr std::size_t kInstancesPerRow = 64;
inline constexpr const char* kInstancesIn =
    "SELECT count(*) FROM (SELECT 1 FROM search_terms WHERE term >= ?1 AND term < ?2 LIMIT ?3)";
// A prefix of more is named as its tokens when it starts at most this many,
// all plain (each read lazily, as FTS5 reads a whole word); a search seeks
// at most this many tokens in all (16 terms could ask 272), each seek a row
// of its budget.
inline constexpr std::size_t kMaxNamedTokens = 16;
inline constexpr std::size_t kMaxTokenSeeks = 64;
// Any other (more tokens, one not plain, or the seeks run out before its
// last) is broad: never asked of the index, its clause is the matcher's,
// and a query of nothing else takes the long way without the index. A
// search with one (not a zoomed one: the repo's density says little of a
// subtree's) first holds the query against the repo's newest nodes (at most
// this many, and a quarter of the budget); when they match so densely that
// the long way would fill the page within a sixteenth of the budget, it
// walks the long way without the index (by relevance: windows of the nodes
// by change, 'v').
inline constexpr std::size_t kProbeRows = 256;
inline constexpr std::size_t kMinProbeRows = 32;
inline constexpr std::size_t kProbeShareOfBudget = 16;
inline constexpr const char* kByKeyFrom =
    "SELECT " CANDIDATE_COLUMNS " FROM nodes WHERE did = ?1 AND rkey >= ?2 ORDER BY rkey";

// Relevance reads its candidates in windows of an eighth of the budget (and
// sorts them whole when they all fit in one): each is read and scored.
inline std::size_t window_rows(std::size_t budget) { return std::max<std::size_t>(budget / 8, 1); }

inline constexpr std::int64_t kNoRow = std::numeric_limits<std::int64_t>::max();

// Recent order over a known set of candidates walks the repo's change index
// (entries of a few dozen bytes, read without their rows) and reads the
// candidates it meets. Reading a candidate's row costs about as much as
// walking this many entries (measured: 45 to 100), and counts as much of
// the budget; the walk gives way to reading the rest when, at the density
// met so far, finding the page would cost more than reading them all.
inline constexpr std::size_t kChangeEntriesPerRow = 40;

// Sorting candidates in reading order compares their paths (the sort keys
// of their ancestors, read once each and counted as rows): steps in memory,
// at most this many a row of the budget, so a hostile chain of ancestors
// cannot make the sort cost more than the budget's reads would.
inline constexpr std::size_t kPathStepsPerRow = 8;

// Outline order over a known set of candidates first walks the outline in
// reading order through the children index alone (a step: the next node in
// reading order, its entry read with its siblings', without its row) and
// reads the candidates it meets: when they are dense (a common tag) the
// page is full long before every candidate and its ancestors would have
// been read to be placed. A row read and placed costs about as much as
// this many steps (measured: docs/BENCHMARKS.md), and counts as much of
// the budget; the walk gives way to placing them all when, at the density
// met so far, finding the page would cost more than that.
inline constexpr std::size_t kWalkStepsPerRow = 4;
// Candidates placed cost their ancestors too (read once, shared by
// siblings): counted as two rows a candidate, where the search bench's
// outline takes 3.2 to 3.5, so that the walk gives way early rather than
// late.
inline constexpr std::size_t kRowsPerPlacedCandidate = 2;
// The walk is not tried when the candidates are this few a result of the
// page (placing them is cheap then).
inline constexpr std::size_t kWalkMinCandidatesPerResult = 4;
// Rows between two calls of the request's give_way: a stretch of a
// search's work is a few hundred microseconds at most.
inline constexpr std::size_t kRowsPerStretch = 32;

// A node as a search reads it: enough to filter, sort and place it.
struct Candidate {
  std::int64_t rowid = 0;
  // Read with kPlacedByRowid: only its rowid, rkey, group and sort key.
  bool partial = false;
  std::string rkey, group, sort_key, text;
  std::optional<std::string> note;
  bool completed = false;
  std::string created_at;
  std::int64_t change_seq = 0;
  std::optional<std::int64_t> indexed_at;

  // Its createdAt is parsed only when the query asks for it (created:).
  SearchDoc doc(bool with_created = false) const {
    return {text, note ? std::optional<std::string_view>(*note) : std::nullopt, completed,
            with_created ? datetime_ms(created_at) : std::nullopt, indexed_at};
  }
};

// A cursor: its kind, up to three numbers, and the search it belongs to.
struct SearchCursor {
  char kind = 0;
  std::int64_t a = 0, b = 0, c = 0;
};

// A row of CANDIDATE_COLUMNS, or of kPlacedByRowid's four (partial).
Candidate read_candidate(const Statement& stmt);
// `text` cut to at most `max` bytes at a character boundary.
std::string cut_text(std::string_view text, std::size_t max);
// What a cursor is bound to: the search's q, sort and root.
std::uint64_t search_digest(const SearchRequest& request);
std::string encode_cursor(const SearchCursor& cursor, std::uint64_t digest);
// kInvalidRequest for a cursor that is not one of this search's: bound to
// another (q, sort, root), or one it never makes (a subtree's `s` without
// a root, the unplaced nodes' `o` phase with one).
Result<SearchCursor> decode_cursor(std::string_view text, const SearchRequest& request);

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
  std::int64_t rowid = 0;
  std::optional<std::string> text;  // cut for ancestors; read when one is
  Standing standing;
};

// A node as the walk among candidates (outline_among) sees it: an entry of
// the children index.
struct WalkEntry {
  std::int64_t rowid = 0;
  std::string rkey, sort_key;
  bool parent = false;  // has children
};

// One level of that walk: the group's entries read so far, from the one the
// walk is at, and whether there may be more after them.
struct WalkLevel {
  std::string group;
  std::vector<WalkEntry> entries;
  std::size_t at = 0;
  bool more = false;
};

// Where a node stands in reading order: the (sort key, rkey) of each node
// from the top (or the root's child) down to it, viewed in the run's
// places (which keep their place while the run lasts).
using SearchPath = std::vector<std::pair<std::string_view, std::string_view>>;

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
  bool spent() const { return examined_ >= limit_rows_ && !must_finish_; }
  bool full() const { return hits_->size() >= static_cast<std::size_t>(r_.limit); }
  // One more row against the budget; every kRowsPerStretch, the request's
  // give_way.
  void counted() {
    ++examined_;
    if (++stretch_ == kRowsPerStretch) {
      stretch_ = 0;
      if (r_.give_way) r_.give_way();
    }
  }

  // The prefix tokens of the query that can be named, with their tokens
  // (search_index.hpp), within kMaxTokenSeeks; the broad ones go to broad_.
  Result<PrefixTokens> name_prefixes();
  // Whether to walk the long way without asking the index (kProbeRows).
  Result<bool> walk_first();
  Result<Place*> place(const std::string& rkey);
  // An ancestor's text, cut, read once (not counted: the page's own rows).
  Result<std::string> ancestor_text(Place& place);
  Result<Standing> standing(const std::string& rkey);
  Result<Standing> standing_of(const Candidate& c);
  // Whether the search's root is above `c` (in a cycle with it: `c` is the
  // root too), decided whatever it costs.
  Result<bool> inside_root(const Candidate& c);
  Result<std::optional<bool>> wanted(const Candidate& c, bool index_answered, bool check_scope);
  // Adds a hit; false when the answer's bytes are full (not added).
  Result<bool> add(const Candidate& c);
  // A partial candidate is read whole first (not counted: the page's own
  // rows).
  Result<std::size_t> add_from(const std::vector<const Candidate*>& sorted, std::int64_t offset);
  // A candidate by rowid (kCandidateByRowid, or kPlacedByRowid: partial).
  Result<std::optional<Candidate>> load(const char* sql, std::int64_t rowid);
  void set_cursor(char kind, std::int64_t a, std::int64_t b = 0, std::int64_t c = 0) {
    page_->cursor = encode_cursor({kind, a, b, c}, search_digest(r_));
  }

  Result<bool> complete(const std::vector<std::int64_t>& rowids, std::int64_t offset);
  // complete()'s page in outline order found by walking the outline; false
  // when the walk gave way (nothing added, nothing counted).
  Result<bool> outline_among(const std::vector<std::int64_t>& rowids, std::int64_t offset);
  Result<void> read_entries(WalkLevel& level, const WalkEntry* after, std::int64_t count);
  // A relevance window below `upper`: 'w', of the index's matches by rowid
  // (`listed`: the newest of them, when the run has read them already);
  // 'v', of the repo's nodes by change, each held against the query.
  Result<void> windows(char kind, std::int64_t upper, std::int64_t offset,
                       const std::vector<std::int64_t>& listed = {});
  Result<void> recent(std::int64_t below);
  Result<void> recent_among(const std::vector<std::int64_t>& rowids, std::int64_t below);
  // One candidate of a recent page in its turn: false when the page ends
  // with it (full, out of bytes, or the budget spent deciding it).
  Result<bool> recent_step(const Candidate& c, bool first, bool index_answered,
                           bool count_row = false);
  Result<void> outline(std::int64_t phase, std::int64_t rowid, std::int64_t step);
  Result<void> move(std::optional<Candidate>& at, std::int64_t& step, const std::string& scope);
  Result<bool> subtree(std::int64_t offset);
  Result<void> unplaced(std::int64_t rowid);
  Result<std::optional<Candidate>> first_in_group(const std::string& group);
  Result<std::optional<Candidate>> next_sibling(const Candidate& c);
  Result<std::optional<Candidate>> parent_of(const Candidate& c);
  Result<std::optional<SearchPath>> path(const Candidate& c, std::size_t& entries) const;

  Database& db_;
  const SearchRequest& r_;
  SearchMatcher matcher_;
  std::string code_;
  std::string top_group_, child_prefix_;
  std::optional<std::string> expression_;
  std::vector<bool> answered_;
  // The query's broad prefixes (prefix_key): left to the matcher, never
  // asked of the index.
  PrefixKeys broad_;
  std::unordered_map<std::string, Place> places_;
  std::size_t examined_ = 0;
  std::size_t stretch_ = 0;  // rows since give_way was last called
  // Whether a term is created: (the only one that reads createdAt).
  bool asks_created_ = std::any_of(r_.query.all.begin(), r_.query.all.end(), [](const auto& c) {
    return std::any_of(c.any.begin(), c.any.end(),
                       [](const SearchTerm& t) { return t.kind == SearchTerm::Kind::kCreated; });
  });
  // Where spent() stops: the request's budget, or a relevance window's own
  // (which must end in the same place whichever page reads it).
  std::size_t limit_rows_ = r_.budget_rows;
  bool must_finish_ = false;
  std::size_t bytes_ = 0;
  std::vector<Hit>* hits_ = nullptr;
  SearchPage* page_ = nullptr;
};

}  // namespace bulleted::schema::search
