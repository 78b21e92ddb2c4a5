// The search tests' fixture (search_test.cpp, search_pages_test.cpp): a real
// index file, nodes written as specs, and searches read page by page.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <set>

#include "schema/search_index.hpp"
#include "schema/store.hpp"
#include "tests/support/index_fixture.hpp"
#include "tests/support/store_fixtures.hpp"
#include "tests/support/store_internals.hpp"

namespace bulleted::schema::search_testing {

inline constexpr const char* kAlice = "did:plc:alice";
inline constexpr const char* kBob = "did:plc:bob";

struct Spec {
  std::string did = kAlice;
  std::string rkey;
  std::optional<std::string> parent;
  std::string key = "a0";
  std::string text;
  std::optional<std::string> note;
  bool completed = false;
  std::uint64_t rev = 1;
};

inline RecordOp op_of(const Spec& spec) {
  testing::NodeSpec base;
  base.did = spec.did;
  base.rkey = spec.rkey;
  base.parent_rkey = spec.parent;
  base.sort_key = spec.key;
  base.text = spec.text;
  base.rev = spec.rev;
  RecordOp op = testing::upsert(base);
  op.record->note = spec.note;
  op.record->completed = spec.completed;
  if (spec.rev > 1) op.kind = OpKind::kUpdate;
  return op;
}

// Sibling keys that sort by n.
inline std::string key_of(int n) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "a0%04dV", n);
  return buf;
}

class SearchTest : public testing::IndexTest {
 protected:
  void put(const Spec& spec) { apply({op_of(spec)}); }
  bool index_matches() {
    auto report = store_->integrity_report();
    EXPECT_TRUE(report.has_value()) << report.error().message;
    return report && report->search_index_ok;
  }
  Result<SearchPage> page(std::string_view q, SearchSort sort = SearchSort::kRelevance,
                          std::optional<std::string> root = std::nullopt,
                          std::optional<std::string> cursor = std::nullopt, int limit = 25,
                          std::size_t budget = 20'000, std::string did = kAlice) {
    auto query = parse_search_query(q);
    EXPECT_TRUE(query.has_value()) << q;
    SearchRequest request;
    request.did = did;
    request.q = std::string(q);
    request.query = *query;
    request.root_rkey = std::move(root);
    request.sort = sort;
    request.limit = limit;
    request.cursor = std::move(cursor);
    request.budget_rows = budget;
    request.now_ms = 4'000'000'000'000;
    request.give_way = give_way_;
    return store_->read().search(request);
  }
  std::vector<std::string> found(std::string_view q, SearchSort sort = SearchSort::kRelevance,
                                 std::optional<std::string> root = std::nullopt) {
    auto result = page(q, sort, root, std::nullopt, 100);
    EXPECT_TRUE(result.has_value()) << result.error().message;
    std::vector<std::string> out;
    if (!result) return out;
    for (const auto& r : result->results) out.push_back(r.node.rkey);
    EXPECT_FALSE(result->cursor.has_value());
    if (sort == SearchSort::kRelevance) std::sort(out.begin(), out.end());
    return out;
  }
  // Every page of a search until no cursor: the rkeys in order.
  std::vector<std::string> all_pages(std::string_view q, SearchSort sort, std::size_t budget,
                                     int limit, std::optional<std::string> root = std::nullopt,
                                     const std::function<void()>& between = {}) {
    std::vector<std::string> out;
    std::optional<std::string> cursor;
    for (int pages = 0; pages < 10'000; ++pages) {
      auto result = page(q, sort, root, cursor, limit, budget);
      EXPECT_TRUE(result.has_value()) << result.error().message;
      if (!result) break;
      EXPECT_LE(result->results.size(), static_cast<std::size_t>(limit));
      for (const auto& r : result->results) out.push_back(r.node.rkey);
      if (!result->cursor) return out;
      EXPECT_LE(result->cursor->size(), kMaxSearchCursorBytes);
      cursor = result->cursor;
      if (between) between();
    }
    ADD_FAILURE() << "no end of pages";
    return out;
  }

  std::function<void()> give_way_;  // every search's, when set
};

}  // namespace bulleted::schema::search_testing
