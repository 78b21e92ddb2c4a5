// Search pages over a real index file (schema/search_run.cpp,
// search_walks.cpp): every sort's pages neither skip nor repeat whatever the
// budget and whatever other repos do, cursors of another search refused,
// the ways through a repo (recent over sparse candidates, a small zoomed
// bullet's subtree, outline order's walk to dense candidates, a prefix of
// many tokens walked when it is dense and listed when not), hostile
// outlines (cycles, a deep chain, a 10,000-level chain) that stay bounded,
// and the give-way between stretches of a search's work (its read kept).
#include "schema/search_run.hpp"
#include "tests/schema/search_fixture.hpp"

namespace bulleted::schema {
namespace {

using namespace search_testing;

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

// A cursor is bound to its search by a digest anyone can compute: every
// kind, with any numbers, in every sort, for a word, a prefix and a zoomed
// search, answers a page within its budget (its first candidate apart) or
// refuses it, and never finds a node that does not match.
TEST_F(SearchPagesTest, ForgedCursorsOfEveryKindStayBoundedAndFindOnlyMatches) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  const std::vector<std::int64_t> numbers{0, 1, 7, 124, 1LL << 40, kMax};
  for (const auto& [q, root] : {std::pair<std::string, std::optional<std::string>>{"apple", {}},
                                {"ap", {}},
                                {"apple", std::string("t1")}}) {
    for (const auto sort : {SearchSort::kRelevance, SearchSort::kOutline, SearchSort::kRecent}) {
      SearchRequest bound;
      bound.q = q;
      bound.sort = sort;
      bound.root_rkey = root;
      const std::uint64_t digest = search::search_digest(bound);
      for (const char kind : std::string("cwtosv")) {
        for (const std::int64_t a : numbers) {
          for (const std::int64_t b : {std::int64_t{0}, std::int64_t{3}, kMax}) {
            const std::string cursor = search::encode_cursor({kind, a, b, b}, digest);
            ASSERT_LE(cursor.size(), kMaxSearchCursorBytes);
            auto got = page(q, sort, root, cursor, 5, 40);
            if (!got) {
              EXPECT_EQ(got.error().code, ErrorCode::kInvalidRequest) << got.error().message;
              continue;
            }
            EXPECT_LE(got->results.size(), 5u);
            EXPECT_LE(got->rows_examined, 40u + 124u) << kind << " " << a << " " << b;
            for (const auto& hit : got->results) {
              EXPECT_TRUE(hit.node.text.starts_with("apple")) << kind << " " << hit.node.rkey;
              if (root) {
                EXPECT_TRUE(hit.node.rkey.starts_with("t1m")) << kind << hit.node.rkey;
              }
            }
          }
        }
      }
    }
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

// A prefix that starts more than 16 tokens is left to FTS5's prefix query,
// which merges them all before its first row. When the repo's newest nodes
// match it densely, the search walks the long way without listing the
// index's matches (by relevance: windows of the nodes by change); when they
// do not, it lists them (the long way, cut by a small budget, would not find
// them all in a page).
TEST_F(SearchTest, ADensePrefixOfManyTokensIsWalkedAndASparseOneListed) {
  std::vector<RecordOp> ops;
  std::vector<std::string> reading, sparse;
  for (int i = 0; i < 3'000; ++i) {
    const std::string rkey = "n" + std::to_string(i);
    std::string text = "fl" + std::to_string(i % 20) + " words";  // 20 tokens start "fl"
    if (i < 20) {  // the oldest 20: far from the newest nodes
      text += " zq" + std::to_string(i);
      sparse.insert(sparse.begin(), rkey);
    }
    ops.push_back(op_of({.rkey = rkey, .key = key_of(i), .text = text}));
    reading.push_back(rkey);
  }
  apply(std::move(ops));
  const std::vector<std::string> newest_first(reading.rbegin(), reading.rend());
  const std::set<std::string> every(reading.begin(), reading.end());
  auto rkeys = [](const SearchPage& page) {
    std::vector<std::string> out;
    for (const auto& r : page.results) out.push_back(r.node.rkey);
    return out;
  };
  for (const auto sort : {SearchSort::kRecent, SearchSort::kOutline, SearchSort::kRelevance}) {
    const bool relevance = sort == SearchSort::kRelevance;
    const auto& order = sort == SearchSort::kRecent ? newest_first : reading;
    auto first = page("fl", sort);
    ASSERT_TRUE(first.has_value()) << first.error().message;
    ASSERT_EQ(first->results.size(), 25u) << to_string(sort);
    if (!relevance) {
      EXPECT_EQ(rkeys(*first), std::vector<std::string>(order.begin(), order.begin() + 25));
    }
    // Walked: the newest nodes held against the query (256), then the
    // page's own (by relevance, its window of 2,500 rows), not the 3,000
    // matches listed (by relevance, 2,501 listed, then a window of them).
    EXPECT_LT(first->rows_examined, 3'000u) << to_string(sort);
    for (const std::size_t budget : {20'000u, 1'000u}) {
      const auto pages = all_pages("fl", sort, budget, 100);
      if (relevance) {
        EXPECT_EQ(pages.size(), every.size()) << budget;
        EXPECT_EQ(std::set<std::string>(pages.begin(), pages.end()), every) << budget;
      } else {
        EXPECT_EQ(pages, order) << to_string(sort) << " " << budget;
      }
    }
    // Sparse: listed from the index, all in one page at a budget a third of
    // the repo's nodes.
    auto few = page("zq", sort, std::nullopt, std::nullopt, 25, 1'000);
    ASSERT_TRUE(few.has_value()) << few.error().message;
    auto got = rkeys(*few);
    if (relevance) std::sort(got.begin(), got.end());
    auto want = sort == SearchSort::kRecent
                    ? sparse
                    : std::vector<std::string>(sparse.rbegin(), sparse.rend());
    if (relevance) std::sort(want.begin(), want.end());
    EXPECT_EQ(got, want) << to_string(sort);
    EXPECT_FALSE(few->cursor.has_value()) << to_string(sort);
  }
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

// A search calls its give_way once every kRowsPerStretch rows it counts,
// inside its read: what another connection commits meanwhile is not in
// the page, and the pages are those of a search that never paused.
TEST_F(SearchTest, ASearchGivesWayEveryStretchOfRowsAndItsPageIsUnchanged) {
  std::vector<RecordOp> ops;
  for (int i = 0; i < 3'000; ++i) {
    ops.push_back(
        op_of({.rkey = "g" + std::to_string(i),
               .parent = i < 100 ? std::nullopt : std::optional("g" + std::to_string(i / 30)),
               .key = key_of(i),
               .text = i % 7 == 0 ? "stretch word" : "filler"}));
  }
  apply(std::move(ops));
  auto other = Store::open(dir_.file("index.db"));  // another process's writer
  ASSERT_TRUE(other.has_value()) << other.error().message;
  std::uint64_t rev = 1;
  for (const auto sort : {SearchSort::kRelevance, SearchSort::kOutline, SearchSort::kRecent}) {
    const auto plain_pages = all_pages("stretch", sort, 500, 25);
    const std::string late_rkey = "late" + std::to_string(rev);
    std::size_t calls = 0;
    give_way_ = [&] {
      if (++calls != 1) return;
      ApplyBatch late;  // committed while the search pauses
      late.ops = {op_of({.rkey = late_rkey, .text = "stretch late", .rev = ++rev})};
      EXPECT_TRUE((*other)->apply(late).has_value());
    };
    auto first = page("stretch", sort, std::nullopt, std::nullopt, 25, 500);
    ASSERT_TRUE(first.has_value()) << first.error().message;
    EXPECT_GE(calls, first->rows_examined / search::kRowsPerStretch) << to_string(sort);
    EXPECT_GT(calls, 0u) << to_string(sort);
    for (const auto& hit : first->results) {
      EXPECT_NE(hit.node.rkey, late_rkey) << to_string(sort);
    }
    give_way_ = {};
    auto late = page("late");
    ASSERT_TRUE(late.has_value()) << late.error().message;
    ASSERT_EQ(late->results.size(), 1u) << "committed, found by the next search";
    // Undo the late write, then page through with pauses that write nothing.
    apply({testing::remove(kAlice, late_rkey, ++rev)});
    give_way_ = [&] { ++calls; };
    EXPECT_EQ(all_pages("stretch", sort, 500, 25), plain_pages) << to_string(sort);
    give_way_ = {};
  }
}

}  // namespace
}  // namespace bulleted::schema
