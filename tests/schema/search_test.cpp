// Search over a real index file (schema/reader_search.cpp, search_index.cpp):
// the index kept through every write of the rows (creates, updates, moves,
// deletes, repo deletion), checked by `check`, built by schema 12's
// migration; scopes, hidden repos, the three sorts, pages that neither skip
// nor repeat whatever the budget and whatever other repos do, cursors of
// another search refused, tags, and hostile outlines (cycles, a 10,000-level
// chain) that stay bounded.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "schema/search_index.hpp"
#include "schema/store.hpp"
#include "tests/support/index_fixture.hpp"
#include "tests/support/store_fixtures.hpp"
#include "tests/support/store_internals.hpp"

namespace bulleted::schema {
namespace {

constexpr const char* kAlice = "did:plc:alice";
constexpr const char* kBob = "did:plc:bob";

struct Spec {
  std::string did = kAlice;
  std::string rkey;
  std::optional<std::string> parent;
  std::string key = "a0";
  std::string text;
  std::optional<std::string> note;
  bool completed = false;
  std::uint64_t rev = 1;
};

RecordOp op_of(const Spec& spec) {
  testing::NodeSpec base;
  base.did = spec.did;
  base.rkey = spec.rkey;
  base.parent_rkey = spec.parent;
  base.sort_key = spec.key;
  base.text = spec.text;
  base.rev = spec.rev;
  RecordOp op = testing::upsert(base);
  op.record->note = spec.note;
  op.record->completed = spec.completed;
  if (spec.rev > 1) op.kind = OpKind::kUpdate;
  return op;
}

// Sibling keys that sort by n.
std::string key_of(int n) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "a0%04dV", n);
  return buf;
}

class SearchTest : public testing::IndexTest {
 protected:
  void put(const Spec& spec) { apply({op_of(spec)}); }
  bool index_matches() {
    auto report = store_->integrity_report();
    EXPECT_TRUE(report.has_value()) << report.error().message;
    return report && report->search_index_ok;
  }
  Result<SearchPage> page(std::string_view q, SearchSort sort = SearchSort::kRelevance,
                          std::optional<std::string> root = std::nullopt,
                          std::optional<std::string> cursor = std::nullopt, int limit = 25,
                          std::size_t budget = 20'000, std::string did = kAlice) {
    auto query = parse_search_query(q);
    EXPECT_TRUE(query.has_value()) << q;
    SearchRequest request;
    request.did = did;
    request.q = std::string(q);
    request.query = *query;
    request.root_rkey = std::move(root);
    request.sort = sort;
    request.limit = limit;
    request.cursor = std::move(cursor);
    request.budget_rows = budget;
    request.now_ms = 4'000'000'000'000;
    return store_->read().search(request);
  }
  std::vector<std::string> found(std::string_view q, SearchSort sort = SearchSort::kRelevance,
                                 std::optional<std::string> root = std::nullopt) {
    auto result = page(q, sort, root, std::nullopt, 100);
    EXPECT_TRUE(result.has_value()) << result.error().message;
    std::vector<std::string> out;
    if (!result) return out;
    for (const auto& r : result->results) out.push_back(r.node.rkey);
    EXPECT_FALSE(result->cursor.has_value());
    if (sort == SearchSort::kRelevance) std::sort(out.begin(), out.end());
    return out;
  }
  // Every page of a search until no cursor: the rkeys in order.
  std::vector<std::string> all_pages(std::string_view q, SearchSort sort, std::size_t budget,
                                     int limit, std::optional<std::string> root = std::nullopt,
                                     const std::function<void()>& between = {}) {
    std::vector<std::string> out;
    std::optional<std::string> cursor;
    for (int pages = 0; pages < 10'000; ++pages) {
      auto result = page(q, sort, root, cursor, limit, budget);
      EXPECT_TRUE(result.has_value()) << result.error().message;
      if (!result) break;
      EXPECT_LE(result->results.size(), static_cast<std::size_t>(limit));
      for (const auto& r : result->results) out.push_back(r.node.rkey);
      if (!result->cursor) return out;
      EXPECT_LE(result->cursor->size(), kMaxSearchCursorBytes);
      cursor = result->cursor;
      if (between) between();
    }
    ADD_FAILURE() << "no end of pages";
    return out;
  }
};

TEST_F(SearchTest, TheIndexFollowsCreatesUpdatesMovesAndDeletes) {
  put({.rkey = "p", .text = "Project plans"});
  put({.rkey = "a", .parent = "p", .text = "Buy coffee", .note = "at the Café #errand"});
  put({.rkey = "b", .parent = "p", .key = "a1", .text = "call mom", .completed = true});
  EXPECT_EQ(found("cafe"), (std::vector<std::string>{"a"}));
  EXPECT_EQ(found("#errand"), (std::vector<std::string>{"a"}));
  EXPECT_EQ(found("is:completed"), (std::vector<std::string>{"b"}));
  EXPECT_TRUE(index_matches());
  // An update is found by its new words only.
  put({.rkey = "a", .parent = "p", .text = "Buy tea", .rev = 2});
  EXPECT_EQ(found("coffee"), std::vector<std::string>{});
  EXPECT_EQ(found("cafe"), std::vector<std::string>{});
  EXPECT_EQ(found("tea"), (std::vector<std::string>{"a"}));
  // A move keeps the words.
  put({.rkey = "a", .text = "Buy tea", .rev = 3});
  EXPECT_EQ(found("tea"), (std::vector<std::string>{"a"}));
  EXPECT_EQ(found("tea", SearchSort::kRelevance, "p"), std::vector<std::string>{});
  EXPECT_TRUE(index_matches());
  apply({testing::remove(kAlice, "a", 4)});
  EXPECT_EQ(found("tea"), std::vector<std::string>{});
  EXPECT_TRUE(index_matches());
}

// One batch touching rows out of rowid order, several times each (the
// index's rows are written at the batch's end, in rowid order, each row's
// changes folded): the index holds the batch's last word on every row.
TEST_F(SearchTest, OneBatchOfScatteredRepeatedEditsLeavesTheIndexAsTheRowsSay) {
  apply({op_of({.rkey = "a", .text = "alpha first"}),
         op_of({.rkey = "b", .key = "a1", .text = "bravo first"}),
         op_of({.rkey = "c", .key = "a2", .text = "charlie first"}),
         op_of({.rkey = "d", .key = "a3", .text = "delta first"})});
  apply({// c edited twice, a moved (same words), b edited then moved back,
         // d deleted, e created then edited, a edited last
         op_of({.rkey = "c", .key = "a2", .text = "charlie second", .rev = 2}),
         op_of({.rkey = "a", .parent = "b", .text = "alpha first", .rev = 2}),
         op_of({.rkey = "b", .key = "a1", .text = "bravo second", .rev = 2}),
         op_of({.rkey = "c", .key = "a2", .text = "charlie third", .rev = 3}),
         testing::remove(kAlice, "d", 2), op_of({.rkey = "e", .key = "a4", .text = "echo first"}),
         op_of({.rkey = "b", .key = "a1", .text = "bravo first", .rev = 3}),
         op_of({.rkey = "e", .key = "a4", .text = "echo second", .rev = 2}),
         op_of({.rkey = "a", .parent = "b", .text = "alpha third", .rev = 3})});
  EXPECT_TRUE(index_matches());
  EXPECT_EQ(found("first"), (std::vector<std::string>{"b"}));
  EXPECT_EQ(found("second"), (std::vector<std::string>{"e"}));
  EXPECT_EQ(found("third"), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(found("delta"), std::vector<std::string>{});
  EXPECT_EQ(found("alpha", SearchSort::kRelevance, "b"), (std::vector<std::string>{"a"}));
}

TEST_F(SearchTest, ARepoFirstSeenWithADeleteThenACreateInOneBatchIsIndexed) {
  apply({testing::remove(kBob, "never", 1),
         op_of({.did = kBob, .rkey = "a", .text = "first words"})});
  auto page =
      this->page("first", SearchSort::kRelevance, std::nullopt, std::nullopt, 25, 20'000, kBob);
  ASSERT_TRUE(page.has_value());
  ASSERT_EQ(page->results.size(), 1u);
  EXPECT_TRUE(index_matches());
}

TEST_F(SearchTest, ARepoDeletedLeavesNothingAndAHiddenOneIsHiddenOnly) {
  put({.rkey = "a", .text = "shared word #tag"});
  put({.did = kBob, .rkey = "a", .text = "shared word #tag"});
  ASSERT_TRUE(store_->set_repo_status(kBob, RepoStatus::kTakendown).has_value());
  EXPECT_EQ(found("shared"), (std::vector<std::string>{"a"}));
  auto hidden =
      page("shared", SearchSort::kRelevance, std::nullopt, std::nullopt, 25, 20'000, kBob);
  ASSERT_TRUE(hidden.has_value());
  EXPECT_TRUE(hidden->results.empty());
  auto tags = store_->read().tags(kBob, "", 10);
  ASSERT_TRUE(tags.has_value());
  EXPECT_TRUE(tags->empty());
  ASSERT_TRUE(store_->set_repo_status(kBob, RepoStatus::kActive).has_value());
  auto back = page("shared", SearchSort::kRelevance, std::nullopt, std::nullopt, 25, 20'000, kBob);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->results.size(), 1u);
  ASSERT_TRUE(store_->set_repo_status(kBob, RepoStatus::kDeleted).has_value());
  EXPECT_TRUE(index_matches());
  auto gone = page("shared", SearchSort::kRelevance, std::nullopt, std::nullopt, 25, 20'000, kBob);
  ASSERT_TRUE(gone.has_value());
  EXPECT_TRUE(gone->results.empty());
  EXPECT_EQ(found("shared"), (std::vector<std::string>{"a"}));
}

TEST_F(SearchTest, TagsAreCountedOncePerNodeMostUsedFirst) {
  put({.rkey = "a", .text = "#Work and #work", .note = "@alice #home"});
  put({.rkey = "b", .key = "a1", .text = "#work again"});
  put({.rkey = "c", .key = "a2", .text = "#worm @alice"});
  auto tags = store_->read().tags(kAlice, "", 10);
  ASSERT_TRUE(tags.has_value());
  std::vector<std::pair<std::string, std::int64_t>> got;
  for (const auto& t : *tags) got.emplace_back(t.tag, t.count);
  EXPECT_EQ(got, (std::vector<std::pair<std::string, std::int64_t>>{
                     {"#work", 2}, {"@alice", 2}, {"#home", 1}, {"#worm", 1}}));
  auto prefixed = store_->read().tags(kAlice, "#WO", 10);
  ASSERT_TRUE(prefixed.has_value());
  ASSERT_EQ(prefixed->size(), 2u);
  EXPECT_EQ((*prefixed)[0].tag, "#work");
  put({.rkey = "b", .key = "a1", .text = "no tags now", .rev = 2});
  apply({testing::remove(kAlice, "c", 3)});
  auto after = store_->read().tags(kAlice, "", 10);
  ASSERT_TRUE(after.has_value());
  got.clear();
  for (const auto& t : *after) got.emplace_back(t.tag, t.count);
  EXPECT_EQ(got, (std::vector<std::pair<std::string, std::int64_t>>{
                     {"#home", 1}, {"#work", 1}, {"@alice", 1}}));
  EXPECT_TRUE(index_matches());
}

TEST_F(SearchTest, ARootScopesToItsDescendantsAfterMoves) {
  put({.rkey = "r", .text = "root word"});
  put({.rkey = "c", .parent = "r", .text = "child word"});
  put({.rkey = "g", .parent = "c", .text = "grandchild word"});
  put({.rkey = "o", .key = "a1", .text = "outside word"});
  EXPECT_EQ(found("word", SearchSort::kRelevance, "r"), (std::vector<std::string>{"c", "g"}));
  EXPECT_EQ(found("word", SearchSort::kOutline, "r"), (std::vector<std::string>{"c", "g"}));
  put({.rkey = "c", .key = "a2", .text = "child word", .rev = 2});  // out of r
  EXPECT_EQ(found("word", SearchSort::kRelevance, "r"), std::vector<std::string>{});
  EXPECT_EQ(found("word", SearchSort::kRecent, "c"), (std::vector<std::string>{"g"}));
  auto missing = page("word", SearchSort::kRelevance, "nope");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
}

TEST_F(SearchTest, ResultsCarryAncestorsAndHighlights) {
  put({.rkey = "p", .text = std::string(300, 'x') + " top"});
  put({.rkey = "c", .parent = "p", .text = "Mid"});
  put({.rkey = "n", .parent = "c", .text = "find Café here", .note = "café"});
  auto result = page("cafe");
  ASSERT_TRUE(result.has_value());
  ASSERT_EQ(result->results.size(), 1u);
  const auto& hit = result->results[0];
  ASSERT_EQ(hit.ancestors.size(), 2u);
  EXPECT_EQ(hit.ancestors[0].rkey, "p");
  EXPECT_EQ(hit.ancestors[0].text.size(), kMaxAncestorTextBytes);
  EXPECT_EQ(hit.ancestors[1].text, "Mid");
  EXPECT_FALSE(hit.ancestors_truncated);
  ASSERT_EQ(hit.highlights.size(), 2u);
  EXPECT_EQ(hit.highlights[0], (MatchRange{false, 5, 10}));
  EXPECT_EQ(hit.highlights[1], (MatchRange{true, 0, 5}));
  // created: reads the record's createdAt (2026-11-30; "now" is 2096).
  EXPECT_EQ(found("cafe created:100000w"), (std::vector<std::string>{"n"}));
  EXPECT_EQ(found("cafe created:1w"), std::vector<std::string>{});
}

// 120 matching nodes in three levels, and as many in another repo.
class SearchPagesTest : public SearchTest {
 protected:
  void SetUp() override {
    SearchTest::SetUp();
    std::vector<RecordOp> ops;
    int n = 0;
    for (int top = 0; top < 4; ++top) {
      const std::string t = "t" + std::to_string(top);
      ops.push_back(op_of({.rkey = t, .key = key_of(9 - top), .text = "apple top " + t}));
      reading_.push_back(t);
      for (int mid = 0; mid < 5; ++mid) {
        const std::string m = t + "m" + std::to_string(mid);
        ops.push_back(op_of({.rkey = m, .parent = t, .key = key_of(5 - mid), .text = "apple mid"}));
        reading_.push_back(m);
        for (int leaf = 0; leaf < 5; ++leaf) {
          const std::string l = m + "l" + std::to_string(leaf);
          const bool pear = ++n % 3 == 0;
          ops.push_back(op_of({.rkey = l,
                               .parent = m,
                               .key = key_of(leaf),
                               .text = pear ? "pear leaf" : "apple leaf"}));
          if (!pear) reading_.push_back(l);
        }
      }
    }
    apply(std::move(ops));
    other_repo(0);
  }
  void other_repo(int round) {
    std::vector<RecordOp> ops;
    for (int i = 0; i < 60; ++i) {
      ops.push_back(op_of({.did = kBob,
                           .rkey = "x" + std::to_string(round) + "_" + std::to_string(i),
                           .key = key_of(i),
                           .text = "apple from bob"}));
    }
    apply(std::move(ops));
  }
  std::vector<std::string> reading_;
};

TEST_F(SearchPagesTest, EverySortPagesWithoutSkipOrRepeatAtAnyBudget) {
  const auto complete_recent = all_pages("apple", SearchSort::kRecent, 20'000, 7);
  const auto complete_outline = all_pages("apple", SearchSort::kOutline, 20'000, 7);
  const auto complete_relevance = all_pages("apple", SearchSort::kRelevance, 20'000, 7);
  const std::set<std::string> expected(reading_.begin(), reading_.end());
  for (const auto* got : {&complete_recent, &complete_outline, &complete_relevance}) {
    EXPECT_EQ(got->size(), expected.size());
    EXPECT_EQ(std::set<std::string>(got->begin(), got->end()), expected);
  }
  // Recent: newest first, the reverse of the writes.
  std::vector<std::string> newest_first(reading_.rbegin(), reading_.rend());
  EXPECT_EQ(complete_recent, newest_first);
  // Outline: depth first, siblings by key (t3 first: its key is lowest).
  std::vector<std::string> outline;
  for (int top = 3; top >= 0; --top) {
    const std::string t = "t" + std::to_string(top);
    outline.push_back(t);
    for (int mid = 4; mid >= 0; --mid) {
      const std::string m = t + "m" + std::to_string(mid);
      outline.push_back(m);
      for (int leaf = 0; leaf < 5; ++leaf) {
        const std::string l = m + "l" + std::to_string(leaf);
        if (expected.contains(l)) outline.push_back(l);
      }
    }
  }
  EXPECT_EQ(complete_outline, outline);
  // Small budgets take the long ways: the same order for recent and
  // outline, the same set for relevance, never a repeat; other repos'
  // writes between pages change nothing.
  int round = 1;
  auto bob_writes = [&] { other_repo(round++); };
  for (const std::size_t budget : {3u, 40u, 150u}) {
    EXPECT_EQ(all_pages("apple", SearchSort::kRecent, budget, 7, std::nullopt, bob_writes),
              newest_first)
        << budget;
    EXPECT_EQ(all_pages("apple", SearchSort::kOutline, budget, 7, std::nullopt, bob_writes),
              outline)
        << budget;
    const auto relevance =
        all_pages("apple", SearchSort::kRelevance, budget, 7, std::nullopt, bob_writes);
    EXPECT_EQ(relevance.size(), expected.size()) << budget;
    EXPECT_EQ(std::set<std::string>(relevance.begin(), relevance.end()), expected) << budget;
  }
  // Filters alone walk too.
  const auto completed_none = all_pages("is:completed", SearchSort::kRelevance, 50, 7);
  EXPECT_TRUE(completed_none.empty());
}

// Recent order over few candidates far apart in the change index: the walk
// down the index gives up on them (at most 100 entries a candidate) and the
// rest are read and sorted; pages of one cross from the one way to the
// other without a skip or a repeat, whatever the budget.
TEST_F(SearchTest, RecentPagesOverSparseCandidatesNeitherSkipNorRepeat) {
  std::vector<RecordOp> ops;
  ops.push_back(op_of({.rkey = "old1", .text = "needle one"}));
  ops.push_back(op_of({.rkey = "old2", .key = key_of(1), .text = "needle two"}));
  for (int i = 0; i < 700; ++i) {
    ops.push_back(op_of({.rkey = "h" + std::to_string(i), .key = key_of(2), .text = "hay"}));
  }
  ops.push_back(op_of({.rkey = "new", .key = key_of(3), .text = "needle three"}));
  apply(std::move(ops));
  const std::vector<std::string> newest_first{"new", "old2", "old1"};
  EXPECT_EQ(all_pages("needle", SearchSort::kRecent, 20'000, 1), newest_first);
  EXPECT_EQ(all_pages("needle", SearchSort::kRecent, 20'000, 25), newest_first);
  for (const std::size_t budget : {2u, 8u, 40u}) {
    EXPECT_EQ(all_pages("needle", SearchSort::kRecent, budget, 1), newest_first) << budget;
  }
  // Filters the index does not answer still apply.
  EXPECT_EQ(all_pages("needle -two", SearchSort::kRecent, 20'000, 1),
            (std::vector<std::string>{"new", "old1"}));
}

// A common word searched in a small zoomed bullet: too many matches in the
// repo to read whole at this budget, so the root's subtree is read instead
// and every sort answers it whole, page after page, without a cut. A
// zoomed bullet too large for that takes the long way, in the same order.
TEST_F(SearchTest, ACommonWordInASmallZoomedBulletIsAnsweredFromItsSubtree) {
  std::vector<RecordOp> ops;
  ops.push_back(op_of({.rkey = "big", .key = key_of(2), .text = "folder"}));
  std::vector<std::string> big;
  for (int i = 0; i < 400; ++i) {
    big.push_back("o" + std::to_string(1000 + i));
    ops.push_back(op_of({.rkey = big.back(), .parent = "big", .key = key_of(i), .text = "common"}));
  }
  ops.push_back(op_of({.rkey = "z", .key = key_of(1), .text = "zoomed common"}));
  std::vector<std::string> reading;
  for (int s = 0; s < 3; ++s) {
    const std::string section = "s" + std::to_string(s);
    ops.push_back(op_of({.rkey = section, .parent = "z", .key = key_of(s), .text = "section"}));
    for (int l = 0; l < 4; ++l) {
      const std::string leaf = section + "l" + std::to_string(l);
      ops.push_back(op_of({.rkey = leaf,
                           .parent = section,
                           .key = key_of(l),
                           .text = l % 2 ? "other" : "common",
                           .completed = l == 0}));
      if (l % 2 == 0) reading.push_back(leaf);
    }
  }
  apply(std::move(ops));
  const std::vector<std::string> newest_first(reading.rbegin(), reading.rend());
  const std::set<std::string> as_set(reading.begin(), reading.end());
  for (const auto sort : {SearchSort::kRelevance, SearchSort::kOutline, SearchSort::kRecent}) {
    auto whole = page("common", sort, std::string("z"), std::nullopt, 25, 200);
    ASSERT_TRUE(whole.has_value()) << whole.error().message;
    EXPECT_FALSE(whole->budget_cut) << to_string(sort);
    EXPECT_FALSE(whole->cursor.has_value()) << to_string(sort);
    EXPECT_EQ(whole->results.size(), reading.size()) << to_string(sort);
  }
  EXPECT_EQ(all_pages("common", SearchSort::kOutline, 200, 2, "z"), reading);
  EXPECT_EQ(all_pages("common", SearchSort::kRecent, 200, 2, "z"), newest_first);
  const auto relevance = all_pages("common", SearchSort::kRelevance, 200, 2, "z");
  EXPECT_EQ(relevance.size(), reading.size());
  EXPECT_EQ(std::set<std::string>(relevance.begin(), relevance.end()), as_set);
  // Filters alone: by relevance as their long way has them, last changed
  // first.
  put({.rkey = "s0l0",
       .parent = "s0",
       .key = key_of(0),
       .text = "common",
       .completed = true,
       .rev = 2});
  EXPECT_EQ(all_pages("is:completed", SearchSort::kRelevance, 200, 2, "z"),
            (std::vector<std::string>{"s0l0", "s2l0", "s1l0"}));
  // A zoom that grows past the walk between pages starts over the long way
  // and still reaches every match.
  auto first = page("is:completed", SearchSort::kRelevance, std::string("z"), std::nullopt, 1, 200);
  ASSERT_TRUE(first.has_value() && first->cursor.has_value());
  std::vector<RecordOp> growth;
  for (int i = 0; i < 150; ++i) {
    growth.push_back(op_of({.rkey = "g" + std::to_string(i), .parent = "z", .text = "growth"}));
  }
  apply(std::move(growth));
  std::set<std::string> after;
  for (auto cursor = first->cursor; cursor;) {
    auto next = page("is:completed", SearchSort::kRelevance, std::string("z"), cursor, 1, 200);
    ASSERT_TRUE(next.has_value()) << next.error().message;
    for (const auto& r : next->results) after.insert(r.node.rkey);
    cursor = next->cursor;
  }
  EXPECT_EQ(after, (std::set<std::string>{"s0l0", "s2l0", "s1l0"}));
  EXPECT_EQ(all_pages("common", SearchSort::kOutline, 200, 7, "big"), big);
  EXPECT_EQ(all_pages("common", SearchSort::kRecent, 200, 7, "big"),
            std::vector<std::string>(big.rbegin(), big.rend()));
  EXPECT_EQ(all_pages("common", SearchSort::kRelevance, 200, 7, "big").size(), big.size());
}

TEST_F(SearchPagesTest, ACursorContinuesOnlyItsOwnSearch) {
  auto first = page("apple", SearchSort::kRecent, std::nullopt, std::nullopt, 5);
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(first->cursor.has_value());
  for (const auto& [q, sort, root] :
       {std::tuple<std::string, SearchSort, std::optional<std::string>>{"pear", SearchSort::kRecent,
                                                                        std::nullopt},
        {"apple", SearchSort::kOutline, std::nullopt},
        {"apple", SearchSort::kRecent, std::string("t1")}}) {
    auto other = page(q, sort, root, first->cursor, 5);
    ASSERT_FALSE(other.has_value());
    EXPECT_EQ(other.error().code, ErrorCode::kInvalidRequest);
  }
  for (const char* garbage : {"", "!!!", "Yy4wLjAuMC4x", "dC45OTkuMC4wLjEyMw"}) {
    auto refused = page("apple", SearchSort::kRecent, std::nullopt, std::string(garbage), 5);
    ASSERT_FALSE(refused.has_value()) << garbage;
    EXPECT_EQ(refused.error().code, ErrorCode::kInvalidRequest);
  }
}

TEST_F(SearchTest, CyclesAndUnattachedNodesComeLastInOutlineAndRootsInCyclesEnd) {
  put({.rkey = "top", .text = "word top"});
  put({.rkey = "ca", .parent = "cb", .text = "word a"});
  put({.rkey = "cb", .parent = "ca", .text = "word b"});
  put({.rkey = "dangling", .parent = "missing", .text = "word dangling"});
  for (const std::size_t budget : {2u, 20u, 20'000u}) {  // 20: the zoom's subtree walked
    EXPECT_EQ(all_pages("word", SearchSort::kOutline, budget, 2),
              (std::vector<std::string>{"top", "ca", "cb", "dangling"}))
        << budget;
    EXPECT_EQ(all_pages("word", SearchSort::kOutline, budget, 2, "ca"),
              (std::vector<std::string>{"cb"}))
        << budget;
    const auto relevance = all_pages("word", SearchSort::kRelevance, budget, 2, "ca");
    EXPECT_EQ(relevance, (std::vector<std::string>{"cb"})) << budget;
  }
}

// Outline order over many candidates: when they are dense the first page
// is found by walking the outline in reading order (few rows read), when
// they are sparse or far down the candidates are placed whole; both give
// the same pages, and a search crosses from one to the other between pages
// without a skip or a repeat, at any budget, with nodes that have no
// reading position last.
TEST_F(SearchTest, OutlineOrderWalksToDenseCandidatesAndPlacesSparseOnes) {
  std::vector<RecordOp> ops;
  std::vector<std::string> dense, sparse;
  for (int s = 0; s < 8; ++s) {
    const std::string section = "s" + std::to_string(s);
    ops.push_back(op_of({.rkey = section, .key = key_of(s), .text = "section"}));
    for (int i = 0; i < 100; ++i) {
      const std::string leaf = section + "_" + std::to_string(1000 + i);
      const bool is_dense = i % 4 == 0;
      const bool is_sparse = s == 7 && i >= 70;
      ops.push_back(op_of(
          {.rkey = leaf,
           .parent = section,
           .key = key_of(i),
           .text = std::string(is_dense ? "dense " : "") + (is_sparse ? "sparse" : "filler")}));
      if (is_dense) dense.push_back(leaf);
      if (is_sparse) sparse.push_back(leaf);
    }
  }
  // Matches with no reading position: a cycle and a dangling node.
  ops.push_back(op_of({.rkey = "zc1", .parent = "zc2", .text = "dense sparse"}));
  ops.push_back(op_of({.rkey = "zc2", .parent = "zc1", .text = "dense sparse"}));
  ops.push_back(op_of({.rkey = "zd", .parent = "missing", .text = "dense sparse"}));
  apply(std::move(ops));
  for (auto* list : {&dense, &sparse}) list->insert(list->end(), {"zc1", "zc2", "zd"});

  // 203 candidates, the page's 5 in the first 20 nodes: the walk reads 5
  // rows (the index's 203 matches are counted too); placing them all
  // would read every one.
  auto first = page("dense", SearchSort::kOutline, std::nullopt, std::nullopt, 5);
  ASSERT_TRUE(first.has_value()) << first.error().message;
  std::vector<std::string> got;
  for (const auto& r : first->results) got.push_back(r.node.rkey);
  EXPECT_EQ(got, std::vector<std::string>(dense.begin(), dense.begin() + 5));
  EXPECT_LT(first->rows_examined, dense.size() + 50);
  ASSERT_EQ(first->results.size(), 5u);
  EXPECT_EQ(first->results[0].ancestors.size(), 1u);
  EXPECT_FALSE(first->results[0].highlights.empty());
  // 33 candidates after 770 nodes without one: the walk gives way (its
  // steps not counted) and they are placed whole.
  auto far = page("sparse", SearchSort::kOutline, std::nullopt, std::nullopt, 5);
  ASSERT_TRUE(far.has_value()) << far.error().message;
  // Each candidate's index row and node, and a few ancestors (s7, the
  // missing parent): nothing of the walk that gave way.
  EXPECT_GE(far->rows_examined, 2 * sparse.size());
  EXPECT_LE(far->rows_examined, 2 * sparse.size() + 8);
  got.clear();
  for (const auto& r : far->results) got.push_back(r.node.rkey);
  EXPECT_EQ(got, std::vector<std::string>(sparse.begin(), sparse.begin() + 5));

  for (const std::size_t budget : {20'000u, 400u, 60u}) {
    for (const int limit : {1, 5, 25}) {
      EXPECT_EQ(all_pages("dense", SearchSort::kOutline, budget, limit), dense)
          << budget << " " << limit;
      EXPECT_EQ(all_pages("sparse", SearchSort::kOutline, budget, limit), sparse)
          << budget << " " << limit;
    }
  }
  // Zoomed: the section's own matches, in its order, whatever the way.
  EXPECT_EQ(all_pages("dense", SearchSort::kOutline, 20'000, 5, "s7"),
            std::vector<std::string>(dense.begin() + 175, dense.begin() + 200));
  EXPECT_EQ(all_pages("sparse", SearchSort::kOutline, 20'000, 5, "s7"),
            std::vector<std::string>(sparse.begin(), sparse.begin() + 30));
  // Zoomed into a bullet of a cycle: the other one, and the walk stops at
  // the root met again below it.
  EXPECT_EQ(all_pages("dense", SearchSort::kOutline, 20'000, 1, "zc1"),
            std::vector<std::string>{"zc2"});
}

// The walk in reading order down a chain deeper than it reads ahead (each
// level read one entry at a time below 64), with a second child at every
// level: every match in reading order, page after page.
TEST_F(SearchTest, OutlineOrderWalksADeepChainWithASecondChildAtEveryLevel) {
  std::vector<RecordOp> ops;
  std::vector<std::string> chain, leaves;
  for (int i = 0; i < 300; ++i) {
    chain.push_back("c" + std::to_string(1000 + i));
    std::optional<std::string> parent;
    if (i > 0) parent = chain[i - 1];
    ops.push_back(
        op_of({.rkey = chain.back(), .parent = parent, .key = key_of(0), .text = "deep"}));
    if (i > 0) {
      leaves.push_back("l" + std::to_string(1000 + i));
      ops.push_back(
          op_of({.rkey = leaves.back(), .parent = parent, .key = key_of(1), .text = "deep"}));
    }
  }
  apply(std::move(ops));
  std::vector<std::string> reading = chain;
  reading.insert(reading.end(), leaves.rbegin(), leaves.rend());
  for (const std::size_t budget : {20'000u, 700u}) {
    EXPECT_EQ(all_pages("deep", SearchSort::kOutline, budget, 5), reading) << budget;
  }
  auto first = page("deep", SearchSort::kOutline, std::nullopt, std::nullopt, 5);
  ASSERT_TRUE(first.has_value()) << first.error().message;
  EXPECT_LT(first->rows_examined, reading.size() + 50);  // walked, not placed
}

TEST_F(SearchTest, ATenThousandLevelChainStaysBoundedPerPage) {
  std::vector<RecordOp> ops;
  ops.push_back(op_of({.rkey = "n0", .text = "start"}));
  for (int i = 1; i < 10'000; ++i) {
    ops.push_back(op_of({.rkey = "n" + std::to_string(i),
                         .parent = "n" + std::to_string(i - 1),
                         .text = i % 100 == 0 ? "deep needle" : "level"}));
  }
  apply(std::move(ops));
  for (const auto sort : {SearchSort::kRelevance, SearchSort::kOutline, SearchSort::kRecent}) {
    std::optional<std::string> cursor;
    std::size_t total = 0;
    int pages = 0;
    do {
      auto result = page("needle", sort, std::string("n0"), cursor, 25, 1'000);
      ASSERT_TRUE(result.has_value()) << result.error().message;
      for (const auto& hit : result->results) {
        EXPECT_EQ(hit.ancestors.size(), kMaxSearchAncestors);
        EXPECT_TRUE(hit.ancestors_truncated);
      }
      // The first candidate of a page may cost more than the budget (a
      // page always moves on); nothing else does.
      EXPECT_LE(result->rows_examined, 1'000u + 10'100u) << to_string(sort) << " page " << pages;
      total += result->results.size();
      cursor = result->cursor;
      ASSERT_LT(++pages, 2'000);
    } while (cursor);
    EXPECT_EQ(total, 99u) << to_string(sort);
  }
}

TEST_F(SearchTest, SchemaTwelveIndexesTheRowsOfAnOlderFile) {
  put({.rkey = "a", .text = "older words #kept"});
  put({.rkey = "b", .key = "a1", .text = "more words"});
  ASSERT_TRUE(testing::rewind_schema(*store_, 11).has_value());
  std::vector<MigrationProgress> steps;
  store_.reset();
  StoreOptions options;
  options.on_migration = [&](const MigrationProgress& p) { steps.push_back(p); };
  auto opened = Store::open(dir_.file("index.db"), options);
  ASSERT_TRUE(opened.has_value()) << opened.error().message;
  store_ = std::move(*opened);
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps.back().version, 12);
  EXPECT_TRUE(steps.back().finished);
  EXPECT_EQ(steps.back().total, 2);
  EXPECT_EQ(found("words"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(found("#kept"), (std::vector<std::string>{"a"}));
  // Rows indexed before the column never match changed:.
  EXPECT_EQ(found("words changed:1000w"), std::vector<std::string>{});
  EXPECT_TRUE(index_matches());
}

TEST_F(SearchTest, CheckSeesAnIndexThatDiffersFromTheRows) {
  put({.rkey = "a", .text = "true words"});
  EXPECT_TRUE(index_matches());
  auto& db = testing::database_of(*store_);
  ASSERT_TRUE(
      db.exec(
            "INSERT INTO search_fts (rowid, text, note, tags) VALUES (999, 'aaaaabghost', '', '')")
          .has_value());
  EXPECT_FALSE(index_matches());
  ASSERT_TRUE(db.exec("INSERT INTO search_fts (search_fts, rowid, text, note, tags) VALUES "
                      "('delete', 999, 'aaaaabghost', '', '')")
                  .has_value());
  EXPECT_TRUE(index_matches());
  ASSERT_TRUE(db.exec("UPDATE search_tags SET n = 5").has_value());
  put({.rkey = "b", .key = "a1", .text = "#t"});
  ASSERT_TRUE(db.exec("UPDATE search_tags SET n = 5").has_value());
  EXPECT_FALSE(index_matches());
}

}  // namespace
}  // namespace bulleted::schema
