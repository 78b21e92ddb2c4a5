// A search's prefixes: how much FTS5's prefix query would merge for each
// word term's prefix (its instances, counted), which are named as the
// tokens they start, and which are broad and left to the matcher
// (search_run.hpp, kMaxMergedInstances).
#include "schema/search_index.hpp"
#include "schema/search_run.hpp"

namespace bulleted::schema::search {

namespace {

// The first string past every one that starts with `prefix`: its last byte
// one more (a token's bytes are UTF-8, never 0xFF).
std::string past_prefix(std::string prefix) {
  while (!prefix.empty() && static_cast<unsigned char>(prefix.back()) == 0xFF) prefix.pop_back();
  if (!prefix.empty())
    prefix.back() = static_cast<char>(static_cast<unsigned char>(prefix.back()) + 1);
  return prefix;
}

}  // namespace

Result<PrefixTokens> SearchRun::name_prefixes() {
  PrefixTokens named;
  const auto wanted = prefix_keys(r_.query, code_);
  if (wanted.empty()) return named;
  auto count = db_.prepare(kInstancesIn);
  if (!count) return pass(count);
  auto stmt = db_.prepare(kTokenFrom);
  if (!stmt) return pass(stmt);
  std::size_t seeks = 0;
  for (const std::string& prefix : wanted) {
    // What FTS5's prefix query would merge: few, and it is asked.
    const std::string past = past_prefix(prefix);
    (*count)->reset();
    (*count)->bind_view(1, prefix).bind_view(2, past);
    (*count)->bind(3, static_cast<std::int64_t>(kMaxMergedInstances + 1));
    auto counted_row = (*count)->step();
    if (!counted_row) return pass(counted_row);
    const auto instances = static_cast<std::size_t>(*counted_row ? (*count)->integer(0) : 0);
    for (std::size_t i = 0; i < instances; i += kInstancesPerRow) counted();
    if (instances <= kMaxMergedInstances) continue;
    // Many: named as its tokens when they are few and plain (each read as
    // FTS5 reads a whole word, lazily), broad otherwise.
    std::vector<std::string> tokens;
    std::string from = prefix;
    bool counted_all = false;
    bool plain = plain_token(prefix);
    while (tokens.size() <= kMaxNamedTokens && seeks < kMaxTokenSeeks) {
      ++seeks;
      counted();
      (*stmt)->reset();
      (*stmt)->bind_view(1, from);
      auto row = (*stmt)->step();
      if (!row) return pass(row);
      const std::string_view token = *row ? (*stmt)->text_view(0) : std::string_view();
      if (!*row || !token.starts_with(prefix)) {
        counted_all = true;
        break;
      }
      // Only plain tokens are named, which FTS5 reads back as themselves
      // for certain.
      plain = plain && plain_token(token);
      tokens.emplace_back(token);
      // Past every token that starts with this one's whole: no token holds
      // a character below '-'.
      from = tokens.back() + '\x01';
    }
    if (counted_all && plain) {
      named.emplace(prefix, std::move(tokens));
    } else {
      broad_.insert(prefix);
    }
  }
  return named;
}

}  // namespace bulleted::schema::search
