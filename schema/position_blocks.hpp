// The counted blocks of positions as rows (schema/positions.hpp says what
// they are): how a level is scanned, which block holds a key, how blocks are
// written and split. Shared by the reads, the upkeep and the check of
// positions; internal to schema/ (included by positions_*.cpp only).
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "schema/positions.hpp"
#include "schema/sqlite.hpp"

namespace bulleted::schema::position_blocks {

// A block: its lower bound and the nodes in its range.
struct Block {
  SiblingKey lo;
  std::int64_t n = 0;
};

// A block as a scan meets it: its bound in the statement's row (valid until
// the next step), so that passing over a block copies nothing.
struct BlockRow {
  std::string_view lo_key;
  std::string_view lo_rkey;
  std::int64_t n = 0;

  Block block() const { return Block{{std::string(lo_key), std::string(lo_rkey)}, n}; }
  bool after(const SiblingKey& key) const {  // key < lo
    return std::tie(key.sort_key, key.rkey) < std::tie(lo_key, lo_rkey);
  }
  bool at_or_after(const SiblingKey& key) const {
    return !(std::tie(lo_key, lo_rkey) < std::tie(key.sort_key, key.rkey));
  }
};

inline const SiblingKey kBottom{"", ""};

// A level's blocks from a bound on, in order.
constexpr const char* kLevelFrom =
    "SELECT lo_key, lo_rkey, n FROM order_blocks WHERE grp = ?1 AND lvl = ?2"
    " AND (lo_key, lo_rkey) >= (?3, ?4) ORDER BY lo_key, lo_rkey";

// The level's blocks from `from` (a bound of the level) on, in order, until
// `visit` returns false.
template <class Visit>
inline Result<void> scan_level(Database& db, std::string_view group, int level,
                               const SiblingKey& from, Visit&& visit) {
  auto stmt = db.prepare(kLevelFrom);
  if (!stmt) return pass(stmt);
  (*stmt)->bind_view(1, group).bind(2, level).bind_view(3, from.sort_key).bind_view(4, from.rkey);
  while (true) {
    auto row = (*stmt)->step();
    if (!row) return pass(row);
    if (!*row) return {};
    if (!visit(BlockRow{(*stmt)->text_view(0), (*stmt)->text_view(1), (*stmt)->integer(2)})) {
      return {};
    }
  }
}

// The block of `level` whose range holds `key`.
inline Result<std::optional<Block>> containing(Database& db, std::string_view group, int level,
                                               const SiblingKey& key) {
  auto stmt = db.prepare(
      "SELECT lo_key, lo_rkey, n FROM order_blocks WHERE grp = ?1 AND lvl = ?2"
      " AND (lo_key, lo_rkey) <= (?3, ?4) ORDER BY lo_key DESC, lo_rkey DESC LIMIT 1");
  if (!stmt) return pass(stmt);
  (*stmt)->bind_view(1, group).bind(2, level).bind_view(3, key.sort_key).bind_view(4, key.rkey);
  auto row = (*stmt)->step();
  if (!row) return pass(row);
  if (!*row) return std::optional<Block>();
  return std::optional<Block>(Block{{(*stmt)->text(0), (*stmt)->text(1)}, (*stmt)->integer(2)});
}

// Nodes of the group in [from, to).
inline Result<std::int64_t> count_range(Database& db, std::string_view group,
                                        const SiblingKey& from, const SiblingKey& to) {
  auto count = query_value<std::int64_t>(
      db,
      "SELECT count(*) FROM nodes WHERE grp = ?1 AND (sort_key, rkey) >= (?2, ?3)"
      " AND (sort_key, rkey) < (?4, ?5)",
      group, from.sort_key, from.rkey, to.sort_key, to.rkey);
  if (!count) return pass(count);
  return count->value_or(0);
}

// Up to `count` nodes from the one `offset` places after `from` (a bound)
// in the group.
inline Result<std::vector<SiblingKey>> nodes_after(Database& db, std::string_view group,
                                                   const SiblingKey& from, std::int64_t offset,
                                                   int count) {
  auto stmt = db.prepare(
      "SELECT sort_key, rkey FROM nodes WHERE grp = ?1 AND (sort_key, rkey) >= (?2, ?3)"
      " ORDER BY sort_key, rkey LIMIT ?5 OFFSET ?4");
  if (!stmt) return pass(stmt);
  (*stmt)
      ->bind_view(1, group)
      .bind_view(2, from.sort_key)
      .bind_view(3, from.rkey)
      .bind(4, offset)
      .bind(5, count);
  std::vector<SiblingKey> keys;
  while (true) {
    auto row = (*stmt)->step();
    if (!row) return pass(row);
    if (!*row) return keys;
    keys.push_back(SiblingKey{(*stmt)->text(0), (*stmt)->text(1)});
  }
}

inline Result<std::optional<SiblingKey>> node_after(Database& db, std::string_view group,
                                                    const SiblingKey& from, std::int64_t offset) {
  auto keys = nodes_after(db, group, from, offset, 1);
  if (!keys) return pass(keys);
  if (keys->empty()) return std::optional<SiblingKey>();
  return std::optional<SiblingKey>(std::move(keys->front()));
}

// Runs `sql` with a block bound as (?1 group, ?2 level, ?3 and ?4 its bound,
// ?5 its count).
inline Result<void> run_with_block(Database& db, const char* sql, std::string_view group, int level,
                                   const Block& block) {
  auto stmt = db.prepare(sql);
  if (!stmt) return pass(stmt);
  (*stmt)
      ->bind_view(1, group)
      .bind(2, level)
      .bind_view(3, block.lo.sort_key)
      .bind_view(4, block.lo.rkey)
      .bind(5, block.n);
  return (*stmt)->run();
}

inline Result<void> insert_block(Database& db, std::string_view group, int level,
                                 const Block& block) {
  return run_with_block(
      db, "INSERT INTO order_blocks (grp, lvl, lo_key, lo_rkey, n) VALUES (?1, ?2, ?3, ?4, ?5)",
      group, level, block);
}

inline Result<void> set_count(Database& db, std::string_view group, int level, const Block& block) {
  return run_with_block(
      db,
      "UPDATE order_blocks SET n = ?5 WHERE grp = ?1 AND lvl = ?2 AND lo_key = ?3 AND lo_rkey = ?4",
      group, level, block);
}

// The blocks of `level` - 1 inside `parent` (a block of `level` >= 2), in
// order: the next bound of `level` ends them.
inline Result<std::vector<Block>> children_of(Database& db, std::string_view group, int level,
                                              const Block& parent) {
  std::optional<SiblingKey> end;
  if (auto r = scan_level(db, group, level, parent.lo,
                          [&](const BlockRow& row) {
                            if (!row.after(parent.lo)) return true;  // the parent itself
                            end = row.block().lo;
                            return false;
                          });
      !r) {
    return pass(r);
  }
  std::vector<Block> children;
  if (auto r = scan_level(db, group, level - 1, parent.lo,
                          [&](const BlockRow& row) {
                            if (end && row.at_or_after(*end)) return false;
                            children.push_back(row.block());
                            return true;
                          });
      !r) {
    return pass(r);
  }
  return children;
}

// Splits the blocks holding `key` that outgrew twice the fan-out, bottom up
// (a split adds a child to the block above).
inline Result<void> split_around(Database& db, std::string_view group, const SiblingKey& key) {
  for (int level = 1; level <= kBlockLevels; ++level) {
    auto block = containing(db, group, level, key);
    if (!block) return pass(block);
    if (!*block) return {};
    Block right;
    if (level == 1) {
      if ((*block)->n <= 2 * kBlockFanout) return {};
      auto middle = node_after(db, group, (*block)->lo, (*block)->n / 2);
      if (!middle) return pass(middle);
      if (!*middle) return {};  // the count is off; `check` reports it
      right = Block{std::move(**middle), (*block)->n - (*block)->n / 2};
    } else {
      auto children = children_of(db, group, level, **block);
      if (!children) return pass(children);
      if (static_cast<std::int64_t>(children->size()) <= 2 * kBlockFanout) return {};
      const std::size_t half = children->size() / 2;
      right.lo = (*children)[half].lo;
      for (std::size_t i = half; i < children->size(); ++i) right.n += (*children)[i].n;
    }
    (*block)->n -= right.n;
    if (auto r = set_count(db, group, level, **block); !r) return r;
    if (auto r = insert_block(db, group, level, right); !r) return r;
  }
  return {};
}

}  // namespace bulleted::schema::position_blocks
