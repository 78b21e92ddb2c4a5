#include "schema/search_index.hpp"

#include <unicode/unistr.h>

#include <algorithm>
#include <set>

#include "schema/sqlite.hpp"

namespace bulleted::schema {
namespace {

void append_words(std::string& out, std::string_view code, std::string_view text) {
  for (const auto& span : word_spans(text)) {
    if (!out.empty()) out += ' ';
    out += code;
    out += text.substr(span.start, span.end - span.start);
  }
}

// '#' -> 'h', '@' -> 'a': a tag's sigil as a token letter.
char sigil_letter(char sigil) { return sigil == '#' ? 'h' : 'a'; }

}  // namespace

std::string fold_tag(std::string_view tag) {
  if (auto ascii = ascii_lowercase(tag)) return std::move(*ascii);
  icu::UnicodeString text = icu::UnicodeString::fromUTF8(
      icu::StringPiece(tag.data(), static_cast<std::int32_t>(tag.size())));
  text.toLower();
  std::string out;
  text.toUTF8String(out);
  return out;
}

namespace {

// A tag term's or a tag's token: the code, '_', the sigil's letter, the name.
std::string tag_token(std::string_view code, std::string_view tag) {
  std::string out(code);
  out += '_';
  out += sigil_letter(tag[0]);
  out += tag.substr(1);
  return out;
}

// A token quoted for FTS5: inside double quotes, a quote is doubled.
void append_quoted(std::string& out, std::string_view token) {
  out += '"';
  for (const char c : token) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

// A term as FTS5 is asked it; `whole`: the expression matches exactly the
// term's nodes (otherwise more of them: the matcher decides).
struct TermExpression {
  std::string text;
  bool whole = true;
};

std::optional<TermExpression> term_expression(const SearchTerm& term, std::string_view code,
                                              const PrefixTokens* named, const PrefixKeys* broad) {
  using Kind = SearchTerm::Kind;
  std::string out;
  if (term.kind == Kind::kTag) {
    out = "tags : ";
    append_quoted(out, tag_token(code, term.tag));
    return TermExpression{out};
  }
  if (term.kind != Kind::kWords || term.words.empty()) return std::nullopt;
  // Every word but the last, each a whole token.
  std::string head;
  for (std::size_t i = 0; i + 1 < term.words.size(); ++i) {
    head += code;
    head += term.words[i];
    head += ' ';
  }
  if (broad) {
    const auto key = prefix_key(code, term.words.back());
    if (key && broad->contains(*key)) {
      // The phrase's words before it, which every such node has in order.
      if (head.empty()) return std::nullopt;
      head.pop_back();
      append_quoted(out, head);
      return TermExpression{out, false};
    }
  }
  // No column filter: a word's token (the code, then letters, marks and
  // digits) never equals or starts a tag's (the code, then '_'), so a word
  // finds only text and note tokens; the filter cost FTS5 up to a
  // millisecond a query.
  if (named) {
    const auto token = prefix_token(code, term.words.back());
    const auto found = token ? named->find(*token) : named->end();
    if (found != named->end()) {
      // The tokens it starts (none: its own, which no row holds).
      const auto& tokens = found->second.empty() ? std::vector<std::string>{*token} : found->second;
      out = "(";
      for (std::size_t t = 0; t < tokens.size(); ++t) {
        if (t != 0) out += " OR ";
        append_quoted(out, head + tokens[t]);
      }
      out += ")";
      return TermExpression{out};
    }
  }
  append_quoted(out, head + std::string(code) + term.words.back());
  out += " *";
  return TermExpression{out};
}

}  // namespace

std::string repo_code_of(std::int64_t n) {
  std::string out(6, 'a');
  for (int i = 5; i >= 0 && n > 0; --i) {
    out[static_cast<std::size_t>(i)] = static_cast<char>('a' + n % 26);
    n /= 26;
  }
  return out;
}

SearchTokens search_tokens(std::string_view code, std::string_view text,
                           std::optional<std::string_view> note) {
  SearchTokens tokens;
  append_words(tokens.text, code, text);
  if (note) append_words(tokens.note, code, *note);
  for (const auto& tag : node_tags(text, note)) {
    if (!tokens.tags.empty()) tokens.tags += ' ';
    tokens.tags += tag_token(code, tag);
  }
  return tokens;
}

std::vector<std::string> node_tags(std::string_view text, std::optional<std::string_view> note) {
  std::set<std::string> tags;
  for (const std::string_view field : {text, note.value_or(std::string_view())}) {
    for (const auto& span : tag_spans(field)) {
      tags.insert(fold_tag(field.substr(span.start, span.end - span.start)));
    }
  }
  return {tags.begin(), tags.end()};
}

bool plain_token(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); });
}

std::optional<std::string> prefix_token(std::string_view code, std::string_view word) {
  auto folded = ascii_lowercase(word);
  if (!folded || folded->empty() || !plain_token(*folded)) return std::nullopt;
  return std::string(code) + *folded;
}

std::optional<std::string> prefix_key(std::string_view code, std::string_view word) {
  if (word.empty()) return std::nullopt;
  return std::string(code) + fold_word(word);
}

namespace {

// What `key_of` makes of the last word of each of `query`'s word terms,
// each once, in order.
template <typename KeyOf>
std::vector<std::string> last_words(const SearchQuery& query, const KeyOf& key_of) {
  std::set<std::string> keys;
  for (const auto& clause : query.all) {
    for (const auto& term : clause.any) {
      if (term.kind != SearchTerm::Kind::kWords || term.words.empty()) continue;
      if (auto key = key_of(term.words.back())) keys.insert(std::move(*key));
    }
  }
  return {keys.begin(), keys.end()};
}

}  // namespace

std::vector<std::string> prefix_keys(const SearchQuery& query, std::string_view code) {
  return last_words(query, [&](std::string_view word) { return prefix_key(code, word); });
}

std::vector<std::string> prefix_tokens(const SearchQuery& query, std::string_view code) {
  return last_words(query, [&](std::string_view word) { return prefix_token(code, word); });
}

std::optional<std::string> fts_expression(const SearchQuery& query, std::string_view code,
                                          std::vector<bool>* answered, const PrefixTokens* named,
                                          const PrefixKeys* broad) {
  std::string positive;
  std::string negative;
  if (answered) answered->assign(query.all.size(), false);
  for (std::size_t c = 0; c < query.all.size(); ++c) {
    const SearchClause& clause = query.all[c];
    std::vector<std::string> terms;
    bool whole = true;
    for (const auto& term : clause.any) {
      auto expression = term_expression(term, code, named, broad);
      if (!expression) break;
      terms.push_back(std::move(expression->text));
      whole = whole && expression->whole;
    }
    if (terms.size() != clause.any.size()) continue;  // a filter: the matcher's
    if (clause.negated && !whole) continue;           // NOT of more: too much
    std::string joined = "(";
    for (std::size_t t = 0; t < terms.size(); ++t) joined += (t ? " OR " : "") + terms[t];
    joined += ")";
    if (clause.negated) {
      negative += " NOT " + joined;
    } else {
      positive += (positive.empty() ? "" : " AND ") + joined;
    }
    if (answered) (*answered)[c] = whole;
  }
  if (positive.empty()) {
    if (answered) answered->assign(query.all.size(), false);
    return std::nullopt;
  }
  return "(" + positive + ")" + negative;
}

Result<std::optional<std::string>> find_repo_code(Database& db, std::string_view did) {
  auto n = query_value<std::int64_t>(db, "SELECT code FROM search_codes WHERE did = ?1", did);
  if (!n) return pass(n);
  if (!*n) return std::optional<std::string>();
  return std::optional<std::string>(repo_code_of(**n));
}

Result<std::string> SearchUpkeep::code(std::string_view did, bool create) {
  // A repo found without a code is asked again when a write may create it.
  if (auto known = codes_.find(did); known != codes_.end() && (!known->second.empty() || !create)) {
    return known->second;
  }
  auto found = find_repo_code(db_, did);
  if (!found) return pass(found);
  if (!*found && create) {
    auto stmt = db_.prepare(
        "INSERT INTO search_codes (did, code)"
        " SELECT ?1, coalesce(max(code), 0) + 1 FROM search_codes");
    if (!stmt) return pass(stmt);
    (*stmt)->bind(1, did);
    if (auto r = (*stmt)->run(); !r) return pass(r);
    found = find_repo_code(db_, did);
    if (!found) return pass(found);
  }
  std::string code = found->value_or("");
  codes_.insert_or_assign(std::string(did), code);
  return code;
}

Result<void> SearchUpkeep::write(std::int64_t rowid, const SearchTokens& tokens, bool remove) {
  auto stmt = remove ? db_.prepare(
                           "INSERT INTO search_fts (search_fts, rowid, text, note, tags)"
                           " VALUES ('delete', ?1, ?2, ?3, ?4)")
                     : db_.prepare(
                           "INSERT INTO search_fts (rowid, text, note, tags)"
                           " VALUES (?1, ?2, ?3, ?4)");
  if (!stmt) return pass(stmt);
  (*stmt)
      ->bind(1, rowid)
      .bind_view(2, tokens.text)
      .bind_view(3, tokens.note)
      .bind_view(4, tokens.tags);
  return (*stmt)->run();
}

Result<void> SearchUpkeep::added(std::int64_t rowid, std::string_view did, std::string_view text,
                                 std::optional<std::string_view> note) {
  auto code = this->code(did, true);
  if (!code) return pass(code);
  for (auto& tag : node_tags(text, note)) ++tag_deltas_[{std::string(did), std::move(tag)}];
  pending_.push_back({rowid, false, search_tokens(*code, text, note)});
  return {};
}

Result<void> SearchUpkeep::removed(std::int64_t rowid, std::string_view did, std::string_view text,
                                   std::optional<std::string_view> note) {
  auto code = this->code(did, false);
  if (!code) return pass(code);
  if (code->empty()) return {};  // never indexed
  for (auto& tag : node_tags(text, note)) --tag_deltas_[{std::string(did), std::move(tag)}];
  pending_.push_back({rowid, true, search_tokens(*code, text, note)});
  return {};
}

Result<void> SearchUpkeep::repo_removed(std::string_view did) {
  auto code = this->code(did, false);
  if (!code) return pass(code);
  if (!code->empty()) {
    // Each row's tokens taken out (at flush).
    auto read = db_.prepare("SELECT rowid, text, note FROM nodes WHERE did = ?1");
    if (!read) return pass(read);
    (*read)->bind(1, did);
    while (true) {
      auto row = (*read)->step();
      if (!row) return pass(row);
      if (!*row) break;
      const auto note = (*read)->is_null(2)
                            ? std::nullopt
                            : std::optional<std::string_view>((*read)->text_view(2));
      pending_.push_back(
          {(*read)->integer(0), true, search_tokens(*code, (*read)->text_view(1), note)});
    }
  }
  std::erase_if(tag_deltas_, [&](const auto& entry) { return entry.first.first == did; });
  auto drop = db_.prepare("DELETE FROM search_tags WHERE did = ?1");
  if (!drop) return pass(drop);
  (*drop)->bind(1, did);
  return (*drop)->run();
}

Result<void> SearchUpkeep::write_rows() {
  std::stable_sort(pending_.begin(), pending_.end(),
                   [](const Pending& a, const Pending& b) { return a.rowid < b.rowid; });
  for (std::size_t first = 0; first < pending_.size();) {
    std::size_t end = first + 1;
    while (end < pending_.size() && pending_[end].rowid == pending_[first].rowid) ++end;
    if (auto r = write_row(first, end); !r) return r;
    first = end;
  }
  pending_.clear();
  return {};
}

// One row's calls, in the order they came: removals of what the row held
// then and additions of what it holds now, alternating. What they change is
// the first removal (what the index held before) and the last addition
// (what it holds after), or nothing when those are the same tokens (a move,
// a completion). Calls that do not chain so are written as they came.
Result<void> SearchUpkeep::write_row(std::size_t first, std::size_t end) {
  bool chained = true;
  for (std::size_t i = first + 1; i < end && chained; ++i) {
    chained = pending_[i].remove != pending_[i - 1].remove &&
              (!pending_[i].remove || pending_[i].tokens == pending_[i - 1].tokens);
  }
  if (!chained) {
    for (std::size_t i = first; i < end; ++i) {
      if (auto r = write(pending_[i].rowid, pending_[i].tokens, pending_[i].remove); !r) return r;
    }
    return {};
  }
  const Pending& before = pending_[first];
  const Pending& after = pending_[end - 1];
  if (before.remove && !after.remove && before.tokens == after.tokens) return {};
  if (before.remove) {
    if (auto r = write(before.rowid, before.tokens, true); !r) return r;
  }
  if (!after.remove) return write(after.rowid, after.tokens, false);
  return {};
}

Result<void> SearchUpkeep::flush() {
  if (auto r = write_rows(); !r) return r;
  for (const auto& [key, delta] : tag_deltas_) {
    if (delta == 0) continue;
    auto stmt = db_.prepare(
        "INSERT INTO search_tags (did, tag, n) VALUES (?1, ?2, ?3)"
        " ON CONFLICT (did, tag) DO UPDATE SET n = n + excluded.n");
    if (!stmt) return pass(stmt);
    (*stmt)->bind(1, key.first).bind(2, key.second).bind(3, delta);
    if (auto r = (*stmt)->run(); !r) return r;
    if (delta < 0) {
      auto empty = db_.prepare("DELETE FROM search_tags WHERE did = ?1 AND tag = ?2 AND n <= 0");
      if (!empty) return pass(empty);
      (*empty)->bind(1, key.first).bind(2, key.second);
      if (auto r = (*empty)->run(); !r) return r;
    }
  }
  tag_deltas_.clear();
  return {};
}

namespace {

// Every node's rowid, repo, text and note, in rowid order, a thousand rows a
// read: the statement is never open while `each` writes.
struct NodeText {
  std::int64_t rowid;
  std::string did, text;
  std::optional<std::string> note;
  std::optional<std::string_view> note_view() const {
    return note ? std::optional<std::string_view>(*note) : std::nullopt;
  }
};
Result<void> for_each_node(Database& db, const std::function<Result<void>(const NodeText&)>& each) {
  std::int64_t after = 0;
  while (true) {
    std::vector<NodeText> rows;
    {
      auto read = db.prepare(
          "SELECT rowid, did, text, note FROM nodes WHERE rowid > ?1 ORDER BY rowid LIMIT 1000");
      if (!read) return pass(read);
      (*read)->bind(1, after);
      while (true) {
        auto row = (*read)->step();
        if (!row) return pass(row);
        if (!*row) break;
        rows.push_back(
            {(*read)->integer(0), (*read)->text(1), (*read)->text(2), (*read)->optional_text(3)});
      }
    }
    if (rows.empty()) return {};
    for (const auto& row : rows) {
      if (auto r = each(row); !r) return r;
    }
    after = rows.back().rowid;
  }
}

}  // namespace

Result<void> build_search_index(Database& db,
                                const std::function<void(std::int64_t, std::int64_t)>& counted) {
  auto total = query_value<std::int64_t>(db, "SELECT count(*) FROM nodes");
  if (!total) return pass(total);
  SearchUpkeep upkeep(db);
  std::int64_t done = 0;
  auto indexed = for_each_node(db, [&](const NodeText& row) -> Result<void> {
    if (auto r = upkeep.added(row.rowid, row.did, row.text, row.note_view()); !r) return r;
    if (++done % 1000 != 0) return {};
    if (counted) counted(done, total->value_or(0));
    return upkeep.flush();  // a thousand rows' tokens held at most
  });
  if (!indexed) return indexed;
  if (counted) counted(done, total->value_or(0));
  return upkeep.flush();
}

Result<bool> search_index_matches(Database& db) {
  // Every table of the index is there (a search reads them all): one that
  // is gone is a difference, not an error of the check's own.
  auto tables = query_value<std::int64_t>(
      db,
      "SELECT count(*) FROM main.sqlite_schema WHERE type = 'table' AND name IN"
      " ('search_fts', 'search_terms', 'search_codes', 'search_tags')");
  if (!tables) return pass(tables);
  if (tables->value_or(0) != 4) return false;
  // The index rebuilt aside, in a temporary table of the same shape, then
  // both read term by term, row by row, position by position.
  if (auto r = db.exec(
          "DROP TABLE IF EXISTS temp.search_rebuilt;"
          "DROP TABLE IF EXISTS temp.search_rebuilt_vocab;"
          "DROP TABLE IF EXISTS temp.search_kept_vocab;"
          "DROP TABLE IF EXISTS temp.search_tags_rebuilt;"
          "CREATE VIRTUAL TABLE temp.search_rebuilt USING fts5("
          "  text, note, tags, content = '', columnsize = 0, " BULLETED_SEARCH_TOKENIZE ");"
          "CREATE VIRTUAL TABLE temp.search_rebuilt_vocab USING fts5vocab(temp, search_rebuilt, "
          "instance);"
          "CREATE VIRTUAL TABLE temp.search_kept_vocab USING fts5vocab(main, search_fts, "
          "instance);"
          "CREATE TABLE temp.search_tags_rebuilt (did TEXT, tag TEXT, n INTEGER,"
          "  PRIMARY KEY (did, tag)) WITHOUT ROWID;");
      !r) {
    return pass(r);
  }
  std::map<std::string, std::string, std::less<>> codes;
  auto rebuilt = for_each_node(db, [&](const NodeText& row) -> Result<void> {
    auto known = codes.find(row.did);
    if (known == codes.end()) {
      auto code = find_repo_code(db, row.did);
      if (!code) return pass(code);
      known = codes.emplace(row.did, code->value_or("-")).first;
    }
    const auto note = row.note_view();
    const SearchTokens tokens = search_tokens(known->second, row.text, note);
    auto put = db.prepare(
        "INSERT INTO temp.search_rebuilt (rowid, text, note, tags) VALUES (?1, ?2, ?3, ?4)");
    if (!put) return pass(put);
    (*put)->bind(1, row.rowid).bind_view(2, tokens.text).bind_view(3, tokens.note);
    (*put)->bind_view(4, tokens.tags);
    if (auto r = (*put)->run(); !r) return pass(r);
    for (const auto& tag : node_tags(row.text, note)) {
      auto count = db.prepare(
          "INSERT INTO temp.search_tags_rebuilt (did, tag, n) VALUES (?1, ?2, 1)"
          " ON CONFLICT (did, tag) DO UPDATE SET n = n + 1");
      if (!count) return pass(count);
      (*count)->bind(1, row.did).bind(2, tag);
      if (auto r = (*count)->run(); !r) return pass(r);
    }
    return {};
  });
  if (!rebuilt) return pass(rebuilt);
  auto differences = query_value<std::int64_t>(
      db,
      "SELECT (SELECT count(*) FROM (SELECT term, doc, col, offset FROM temp.search_kept_vocab"
      "   EXCEPT SELECT term, doc, col, offset FROM temp.search_rebuilt_vocab))"
      " + (SELECT count(*) FROM (SELECT term, doc, col, offset FROM temp.search_rebuilt_vocab"
      "   EXCEPT SELECT term, doc, col, offset FROM temp.search_kept_vocab))"
      " + (SELECT count(*) FROM (SELECT did, tag, n FROM main.search_tags"
      "   EXCEPT SELECT did, tag, n FROM temp.search_tags_rebuilt))"
      " + (SELECT count(*) FROM (SELECT did, tag, n FROM temp.search_tags_rebuilt"
      "   EXCEPT SELECT did, tag, n FROM main.search_tags))");
  if (!differences) return pass(differences);
  if (auto r = db.exec("DROP TABLE temp.search_rebuilt_vocab; DROP TABLE temp.search_kept_vocab;"
                       "DROP TABLE temp.search_rebuilt; DROP TABLE temp.search_tags_rebuilt;");
      !r) {
    return pass(r);
  }
  return differences->value_or(0) == 0;
}

}  // namespace bulleted::schema
