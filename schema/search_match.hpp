// A search's query held against one node in the app view itself: what the
// full-text index cannot answer (filters, an OR of words and a filter,
// exclusions of filters), the walks that read nodes in order instead of
// asking the index, the highlights of each result and its relevance score.
// It reads words and tags exactly as the index is written
// (schema/search_query.hpp's word_spans and tag_spans, folded alike).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schema/search_query.hpp"

namespace bulleted::schema {

// The fields of a node a query reads.
struct SearchDoc {
  std::string_view text;
  std::optional<std::string_view> note;
  bool completed = false;
  std::optional<std::int64_t> created_ms;  // the record's createdAt
  std::optional<std::int64_t> changed_ms;  // when the index took this version
};

// A matched word or tag: a byte range [start, end) of the text or the note.
struct MatchRange {
  bool in_note = false;
  std::size_t start = 0;
  std::size_t end = 0;
  friend bool operator==(const MatchRange&, const MatchRange&) = default;
};

inline constexpr std::size_t kMaxHighlightsPerField = 32;

class SearchMatcher {
 public:
  SearchMatcher(const SearchQuery& query, std::int64_t now_ms);

  // Whether the node matches every clause.
  bool matches(const SearchDoc& doc) const;
  // False when the node cannot match, decided cheaply: an ASCII text and
  // note that hold none of a positive clause's first words or tag names,
  // ignoring case (what a walk meets most). True when it may.
  bool may_match(const SearchDoc& doc) const;
  // Whether it matches clause `index` of the query.
  bool matches_clause(const SearchDoc& doc, std::size_t index) const;

  struct Scored {
    std::int64_t score = 0;          // higher is better
    std::vector<MatchRange> ranges;  // in text then note order, at most 32 per field
  };
  // The positive words and tags found in the node, and how well it matches:
  // whole words count more than prefixes, the text more than the note, a
  // short text a little more than a long one.
  Scored score(const SearchDoc& doc) const;

 private:
  struct Word {
    std::size_t start;
    std::size_t end;
    std::string folded;
  };
  struct Field {
    std::vector<Word> words;
    std::vector<std::string> folded;  // each word's folded text
    std::vector<Word> tags;
  };
  struct Fields {
    Field text;
    Field note;
  };
  static Field read_field(std::string_view text);
  static Fields read(const SearchDoc& doc);
  bool term_matches(std::size_t clause, std::size_t term, const SearchDoc& doc,
                    const Fields& fields) const;
  bool clause_holds(std::size_t index, const SearchDoc& doc, const Fields& fields) const;

  SearchQuery query_;
  std::int64_t now_ms_;
  // Each term's words folded once (index-parallel to query_'s terms).
  std::vector<std::vector<std::vector<std::string>>> folded_;
  // For may_match: per positive clause whose terms all have one, each
  // term's ASCII needle (its first word, or its tag's name), lowercased.
  std::vector<std::vector<std::string>> needles_;
};

// Where `words` (folded, the last a prefix) stand in order in `field`:
// the index of each run's first word.
std::vector<std::size_t> phrase_starts(const std::vector<std::string>& field_words,
                                       const std::vector<std::string>& words);

}  // namespace bulleted::schema
