#include "schema/search_query.hpp"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/uscript.h>

#include <algorithm>
#include <charconv>
#include <optional>

#include "schema/node_record.hpp"

namespace bulleted::schema {
namespace {

// The code point at `at` in valid UTF-8 and its length.
char32_t decode_at(std::string_view text, std::size_t at, std::size_t& length) {
  const auto lead = static_cast<unsigned char>(text[at]);
  if (lead < 0x80) {
    length = 1;
    return lead;
  }
  length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
  char32_t c = lead & (length == 4 ? 0x07 : length == 3 ? 0x0F : 0x1F);
  for (std::size_t i = 1; i < length && at + i < text.size(); ++i) {
    c = (c << 6) | (static_cast<unsigned char>(text[at + i]) & 0x3F);
  }
  return c;
}

bool is_tag_char(char32_t c) { return c == '-' || c == '_' || is_word_char(c); }

// A character after which a tag may start: not a letter, digit, '/', '.',
// '@' or '#'.
bool tag_may_follow(char32_t c) {
  return !(is_word_char(c) || c == '/' || c == '.' || c == '@' || c == '#');
}

// One piece of the query as typed: a quoted phrase, or a run of
// characters up to the next space.
struct Piece {
  std::string text;
  bool quoted = false;
  bool negated = false;
};

std::vector<Piece> pieces_of(std::string_view q) {
  std::vector<Piece> out;
  std::size_t at = 0;
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (at < q.size()) {
    while (at < q.size() && space(q[at])) ++at;
    if (at >= q.size()) break;
    Piece piece;
    if (q[at] == '-' && at + 1 < q.size() && !space(q[at + 1])) {
      piece.negated = true;
      ++at;
    }
    if (q[at] == '"') {
      const std::size_t close = q.find('"', at + 1);
      const std::size_t end = close == std::string_view::npos ? q.size() : close;
      piece.text = std::string(q.substr(at + 1, end - at - 1));
      piece.quoted = true;
      at = close == std::string_view::npos ? q.size() : close + 1;
    } else {
      std::size_t end = at;
      while (end < q.size() && !space(q[end])) ++end;
      piece.text = std::string(q.substr(at, end - at));
      at = end;
    }
    out.push_back(std::move(piece));
  }
  return out;
}

std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> out;
  for (const auto& span : word_spans(text))
    out.emplace_back(text.substr(span.start, span.end - span.start));
  return out;
}

// "7d" -> milliseconds; 0 when it is not a duration.
std::int64_t duration_ms(std::string_view value) {
  if (value.size() < 2) return 0;
  const char unit = value.back();
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size() - 1, n);
  if (ec != std::errc() || end != value.data() + value.size() - 1 || n <= 0 || n > 100'000)
    return 0;
  const std::int64_t minute = 60'000;
  switch (unit) {
    case 'm':
      return n * minute;
    case 'h':
      return n * 60 * minute;
    case 'd':
      return n * 24 * 60 * minute;
    case 'w':
      return n * 7 * 24 * 60 * minute;
    default:
      return 0;
  }
}

// The terms one unquoted piece stands for: a filter, a tag (and any words
// after it), or words (a phrase when several).
std::vector<SearchTerm> terms_of(const Piece& piece) {
  using Kind = SearchTerm::Kind;
  std::vector<SearchTerm> out;
  auto words_term = [&](std::string_view text) {
    auto words = words_of(text);
    if (!words.empty()) out.push_back(SearchTerm{Kind::kWords, std::move(words), {}, 0});
  };
  if (piece.quoted) {
    words_term(piece.text);
    return out;
  }
  const std::string& text = piece.text;
  if (text == "is:completed") return {SearchTerm{Kind::kCompleted, {}, {}, 0}};
  if (text == "has:note") return {SearchTerm{Kind::kHasNote, {}, {}, 0}};
  for (const auto& [key, kind] :
       {std::pair{"created:", Kind::kCreated}, {"changed:", Kind::kChanged}}) {
    if (text.starts_with(key)) {
      if (const std::int64_t ms =
              duration_ms(std::string_view(text).substr(std::string_view(key).size()))) {
        return {SearchTerm{kind, {}, {}, ms}};
      }
    }
  }
  if ((text[0] == '#' || text[0] == '@') && text.size() > 1) {
    std::size_t end = 1;
    while (end < text.size()) {
      std::size_t length = 1;
      const char32_t c = decode_at(text, end, length);
      if (!is_tag_char(c)) break;
      end += length;
    }
    if (end > 1) {
      out.push_back(
          SearchTerm{Kind::kTag, {}, fold_word(std::string_view(text).substr(0, end)), 0});
      words_term(std::string_view(text).substr(end));
      return out;
    }
  }
  words_term(text);
  return out;
}

}  // namespace

bool is_word_char(char32_t c) {
  if (c < 0x80) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  }
  const auto mask = U_GET_GC_MASK(static_cast<UChar32>(c));
  return (mask & (U_GC_L_MASK | U_GC_M_MASK | U_GC_N_MASK | U_GC_CO_MASK)) != 0;
}

bool is_cjk_char(char32_t c) {
  if (c < 0x1100) return false;  // below Hangul Jamo: none of the four scripts
  UErrorCode status = U_ZERO_ERROR;
  const UScriptCode script = uscript_getScript(static_cast<UChar32>(c), &status);
  return U_SUCCESS(status) && (script == USCRIPT_HAN || script == USCRIPT_HIRAGANA ||
                               script == USCRIPT_KATAKANA || script == USCRIPT_HANGUL);
}

std::vector<WordSpan> word_spans(std::string_view text) {
  std::vector<WordSpan> out;
  std::size_t at = 0;
  std::optional<std::size_t> start;
  while (at < text.size()) {
    std::size_t length = 1;
    const char32_t c = decode_at(text, at, length);
    const bool word = is_word_char(c);
    const bool cjk = word && is_cjk_char(c);
    if (start && (!word || cjk)) {
      out.push_back({*start, at});
      start.reset();
    }
    if (cjk) {
      out.push_back({at, at + length});
    } else if (word && !start) {
      start = at;
    }
    at += length;
  }
  if (start) out.push_back({*start, text.size()});
  return out;
}

std::vector<WordSpan> tag_spans(std::string_view text) {
  std::vector<WordSpan> out;
  std::size_t at = 0;
  char32_t before = ' ';
  while (at < text.size()) {
    std::size_t length = 1;
    const char32_t c = decode_at(text, at, length);
    if ((c == '#' || c == '@') && tag_may_follow(before)) {
      std::size_t end = at + 1;
      while (end < text.size()) {
        std::size_t l = 1;
        if (!is_tag_char(decode_at(text, end, l))) break;
        end += l;
      }
      if (end > at + 1) {
        out.push_back({at, end});
        before = 'a';  // the tag's last character: a letter, digit, - or _
        at = end;
        continue;
      }
    }
    before = c;
    at += length;
  }
  return out;
}

std::optional<std::string> ascii_lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if ((c & 0x80) != 0) return std::nullopt;
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string fold_word(std::string_view word) {
  if (auto ascii = ascii_lowercase(word)) return std::move(*ascii);
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfd = icu::Normalizer2::getNFDInstance(status);
  icu::UnicodeString folded = icu::UnicodeString::fromUTF8(
      icu::StringPiece(word.data(), static_cast<std::int32_t>(word.size())));
  folded.toLower();
  if (U_SUCCESS(status)) {
    icu::UnicodeString decomposed = nfd->normalize(folded, status);
    if (U_SUCCESS(status)) {
      icu::UnicodeString kept;
      for (std::int32_t i = 0; i < decomposed.length();) {
        const UChar32 c = decomposed.char32At(i);
        if (u_charType(c) != U_NON_SPACING_MARK) kept.append(c);
        i += U16_LENGTH(c);
      }
      folded = kept;
    }
  }
  std::string out;
  folded.toUTF8String(out);
  return out;
}

Result<SearchQuery> parse_search_query(std::string_view q) {
  if (q.size() > kMaxQueryBytes) {
    return fail(ErrorCode::kInvalidRequest,
                "q is longer than " + std::to_string(kMaxQueryBytes) + " bytes");
  }
  if (!is_valid_utf8(q)) return fail(ErrorCode::kInvalidRequest, "q is not valid UTF-8");
  SearchQuery query;
  std::size_t terms = 0;
  bool join_next = false;  // an OR stands between the last positive term and the next
  const auto pieces = pieces_of(q);
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const Piece& piece = pieces[i];
    if (!piece.quoted && !piece.negated && piece.text == "OR") {
      // Only between two positive terms: the last clause is positive and
      // the next piece is a positive one.
      const bool after_positive = !query.all.empty() && !query.all.back().negated;
      const bool before_positive = i + 1 < pieces.size() && !pieces[i + 1].negated &&
                                   !(pieces[i + 1].text == "OR" && !pieces[i + 1].quoted);
      join_next = after_positive && before_positive;
      continue;
    }
    auto found = terms_of(piece);
    if (found.empty()) {
      join_next = false;
      continue;
    }
    terms += found.size();
    if (terms > kMaxQueryTerms) {
      return fail(ErrorCode::kInvalidRequest,
                  "q has more than " + std::to_string(kMaxQueryTerms) + " terms");
    }
    if (piece.negated) {
      for (auto& term : found) query.all.push_back(SearchClause{true, {std::move(term)}});
      join_next = false;
      continue;
    }
    // A piece that stands for several terms (a tag then words): the first
    // joins an OR before it, the rest are clauses of their own.
    for (std::size_t t = 0; t < found.size(); ++t) {
      if (t == 0 && join_next) {
        query.all.back().any.push_back(std::move(found[t]));
      } else {
        query.all.push_back(SearchClause{false, {std::move(found[t])}});
      }
    }
    join_next = false;
  }
  if (query.all.empty()) return fail(ErrorCode::kInvalidRequest, "q holds nothing to search for");
  const bool any_positive = std::any_of(query.all.begin(), query.all.end(),
                                        [](const SearchClause& c) { return !c.negated; });
  if (!any_positive) {
    return fail(ErrorCode::kInvalidRequest, "q only excludes: say what to search for too");
  }
  return query;
}

std::string to_string(const SearchQuery& query) {
  using Kind = SearchTerm::Kind;
  auto term_text = [](const SearchTerm& term) -> std::string {
    switch (term.kind) {
      case Kind::kWords: {
        std::string out = term.words.size() > 1 ? "\"" : "";
        for (std::size_t i = 0; i < term.words.size(); ++i) out += (i ? " " : "") + term.words[i];
        return out + (term.words.size() > 1 ? "\"" : "");
      }
      case Kind::kTag:
        return term.tag;
      case Kind::kCompleted:
        return "is:completed";
      case Kind::kHasNote:
        return "has:note";
      case Kind::kCreated:
        return "created:" + std::to_string(term.within_ms / 60'000) + "m";
      case Kind::kChanged:
        return "changed:" + std::to_string(term.within_ms / 60'000) + "m";
    }
    return "";
  };
  std::string out;
  for (const auto& clause : query.all) {
    if (!out.empty()) out += ' ';
    if (clause.negated) out += '-';
    if (clause.any.size() > 1) out += '(';
    for (std::size_t i = 0; i < clause.any.size(); ++i) {
      if (i) out += " OR ";
      out += term_text(clause.any[i]);
    }
    if (clause.any.size() > 1) out += ')';
  }
  return out;
}

}  // namespace bulleted::schema
