#include "schema/search_match.hpp"

#include <algorithm>

namespace bulleted::schema {
namespace {

bool word_matches(std::string_view word, std::string_view wanted, bool prefix) {
  return prefix ? word.starts_with(wanted) : word == wanted;
}

}  // namespace

std::vector<std::size_t> phrase_starts(const std::vector<std::string>& field_words,
                                       const std::vector<std::string>& words) {
  std::vector<std::size_t> out;
  if (words.empty() || field_words.size() < words.size()) return out;
  for (std::size_t at = 0; at + words.size() <= field_words.size(); ++at) {
    bool all = true;
    for (std::size_t k = 0; k < words.size() && all; ++k) {
      all = word_matches(field_words[at + k], words[k], k + 1 == words.size());
    }
    if (all) out.push_back(at);
  }
  return out;
}

SearchMatcher::SearchMatcher(const SearchQuery& query, std::int64_t now_ms)
    : query_(query), now_ms_(now_ms) {
  for (const auto& clause : query_.all) {
    auto& terms = folded_.emplace_back();
    std::vector<std::string> needles;
    for (const auto& term : clause.any) {
      auto& words = terms.emplace_back();
      for (const auto& word : term.words) words.push_back(fold_word(word));
      std::optional<std::string> needle;
      if (term.kind == SearchTerm::Kind::kWords && !term.words.empty()) {
        needle = ascii_lowercase(term.words.front());
      } else if (term.kind == SearchTerm::Kind::kTag) {
        needle = ascii_lowercase(std::string_view(term.tag).substr(1));
      }
      if (needle && !needle->empty()) needles.push_back(std::move(*needle));
    }
    if (!clause.negated && !clause.any.empty() && needles.size() == clause.any.size()) {
      needles_.push_back(std::move(needles));
    }
  }
}

bool SearchMatcher::may_match(const SearchDoc& doc) const {
  if (needles_.empty()) return true;
  std::string low;
  low.reserve(doc.text.size() + (doc.note ? doc.note->size() + 1 : 0));
  for (const std::string_view field : {doc.text, doc.note.value_or(std::string_view())}) {
    for (const char c : field) {
      if ((c & 0x80) != 0) return true;  // folding may make a match of it
      low += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    }
    low += '\n';
  }
  for (const auto& needles : needles_) {
    const bool any = std::any_of(needles.begin(), needles.end(), [&](const std::string& needle) {
      return low.find(needle) != std::string::npos;
    });
    if (!any) return false;
  }
  return true;
}

SearchMatcher::Field SearchMatcher::read_field(std::string_view text) {
  Field field;
  for (const auto& span : word_spans(text)) {
    field.folded.push_back(fold_word(text.substr(span.start, span.end - span.start)));
    field.words.push_back({span.start, span.end, {}});
  }
  for (const auto& span : tag_spans(text)) {
    field.tags.push_back(
        {span.start, span.end, fold_word(text.substr(span.start, span.end - span.start))});
  }
  return field;
}

SearchMatcher::Fields SearchMatcher::read(const SearchDoc& doc) {
  Fields fields;
  fields.text = read_field(doc.text);
  if (doc.note) fields.note = read_field(*doc.note);
  return fields;
}

bool SearchMatcher::term_matches(std::size_t clause, std::size_t index, const SearchDoc& doc,
                                 const Fields& fields) const {
  using Kind = SearchTerm::Kind;
  const SearchTerm& term = query_.all[clause].any[index];
  switch (term.kind) {
    case Kind::kWords:
      for (const Field* field : {&fields.text, &fields.note}) {
        if (!phrase_starts(field->folded, folded_[clause][index]).empty()) return true;
      }
      return false;
    case Kind::kTag:
      for (const Field* field : {&fields.text, &fields.note}) {
        for (const auto& tag : field->tags) {
          if (tag.folded == term.tag) return true;
        }
      }
      return false;
    case Kind::kCompleted:
      return doc.completed;
    case Kind::kHasNote:
      return doc.note && !doc.note->empty();
    case Kind::kCreated:
      return doc.created_ms && *doc.created_ms >= now_ms_ - term.within_ms;
    case Kind::kChanged:
      return doc.changed_ms && *doc.changed_ms >= now_ms_ - term.within_ms;
  }
  return false;
}

bool SearchMatcher::matches_clause(const SearchDoc& doc, std::size_t index) const {
  const Fields fields = read(doc);
  return clause_holds(index, doc, fields);
}

bool SearchMatcher::clause_holds(std::size_t index, const SearchDoc& doc,
                                 const Fields& fields) const {
  const SearchClause& clause = query_.all[index];
  bool any = false;
  for (std::size_t t = 0; t < clause.any.size() && !any; ++t) {
    any = term_matches(index, t, doc, fields);
  }
  return any != clause.negated;
}

bool SearchMatcher::matches(const SearchDoc& doc) const {
  if (!may_match(doc)) return false;
  const Fields fields = read(doc);
  for (std::size_t c = 0; c < query_.all.size(); ++c) {
    if (!clause_holds(c, doc, fields)) return false;
  }
  return true;
}

SearchMatcher::Scored SearchMatcher::score(const SearchDoc& doc) const {
  const Fields fields = read(doc);
  Scored out;
  for (const bool in_note : {false, true}) {
    const Field& field = in_note ? fields.note : fields.text;
    const std::int64_t weight = in_note ? 1 : 3;
    const std::vector<std::string>& folded = field.folded;
    std::vector<MatchRange> ranges;
    for (std::size_t c = 0; c < query_.all.size(); ++c) {
      if (query_.all[c].negated) continue;
      for (std::size_t t = 0; t < query_.all[c].any.size(); ++t) {
        const SearchTerm& term = query_.all[c].any[t];
        if (term.kind == SearchTerm::Kind::kTag) {
          for (const auto& tag : field.tags) {
            if (tag.folded != term.tag) continue;
            out.score += 2 * weight;
            ranges.push_back({in_note, tag.start, tag.end});
          }
          continue;
        }
        if (term.kind != SearchTerm::Kind::kWords) continue;
        const auto& words = folded_[c][t];
        for (const std::size_t at : phrase_starts(folded, words)) {
          // A whole last word counts as much as the words before it.
          const bool whole = folded[at + words.size() - 1] == words.back();
          out.score += weight * static_cast<std::int64_t>(words.size()) + (whole ? weight : 0);
          for (std::size_t k = 0; k < words.size(); ++k) {
            ranges.push_back({in_note, field.words[at + k].start, field.words[at + k].end});
          }
        }
      }
    }
    std::sort(ranges.begin(), ranges.end(), [](const MatchRange& a, const MatchRange& b) {
      return a.start != b.start ? a.start < b.start : a.end < b.end;
    });
    ranges.erase(std::unique(ranges.begin(), ranges.end()), ranges.end());
    if (ranges.size() > kMaxHighlightsPerField) ranges.resize(kMaxHighlightsPerField);
    out.ranges.insert(out.ranges.end(), ranges.begin(), ranges.end());
  }
  if (doc.text.size() < 120) out.score += 1;
  return out;
}

}  // namespace bulleted::schema
