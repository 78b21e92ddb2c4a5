// libFuzzer target: search queries from arbitrary bytes. Parsing never
// crashes and either refuses with kInvalidRequest or gives a query of 1 to
// 16 terms with a positive clause; the FTS5 expression built from it is
// accepted by SQLite's own FTS5 parser (nothing typed reaches its syntax
// unquoted), in a real in-memory table made with the index's tokenizer;
// words and tags found in the bytes (when they are UTF-8) are in bounds,
// on character boundaries and in order; the matcher reads any text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "schema/node_record.hpp"
#include "schema/search_index.hpp"
#include "schema/search_match.hpp"
#include "schema/search_query.hpp"
#include "schema/sqlite.hpp"

using namespace bulleted::schema;

namespace {

Database& index() {
  static std::unique_ptr<Database> db = [] {
    auto opened = Database::open(":memory:", 0);
    if (!opened) std::abort();
    if (!(*opened)->exec(
            "CREATE VIRTUAL TABLE search_fts USING fts5(text, note, tags, content = '',"
            " columnsize = 0, " BULLETED_SEARCH_TOKENIZE ");"
            "INSERT INTO search_fts (rowid, text, note, tags) VALUES"
            " (1, 'aaaaaaword aaaaaa東', '', 'aaaaaa_hwork')")) {
      std::abort();
    }
    return std::move(*opened);
  }();
  return *db;
}

bool on_boundary(std::string_view text, std::size_t at) {
  return at == text.size() || (static_cast<unsigned char>(text[at]) & 0xC0) != 0x80;
}

void check_spans(std::string_view text, const std::vector<WordSpan>& spans) {
  std::size_t last = 0;
  for (const auto& span : spans) {
    if (span.start < last || span.start >= span.end || span.end > text.size()) std::abort();
    if (!on_boundary(text, span.start) || !on_boundary(text, span.end)) std::abort();
    last = span.end;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view q(reinterpret_cast<const char*>(data), size);
  auto parsed = parse_search_query(q);
  if (!parsed) {
    if (parsed.error().code != bulleted::ErrorCode::kInvalidRequest) std::abort();
  } else {
    std::size_t terms = 0;
    bool positive = false;
    for (const auto& clause : parsed->all) {
      if (clause.any.empty() || (clause.negated && clause.any.size() != 1)) std::abort();
      terms += clause.any.size();
      positive = positive || !clause.negated;
    }
    if (terms == 0 || terms > kMaxQueryTerms || !positive) std::abort();
    (void)to_string(*parsed);
    if (const auto expression = fts_expression(*parsed, "aaaaaa")) {
      auto stmt = index().prepare("SELECT count(*) FROM search_fts WHERE search_fts MATCH ?1");
      if (!stmt) std::abort();
      (*stmt)->bind_view(1, *expression);
      if (!(*stmt)->step()) std::abort();  // an FTS5 syntax error would fail the step
      // The same with every prefix that can be named named: as one token,
      // three, or none.
      PrefixTokens named;
      for (const auto& token : prefix_tokens(*parsed, "aaaaaa")) {
        auto& tokens = named[token];
        if (token.size() % 3 != 0) tokens.push_back(token);
        if (token.size() % 3 == 1) tokens.insert(tokens.end(), {token + "s", token + "0"});
      }
      const auto with_names = fts_expression(*parsed, "aaaaaa", nullptr, &named);
      if (!with_names) std::abort();
      (*stmt)->reset();
      (*stmt)->bind_view(1, *with_names);
      if (!(*stmt)->step()) std::abort();
      // And with every other prefix broad: left out, or a phrase's head,
      // and never a clause left answered with one.
      PrefixKeys broad;
      for (const auto& key : prefix_keys(*parsed, "aaaaaa")) {
        if (key.size() % 2 == 0) broad.insert(key);
      }
      std::vector<bool> answered;
      if (const auto narrowed = fts_expression(*parsed, "aaaaaa", &answered, &named, &broad)) {
        (*stmt)->reset();
        (*stmt)->bind_view(1, *narrowed);
        if (!(*stmt)->step()) std::abort();
      }
      for (std::size_t c = 0; c < parsed->all.size(); ++c) {
        for (const auto& term : parsed->all[c].any) {
          if (term.kind != SearchTerm::Kind::kWords || term.words.empty()) continue;
          const auto key = prefix_key("aaaaaa", term.words.back());
          if (key && broad.contains(*key) && answered[c]) std::abort();
        }
      }
    }
    const SearchMatcher matcher(*parsed, 0);
    (void)matcher.matches({q, q});
    (void)matcher.score({q, std::nullopt});
  }
  if (is_valid_utf8(q)) {
    check_spans(q, word_spans(q));
    check_spans(q, tag_spans(q));
    // Words are searched without a column filter: no word token may hold
    // the '_' that follows the code in every tag token.
    const SearchTokens tokens = search_tokens("aaaaaa", q, q);
    if (tokens.text.find('_') != std::string::npos) std::abort();
    if (tokens.note.find('_') != std::string::npos) std::abort();
    if (!tokens.tags.empty() && !tokens.tags.starts_with("aaaaaa_")) std::abort();
  }
  return 0;
}
