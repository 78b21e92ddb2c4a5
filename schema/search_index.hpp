// The search index (DESIGN.md section 10), kept in the transaction of every
// write of the node rows (schema/store.cpp: inserts, updates, deletes,
// repo deletion) and built for older files by schema 12's migration.
//
// One FTS5 table, contentless (the texts are the node rows'), with three
// columns the app view prepares itself rather than handing SQLite the
// texts: `text` and `note` hold the words of each (word_spans: runs of
// letters, marks and digits, every CJK character a word of its own) and
// `tags` the tags both carry. Every token starts with its repo's code (six
// letters, search_codes): a repo's words are a range of the index of their
// own, so a search, a prefix above all, reads that repo's part only and
// costs the same whatever other repos hold. unicode61 then folds case and
// diacritics. A tag's token is the code, '_', 'h' for '#' or 'a' for '@',
// and its folded name ('_' and '-' are token characters; no word holds
// either).
//
// A contentless table forgets what it indexed: a row is taken out by
// writing the same tokens again as a 'delete', computed from the row's old
// text and note, which the store reads before it changes them.
//
// Beside it, search_tags counts each repo's tags: how many nodes carry each
// (lowercased, with its sigil) in text or note, for getTags.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "schema/error.hpp"
#include "schema/search_query.hpp"

namespace bulleted::schema {

class Database;

// The index's tokenizer: what schema 12 made the table with, and what
// `check` rebuilds it with.
#define BULLETED_SEARCH_TOKENIZE \
  "tokenize = \"unicode61 remove_diacritics 2 categories 'L* M* N* Co' tokenchars '-_'\""

// A node's tokens as the index holds them.
struct SearchTokens {
  std::string text;
  std::string note;
  std::string tags;
  bool operator==(const SearchTokens&) const = default;
};
SearchTokens search_tokens(std::string_view code, std::string_view text,
                           std::optional<std::string_view> note);
// The distinct tags of a node's text and note, lowercased with their sigil.
std::vector<std::string> node_tags(std::string_view text, std::optional<std::string_view> note);
// A tag lowercased, as counted and as getTags's prefix compares.
std::string fold_tag(std::string_view tag);
// The code of the n-th repo (n >= 1): six letters.
std::string repo_code_of(std::int64_t n);

// A word term ends with a prefix, which FTS5 answers by merging the whole
// doclist of every token that starts with it before it gives its first row
// (6 ms for a word in 100,000 of a repo's bullets). Named as the tokens
// themselves, OR'd, it reads them lazily, as it reads a whole word (0.7 ms
// for the same word's two tokens). A prefix's token can be named when the
// app view folds it as unicode61 does: ASCII letters and digits, lowercased.
// That token, or nullopt for any other word.
std::optional<std::string> prefix_token(std::string_view code, std::string_view word);
// Whether `text` is all lowercase ASCII letters and digits (a plain token:
// FTS5 reads it back as itself).
bool plain_token(std::string_view text);
// The prefix tokens of `query`'s word terms that can be named, each once.
std::vector<std::string> prefix_tokens(const SearchQuery& query, std::string_view code);
// A prefix token and every token of the index that starts with it (itself
// included when the index holds it; none: no node has such a word).
using PrefixTokens = std::map<std::string, std::vector<std::string>, std::less<>>;
// What a word term's prefix is looked up by among the index's tokens: the
// code, then the word folded as the matcher folds it (fold_word; for a
// plain word, its prefix_token). Each of `query`'s once.
std::optional<std::string> prefix_key(std::string_view code, std::string_view word);
std::vector<std::string> prefix_keys(const SearchQuery& query, std::string_view code);
// Prefixes (prefix_key) that start too many of the index's tokens to ask
// of it: FTS5 would merge the doclists of every one of them, a cost no row
// count sees.
using PrefixKeys = std::set<std::string, std::less<>>;

// The FTS5 expression for the clauses of `query` the index answers: every
// positive clause whose terms are all words or tags, and the negations of
// words and tags; nullopt when no positive clause is such. Every token is
// quoted; nothing the user typed reaches FTS5's syntax otherwise.
// `answered` gets whether each clause is fully answered by the expression.
// A word term whose prefix token is in `named` matches those tokens as
// whole words instead of the prefix. A word term whose prefix is in `broad`
// is left to the matcher: a clause with one is not answered (a phrase's
// words before it still narrow a positive clause), and a negated one is
// left out.
std::optional<std::string> fts_expression(const SearchQuery& query, std::string_view code,
                                          std::vector<bool>* answered = nullptr,
                                          const PrefixTokens* named = nullptr,
                                          const PrefixKeys* broad = nullptr);

// Keeps the index through one transaction's writes. The index's rows are
// written at flush(), in rowid order, each row's calls folded into what
// they change (FTS5 writes its pending terms out as a new segment whenever
// a rowid comes lower than the one before it: in call order, a batch of
// edits scattered over an outline made a segment, and merges, per edit).
class SearchUpkeep {
 public:
  explicit SearchUpkeep(Database& db) : db_(db) {}

  Result<void> added(std::int64_t rowid, std::string_view did, std::string_view text,
                     std::optional<std::string_view> note);
  Result<void> removed(std::int64_t rowid, std::string_view did, std::string_view text,
                       std::optional<std::string_view> note);
  // The repo's nodes all go (its deletion): call before they are deleted.
  Result<void> repo_removed(std::string_view did);
  // Writes the index's rows and the tag counts the calls since the last
  // flush changed; call before the commit (nothing is written without it).
  Result<void> flush();

 private:
  struct Pending {
    std::int64_t rowid;
    bool remove;
    SearchTokens tokens;
  };

  Result<std::string> code(std::string_view did, bool create);
  Result<void> write_rows();
  Result<void> write_row(std::size_t first, std::size_t end);
  Result<void> write(std::int64_t rowid, const SearchTokens& tokens, bool remove);

  Database& db_;
  std::vector<Pending> pending_;
  std::map<std::string, std::string, std::less<>> codes_;
  std::map<std::pair<std::string, std::string>, std::int64_t> tag_deltas_;
};

// A repo's code if it has one (a repo with no node ever indexed has none).
Result<std::optional<std::string>> find_repo_code(Database& db, std::string_view did);

// Schema 12's step: every node indexed, with progress.
Result<void> build_search_index(Database& db,
                                const std::function<void(std::int64_t, std::int64_t)>& counted);

// `check`: whether the index and the tag counts hold exactly what the node
// rows say (rebuilt aside and compared token by token).
Result<bool> search_index_matches(Database& db);

}  // namespace bulleted::schema
