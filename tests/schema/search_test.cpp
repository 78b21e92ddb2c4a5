// Search over a real index file (schema/reader_search.cpp, search_index.cpp):
// the index kept through every write of the rows (creates, updates, moves,
// deletes, repo deletion), checked by `check`, built by schema 12's
// migration; scopes, hidden repos, tags, answers. Pages and the ways
// through a repo: search_pages_test.cpp.
#include "schema/migrations.hpp"
#include "tests/schema/search_fixture.hpp"

namespace bulleted::schema {
namespace {

using namespace search_testing;

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

// A prefix that more than ten thousand tags start with still finds the
// most used of them (it sorted the first ten thousand in tag order, and
// missed one used more that came after them).
TEST_F(SearchTest, ABroadTagPrefixStillFindsTheMostUsedTags) {
  std::vector<schema::RecordOp> ops;
  for (int i = 0; i < 10'050; ++i) {
    char tag[16];
    std::snprintf(tag, sizeof tag, "#p%05d", i);
    ops.push_back(op_of({.rkey = "n" + std::to_string(i), .text = tag}));
  }
  for (int i = 0; i < 3; ++i) {
    ops.push_back(op_of({.rkey = "z" + std::to_string(i), .text = "#pzz and #other"}));
  }
  apply(std::move(ops));
  auto tags = store_->read().tags(kAlice, "#p", 2);
  ASSERT_TRUE(tags.has_value()) << tags.error().message;
  ASSERT_EQ(tags->size(), 2u);
  EXPECT_EQ((*tags)[0].tag, "#pzz");
  EXPECT_EQ((*tags)[0].count, 3);
  EXPECT_EQ((*tags)[1].tag, "#p00000") << "then the rest, most used first, by tag";
  auto narrow = store_->read().tags(kAlice, "#p0000", 3);
  ASSERT_TRUE(narrow.has_value());
  ASSERT_EQ(narrow->size(), 3u);
  EXPECT_EQ((*narrow)[0].tag, "#p00000");
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

// Every sort gives a hit whole (outline order reads a candidate only as far
// as placing it needs, and its row whole when it is a hit), and the texts
// of its ancestors, one of which is itself a match placed before it.
TEST_F(SearchTest, EverySortGivesHitsWholeWithTheirAncestorsTexts) {
  put({.rkey = "p", .text = std::string(300, 'x') + " top"});
  put({.rkey = "c", .parent = "p", .text = "Mid cafe", .completed = true});
  put({.rkey = "n", .parent = "c", .text = "find Café here", .note = "café"});
  for (const SearchSort sort :
       {SearchSort::kRelevance, SearchSort::kOutline, SearchSort::kRecent}) {
    auto result = page("cafe", sort);
    ASSERT_TRUE(result.has_value());
    ASSERT_EQ(result->results.size(), 2u);
    for (const auto& hit : result->results) {
      if (hit.node.rkey == "c") {
        EXPECT_EQ(hit.node.text, "Mid cafe");
        EXPECT_TRUE(hit.node.completed);
        ASSERT_EQ(hit.ancestors.size(), 1u);
        EXPECT_EQ(hit.highlights, (std::vector<MatchRange>{{false, 4, 8}}));
        continue;
      }
      EXPECT_EQ(hit.node.text, "find Café here");
      EXPECT_EQ(hit.node.note, std::optional<std::string>("café"));
      EXPECT_FALSE(hit.node.completed);
      ASSERT_EQ(hit.ancestors.size(), 2u);
      EXPECT_EQ(hit.ancestors[0].text.size(), kMaxAncestorTextBytes);
      EXPECT_EQ(hit.ancestors[1].rkey, "c");
      EXPECT_EQ(hit.ancestors[1].text, "Mid cafe");
      EXPECT_EQ(hit.highlights, (std::vector<MatchRange>{{false, 5, 10}, {true, 0, 5}}));
    }
  }
  EXPECT_EQ(found("cafe", SearchSort::kOutline), (std::vector<std::string>{"c", "n"}));
}

// A word's prefix is asked of the index as the tokens it starts when they
// are few and all plain (search_terms): the same nodes as FTS5's prefix
// query, whatever the tokens around it, deleted ones and other repos'.
TEST_F(SearchTest, APrefixFindsEveryWordItStartsWhetherItsTokensAreNamedOrNot) {
  put({.rkey = "a", .text = "flow"});
  put({.rkey = "b", .key = "a1", .text = "Flowers bloom"});
  put({.rkey = "c", .key = "a2", .text = "a flowerpot", .note = "red FLOWERPOTS"});
  put({.rkey = "d", .key = "a3", .text = "overflow and flo"});
  put({.rkey = "e", .key = "a4", .text = "Café", .note = "cafłon"});  // cafe, cafłon
  put({.rkey = "f", .key = "a5", .text = "caf2 red flowers"});
  put({.did = kBob, .rkey = "z", .text = "flowchart flow cafés"});
  EXPECT_EQ(found("flow"), (std::vector<std::string>{"a", "b", "c", "f"}));
  EXPECT_EQ(found("FLOWERP"), (std::vector<std::string>{"c"}));
  EXPECT_EQ(found("flowerpots"), (std::vector<std::string>{"c"}));
  EXPECT_EQ(found("flowz"), std::vector<std::string>{});
  EXPECT_EQ(found("\"red flow\""), (std::vector<std::string>{"c", "f"}));
  EXPECT_EQ(found("flow -flowers"), (std::vector<std::string>{"a", "c"}));
  // A token past the plain letters (ł): the prefix query, and all found.
  EXPECT_EQ(found("caf"), (std::vector<std::string>{"e", "f"}));
  EXPECT_EQ(found("cafł"), (std::vector<std::string>{"e"}));
  // More tokens than are named (kMaxNamedTokens): the prefix query.
  for (int n = 0; n < 20; ++n) {
    put({.rkey = "m" + std::to_string(n), .key = key_of(n), .text = "ab" + std::to_string(n)});
  }
  EXPECT_EQ(found("ab").size(), 20u);
  EXPECT_EQ(found("ab1").size(), 11u);  // ab1, ab10 .. ab19
  // A deleted node's tokens may stay in the index's segments; never its node.
  apply({testing::remove(kAlice, "c", 2)});
  EXPECT_EQ(found("flowerp"), std::vector<std::string>{});
  EXPECT_EQ(found("flow"), (std::vector<std::string>{"a", "b", "f"}));
  const auto bobs =
      page("flow", SearchSort::kRelevance, std::nullopt, std::nullopt, 25, 20'000, kBob);
  ASSERT_TRUE(bobs.has_value()) << bobs.error().message;
  EXPECT_EQ(bobs->results.size(), 1u);
  EXPECT_TRUE(index_matches());
}

// A query of 16 prefixes, each starting 20 tokens: the search's seeks
// (kMaxTokenSeeks) run out part way, and every prefix it did not count to
// the end is the matcher's; what is found is the same.
TEST_F(SearchTest, APrefixLeftUnnamedWhenTheSeeksRunOutStillFindsEveryWord) {
  const std::string letters = "bcdfghjklmnprstv";
  std::string all, prefixes;
  for (std::size_t p = 0; p < letters.size(); ++p) {
    const std::string prefix = letters.substr(p, 1) + "a";
    std::string words;
    for (int n = 0; n < 20; ++n) words += prefix + std::to_string(n) + " ";
    put({.rkey = "w" + std::to_string(p), .key = key_of(static_cast<int>(p)), .text = words});
    all += prefix + "9 ";  // the last token each prefix starts
    prefixes += prefix + " ";
  }
  put({.rkey = "all", .key = "b0", .text = all});
  EXPECT_EQ(found(prefixes), (std::vector<std::string>{"all"}));
  EXPECT_EQ(found(all), (std::vector<std::string>{"all"}));  // each named: ba9 starts one
  EXPECT_EQ(found("ba OR ca").size(), 3u);
}

// A prefix with more instances in the index than FTS5 may merge, and more
// tokens than are named, is never asked of the index (which would merge the
// doclists of every one of them before its first row, a cost no row count
// sees): the matcher holds it against what the rest of the query finds, or
// against the repo's nodes the long way. What is found is what the prefix
// query found, in every clause it can stand in; a prefix of few instances
// is still asked of the index.
TEST_F(SearchTest, ABroadPrefixIsLeftToTheMatcherNotMergedByTheIndex) {
  put({.rkey = "z1", .key = "b1", .text = "zebra apple"});
  put({.rkey = "z2", .key = "b2", .text = "zebra crossing", .note = "Ante"});
  put({.rkey = "z3", .key = "b3", .text = "the zebra \"bar apples\""});
  put({.rkey = "z4", .key = "b4", .text = "zebra"});
  std::vector<RecordOp> ops;
  for (int n = 0; n < 100; ++n) {
    std::string text;
    for (int w = 0; w < 40; ++w) text += "a" + std::to_string(n) + "x" + std::to_string(w) + " ";
    text += "b" + std::to_string(n);  // b0 .. b99: 100 instances
    ops.push_back(op_of({.rkey = "w" + std::to_string(n), .key = key_of(n), .text = text}));
  }
  apply(ops);
  auto asked = [&](std::string_view q) {
    auto result = page(q);
    EXPECT_TRUE(result.has_value()) << result.error().message;
    return result ? result->index_query : std::nullopt;
  };
  EXPECT_EQ(asked("zebra a"), "((\"aaaaabzebra\" *))");
  EXPECT_EQ(asked("zebra -a"), "((\"aaaaabzebra\" *))");
  EXPECT_EQ(asked("zebra a OR crossing"), "((\"aaaaabzebra\" *))");
  EXPECT_EQ(asked("\"bar a\""), "((\"aaaaabbar\"))");  // the phrase's words before it
  EXPECT_EQ(asked("a"), std::nullopt);
  EXPECT_EQ(asked("Á"), std::nullopt);         // folded as the index folds it: a
  EXPECT_EQ(asked("b"), "((\"aaaaabb\" *))");  // 100 instances: merged
  EXPECT_EQ(found("zebra a"), (std::vector<std::string>{"z1", "z2", "z3"}));
  EXPECT_EQ(found("zebra -a"), (std::vector<std::string>{"z4"}));
  EXPECT_EQ(found("zebra a OR crossing"), (std::vector<std::string>{"z1", "z2", "z3"}));
  EXPECT_EQ(found("\"bar a\""), (std::vector<std::string>{"z3"}));
  EXPECT_EQ(found("zebra -\"bar a\""), (std::vector<std::string>{"z1", "z2", "z4"}));
  EXPECT_EQ(found("zebra a", SearchSort::kOutline), (std::vector<std::string>{"z1", "z2", "z3"}));
  EXPECT_EQ(found("zebra a", SearchSort::kRecent), (std::vector<std::string>{"z3", "z2", "z1"}));
  // Nothing but the prefix: the long way, every node it starts a word of
  // found over the pages, by relevance too.
  for (const auto sort : {SearchSort::kRelevance, SearchSort::kRecent, SearchSort::kOutline}) {
    EXPECT_EQ(all_pages("a", sort, 40, 10).size(), 103u) << to_string(sort);
  }
}

// A cursor that went on through the index's matches, for a prefix that has
// grown broad since (its next page would merge them): the search starts the
// long way over, and every node is still found.
TEST_F(SearchTest, ACursorOfAPrefixThatGrewBroadStartsTheLongWayOver) {
  std::vector<RecordOp> ops;
  for (int n = 0; n < 30; ++n) {
    ops.push_back(op_of(
        {.rkey = "q" + std::to_string(n), .key = key_of(n), .text = "q" + std::to_string(n)}));
  }
  apply(ops);
  bool grown = false;
  const auto pages = all_pages("q", SearchSort::kRelevance, 40, 5, std::nullopt, [&] {
    if (grown) return;
    grown = true;
    std::vector<RecordOp> more;
    for (int n = 0; n < 60; ++n) {
      std::string text;
      for (int w = 0; w < 40; ++w) text += "q" + std::to_string(n) + "m" + std::to_string(w) + " ";
      more.push_back(
          op_of({.rkey = "m" + std::to_string(n), .key = key_of(100 + n), .text = text}));
    }
    apply(more);
  });
  ASSERT_TRUE(grown);
  std::set<std::string> distinct(pages.begin(), pages.end());
  EXPECT_EQ(distinct.size(), 90u);
  auto first = page("q", SearchSort::kRelevance, std::nullopt, std::nullopt, 5, 40);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->index_query, std::nullopt);
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
  // Schema 12's last report: finished, with the rows it indexed.
  const auto twelve = std::find_if(steps.rbegin(), steps.rend(),
                                   [](const MigrationProgress& p) { return p.version == 12; });
  ASSERT_NE(twelve, steps.rend());
  EXPECT_TRUE(twelve->finished);
  EXPECT_EQ(twelve->total, 2);
  EXPECT_EQ(steps.back().version, latest_schema_version());
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

// A table of the index dropped by hand (a search fails on it) is a
// difference, each of them, and not an error of the check's own.
TEST_F(SearchTest, CheckSeesATableOfTheIndexThatIsGone) {
  put({.rkey = "a", .text = "true words #t"});
  for (const char* table : {"search_terms", "search_tags", "search_codes", "search_fts"}) {
    const std::string path = dir_.file(std::string(table) + ".db");
    {
      auto& db = testing::database_of(*store_);
      ASSERT_TRUE(db.exec(("VACUUM INTO '" + path + "'").c_str()).has_value());
    }
    auto copy = Store::open(path);
    ASSERT_TRUE(copy.has_value()) << copy.error().message;
    auto& db = testing::database_of(**copy);
    ASSERT_TRUE(db.exec(("DROP TABLE " + std::string(table)).c_str()).has_value()) << table;
    auto report = (*copy)->integrity_report();
    ASSERT_TRUE(report.has_value()) << table << ": " << report.error().message;
    EXPECT_FALSE(report->search_index_ok) << table;
    EXPECT_FALSE(report->ok()) << table;
  }
  EXPECT_TRUE(index_matches());
}

}  // namespace
}  // namespace bulleted::schema
