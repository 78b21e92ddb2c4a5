// A search's query (DESIGN.md section 10), parsed once, where it enters,
// into a typed form: nothing the user typed reaches SQLite's full-text
// syntax except as quoted tokens (search_index.hpp writes those).
//
//   word          a word of the text or note starting with it (case and
//                 diacritics folded); also a tag's text
//   a b           both (AND)
//   a OR b        either; OR binds tighter than AND; an OR not between
//                 two positive terms is ignored
//   "a b"         the words in order, adjacent, every word whole but the
//                 last (a prefix); an unclosed quote ends at the end
//   -term         not the term (any form)
//   #tag, @name   the whole tag, case-insensitive
//   is:completed, has:note, created:7d, changed:12h (m, h, d, w)
//   CJK text      a run of Han, Hiragana, Katakana or Hangul characters,
//                 as a phrase of its characters
//
// A word is a maximal run of letters, marks and digits (Unicode L*, M*, N*,
// Co); a query word with other characters inside is split into words
// searched as a phrase. Any other key:value is searched as words.
// Refused (kInvalidRequest, naming the limit): more than kMaxQueryBytes,
// more than kMaxQueryTerms terms, no term, only exclusions, invalid UTF-8.
// Nothing else is an error: stray quotes, OR OR, unknown keys, emoji,
// control characters are read as what they are.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schema/error.hpp"

namespace bulleted::schema {

inline constexpr std::size_t kMaxQueryBytes = 512;
inline constexpr std::size_t kMaxQueryTerms = 16;

struct SearchTerm {
  enum class Kind {
    kWords,      // one word (a prefix), or a phrase (`words` in order)
    kTag,        // `tag`: the sigil and the case-folded name ("#work")
    kCompleted,  // is:completed
    kHasNote,    // has:note
    kCreated,    // created within `within_ms` of now
    kChanged,    // changed (taken by the index) within `within_ms` of now
  };
  Kind kind = Kind::kWords;
  // kWords: as typed (the index folds case and diacritics); every word is
  // whole but the last, which is a prefix.
  std::vector<std::string> words;
  std::string tag;
  std::int64_t within_ms = 0;

  // Whether the full-text index answers the term (words and tags) rather
  // than the node's own columns (the filters).
  bool in_index() const { return kind == Kind::kWords || kind == Kind::kTag; }
  friend bool operator==(const SearchTerm&, const SearchTerm&) = default;
};

// Terms joined by OR; a negated clause has exactly one term.
struct SearchClause {
  bool negated = false;
  std::vector<SearchTerm> any;
  friend bool operator==(const SearchClause&, const SearchClause&) = default;
};

// Clauses joined by AND: at least one is not negated.
struct SearchQuery {
  std::vector<SearchClause> all;
  friend bool operator==(const SearchQuery&, const SearchQuery&) = default;
};

Result<SearchQuery> parse_search_query(std::string_view q);

// The query written back in the language, normalized, an OR clause in
// parentheses (what the parser understood: tests, logs of its shape).
std::string to_string(const SearchQuery& query);

// Whether `c` (a code point) is a word character (L*, M*, N*, Co), and
// whether it is of a script searched character by character (Han,
// Hiragana, Katakana, Hangul).
bool is_word_char(char32_t c);
bool is_cjk_char(char32_t c);

// The words of `text` as byte ranges [start, end): runs of word characters,
// each CJK character a word of its own.
struct WordSpan {
  std::size_t start;
  std::size_t end;
};
std::vector<WordSpan> word_spans(std::string_view text);

// The tags `text` carries (DESIGN.md 10): '#' or '@' then letters, digits,
// '-' and '_', at the text's start or after a character that is not a
// letter, digit, '/', '.', '@' or '#'. Byte ranges of the whole tag (sigil
// included).
std::vector<WordSpan> tag_spans(std::string_view text);

// A word or tag as the index compares it: lowercased, diacritics removed
// (unicode61's folding; what highlights compare).
std::string fold_word(std::string_view word);
// `text` lowercased when it is all ASCII (the common case, without ICU);
// nullopt otherwise.
std::optional<std::string> ascii_lowercase(std::string_view text);

}  // namespace bulleted::schema
