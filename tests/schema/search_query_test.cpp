// The search query language (schema/search_query.hpp): every row of the
// vector file (search_query_vectors.txt; // starts a comment) parsed and written back as it was
// understood, or refused naming the limit; words, CJK characters and tags
// found in texts as the index writes them; the matcher and its highlights.
#include "schema/search_query.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "schema/search_index.hpp"
#include "schema/search_match.hpp"
#include "tests/support/vector_file.hpp"

namespace bulleted::schema {
namespace {

std::vector<std::string> spans_of(std::string_view text, const std::vector<WordSpan>& spans) {
  std::vector<std::string> out;
  for (const auto& span : spans) out.emplace_back(text.substr(span.start, span.end - span.start));
  return out;
}

TEST(SearchQuery, EveryRowOfTheVectorFile) {
  std::ifstream in(std::string(BULLETED_SOURCE_DIR) + "/tests/schema/search_query_vectors.txt");
  ASSERT_TRUE(in.good());
  std::string line;
  int number = 0;
  int rows = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line.starts_with("//")) continue;
    const auto arrow = line.rfind(" => ");
    ASSERT_NE(arrow, std::string::npos) << "line " << number;
    const std::string q = testing::unescape_field(line.substr(0, arrow));
    const std::string expected = line.substr(arrow + 4);
    ++rows;
    auto parsed = parse_search_query(q);
    if (expected.starts_with("!")) {
      ASSERT_FALSE(parsed.has_value())
          << "line " << number << ": " << line << " parsed as " << to_string(*parsed);
      EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidRequest) << "line " << number;
      EXPECT_NE(parsed.error().message.find(expected.substr(1)), std::string::npos)
          << "line " << number << ": " << parsed.error().message;
    } else {
      ASSERT_TRUE(parsed.has_value()) << "line " << number << ": " << parsed.error().message;
      EXPECT_EQ(to_string(*parsed), expected) << "line " << number << ": " << line;
    }
  }
  EXPECT_GE(rows, 60);
}

TEST(SearchQuery, RefusesMoreThan512BytesAndTakes512) {
  std::string q(512, 'a');
  EXPECT_TRUE(parse_search_query(q).has_value());
  q += 'a';
  auto refused = parse_search_query(q);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("512 bytes"), std::string::npos);
}

TEST(SearchQuery, NoInputOfAnyBytesThrowsOrCrashes) {
  std::mt19937 random(7);
  const std::string alphabet = "ab #@-\"OR:is completed\xc3\xa9\xe6\x9d\xb1\xff\x01 ";
  for (int round = 0; round < 20'000; ++round) {
    std::string q;
    const int length = static_cast<int>(random() % 40);
    for (int i = 0; i < length; ++i) q += alphabet[random() % alphabet.size()];
    auto parsed = parse_search_query(q);
    if (parsed) {
      EXPECT_FALSE(parsed->all.empty());
      EXPECT_LE(parsed->all.size(), kMaxQueryTerms);
    } else {
      EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidRequest);
    }
  }
}

TEST(SearchWords, RunsOfLettersMarksAndDigitsAndEachCjkCharacter) {
  const std::string text = "Café-au-lait 42x 東京タワー e\xcc\x81t\xc3\xa9 😀ok";
  EXPECT_EQ(spans_of(text, word_spans(text)),
            (std::vector<std::string>{"Café", "au", "lait", "42x", "東", "京", "タ", "ワ", "ー",
                                      "e\xcc\x81t\xc3\xa9", "ok"}));
}

TEST(SearchWords, TagsStartTheTextOrFollowWhatIsNotALetterDigitSlashDotAtOrHash) {
  auto tags = [](std::string_view text) { return spans_of(text, tag_spans(text)); };
  EXPECT_EQ(tags("#work and @alice"), (std::vector<std::string>{"#work", "@alice"}));
  EXPECT_EQ(tags("(#work) [@bob]"), (std::vector<std::string>{"#work", "@bob"}));
  EXPECT_EQ(tags("mail bob@example.com about C# and a/#b x.#c"), std::vector<std::string>{});
  EXPECT_EQ(tags("#a#b #to-do_2!"), (std::vector<std::string>{"#a", "#to-do_2"}));
  EXPECT_EQ(tags("# alone, #東京"), (std::vector<std::string>{"#東京"}));
}

TEST(SearchWords, FoldingIgnoresCaseAndDiacriticsButKeepsLetters) {
  EXPECT_EQ(fold_word("CAFÉS"), "cafes");
  EXPECT_EQ(fold_word("Café"), "cafe");
  EXPECT_EQ(fold_word("e\xcc\x81"), "e");
  EXPECT_EQ(fold_word("łøß"), "łøß");
  EXPECT_EQ(fold_word("ŁØ"), "łø");
}

// Words are searched in every column, without a column filter: that holds
// only while no word's token can equal or start a tag's. A word's token is
// the repo's code then letters, marks and digits; a tag's, the code then
// '_'. Texts and queries made to blur the two keep them apart.
TEST(SearchWords, AWordsTokenNeverStartsATagsSoWordsNeedNoColumnFilter) {
  const std::string code = "aaaaab";
  auto split = [](const std::string& tokens) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at < tokens.size()) {
      const std::size_t end = std::min(tokens.find(' ', at), tokens.size());
      out.push_back(tokens.substr(at, end - at));
      at = end + 1;
    }
    return out;
  };
  for (const std::string_view text :
       {"_h #work", "snake_case #to-do_2 __init__", "#_ @_x _hwork", "x_#y a_@b",
        "東京_タワー #東京 e\xcc\x81_t", "h_work aaaaab_hwork", "-_-x #-_-"}) {
    const SearchTokens tokens = search_tokens(code, text, text);
    std::size_t words = 0;
    for (const std::string* field : {&tokens.text, &tokens.note}) {
      for (const std::string& token : split(*field)) {
        ++words;
        EXPECT_TRUE(token.starts_with(code)) << text << ": " << token;
        EXPECT_EQ(token.find('_'), std::string::npos) << text << ": " << token;
        EXPECT_EQ(token.find('-'), std::string::npos) << text << ": " << token;
      }
    }
    EXPECT_GT(words, 0u) << text;
    for (const std::string& token : split(tokens.tags)) {
      EXPECT_TRUE(token.starts_with(code + "_")) << text << ": " << token;
    }
  }
  EXPECT_EQ(split(search_tokens(code, "#work x", std::nullopt).tags),
            std::vector<std::string>{code + "_hwork"});
  // A query's words are the same runs: no '_' reaches its expression.
  for (const std::string_view q : {"snake_case", "_hwork", "\"_h work\"", "a_ OR _b", "-x_y z"}) {
    auto query = parse_search_query(q);
    ASSERT_TRUE(query.has_value()) << q;
    const auto expression = fts_expression(*query, code);
    ASSERT_TRUE(expression.has_value()) << q;
    EXPECT_EQ(expression->find('_'), std::string::npos) << q << ": " << *expression;
  }
}

// A prefix the app view can name (ASCII letters and digits, which unicode61
// only lowercases) is asked of the index as the tokens it starts, each
// whole; any other keeps FTS5's prefix query.
TEST(SearchWords, ANamedPrefixIsAskedAsItsTokensAndAnyOtherAsAPrefix) {
  const std::string code = "aaaaab";
  EXPECT_EQ(prefix_token(code, "Flow2"), code + "flow2");
  EXPECT_EQ(prefix_token(code, "café"), std::nullopt);
  EXPECT_EQ(prefix_token(code, "東"), std::nullopt);
  const SearchQuery query = *parse_search_query("Flow \"red pic\" -café ab OR cd #flow");
  EXPECT_EQ(prefix_tokens(query, code),
            (std::vector<std::string>{code + "ab", code + "cd", code + "flow", code + "pic"}));
  const PrefixTokens named{
      {code + "flow", {code + "flow", code + "flower", code + "flows"}},
      {code + "pic", {code + "pick"}},
      {code + "ab", {}},  // no node has such a word
  };
  EXPECT_EQ(*fts_expression(query, code, nullptr, &named),
            "(((\"aaaaabflow\" OR \"aaaaabflower\" OR \"aaaaabflows\"))"
            " AND ((\"aaaaabred aaaaabpick\"))"
            " AND ((\"aaaaabab\") OR \"aaaaabcd\" *)"
            " AND (tags : \"aaaaab_hflow\")) NOT (\"aaaaabcafé\" *)");
  // Without names, every word term is a prefix query.
  EXPECT_EQ(*fts_expression(query, code),
            "((\"aaaaabFlow\" *) AND (\"aaaaabred aaaaabpic\" *)"
            " AND (\"aaaaabab\" * OR \"aaaaabcd\" *)"
            " AND (tags : \"aaaaab_hflow\")) NOT (\"aaaaabcafé\" *)");
}

SearchQuery parsed(std::string_view q) {
  auto query = parse_search_query(q);
  EXPECT_TRUE(query.has_value()) << q;
  return *query;
}

TEST(SearchMatch, WordsArePrefixesAndPhrasesAreAdjacentWholeWordsButTheLast) {
  const SearchMatcher matcher(parsed("\"buy caf\""), 0);
  EXPECT_TRUE(matcher.matches({"I buy Cafés daily", std::nullopt}));
  EXPECT_FALSE(matcher.matches({"I buyer cafés", std::nullopt}));
  EXPECT_FALSE(matcher.matches({"buy the cafe", std::nullopt}));
  EXPECT_TRUE(matcher.matches({"nothing", std::string_view("buy café")}));
  EXPECT_FALSE(matcher.matches({"buy", std::string_view("cafe")}));  // not across fields
}

TEST(SearchMatch, TagsAreWholeAndBareWordsFindTagText) {
  EXPECT_TRUE(SearchMatcher(parsed("#project"), 0).matches({"a #Project b", std::nullopt}));
  EXPECT_FALSE(SearchMatcher(parsed("#pro"), 0).matches({"a #project b", std::nullopt}));
  EXPECT_TRUE(SearchMatcher(parsed("project"), 0).matches({"a #project b", std::nullopt}));
  EXPECT_FALSE(SearchMatcher(parsed("#example"), 0).matches({"bob@example.com", std::nullopt}));
}

TEST(SearchMatch, FiltersExclusionsAndOr) {
  const std::int64_t now = 10 * 24 * 3'600'000LL;
  SearchDoc doc{"call mom", std::string_view("about dinner"), true, now - 3'600'000, std::nullopt};
  EXPECT_TRUE(SearchMatcher(parsed("is:completed has:note"), now).matches(doc));
  EXPECT_FALSE(SearchMatcher(parsed("call -is:completed"), now).matches(doc));
  EXPECT_TRUE(SearchMatcher(parsed("created:2h"), now).matches(doc));
  EXPECT_FALSE(SearchMatcher(parsed("created:30m"), now).matches(doc));
  EXPECT_FALSE(SearchMatcher(parsed("changed:7d"), now).matches(doc));  // taken before the column
  EXPECT_TRUE(SearchMatcher(parsed("zebra OR dinner"), now).matches(doc));
  EXPECT_FALSE(SearchMatcher(parsed("zebra OR lion"), now).matches(doc));
  EXPECT_FALSE(SearchMatcher(parsed("call -dinner"), now).matches(doc));
}

TEST(SearchMatch, HighlightsAreByteRangesOfWholeMatchedWordsPerField) {
  const SearchMatcher matcher(parsed("caf \"new york\" #todo"), 0);
  const std::string text = "Café in New York #todo";
  const auto scored = matcher.score({text, std::string_view("café again")});
  std::vector<std::string> got;
  for (const auto& range : scored.ranges) {
    const std::string_view field = range.in_note ? std::string_view("café again") : text;
    got.push_back(std::string(range.in_note ? "note:" : "text:") +
                  std::string(field.substr(range.start, range.end - range.start)));
  }
  EXPECT_EQ(got, (std::vector<std::string>{"text:Café", "text:New", "text:York", "text:#todo",
                                           "note:café"}));
  EXPECT_GT(scored.score, 0);
}

TEST(SearchMatch, TheCheapRejectNeverRejectsAMatch) {
  const SearchMatcher matcher(parsed("apple #todo OR pear"), 0);
  EXPECT_FALSE(matcher.may_match({"banana split", std::string_view("no fruit")}));
  EXPECT_FALSE(matcher.may_match({"an apple", std::nullopt}));  // neither todo nor pear
  EXPECT_TRUE(matcher.may_match({"an APPLE", std::string_view("#TODO")}));
  EXPECT_TRUE(matcher.may_match({"caf\xc3\xa9", std::nullopt}));  // not ASCII: decided in full
  for (const char* text : {"apple #todo", "Apple pear", "pineapple #todo x", "apples and pears"}) {
    const SearchDoc doc{text, std::nullopt};
    if (matcher.matches(doc)) {
      EXPECT_TRUE(matcher.may_match(doc)) << text;
    }
  }
}

TEST(SearchMatch, HighlightsAreCappedAt32AField) {
  std::string text;
  for (int i = 0; i < 100; ++i) text += "word ";
  const auto scored = SearchMatcher(parsed("word"), 0).score({text, std::nullopt});
  EXPECT_EQ(scored.ranges.size(), kMaxHighlightsPerField);
}

}  // namespace
}  // namespace bulleted::schema
