#include "schema/positions.hpp"

#include <algorithm>
#include <tuple>

#include "schema/sqlite.hpp"

namespace bulleted::schema {
namespace {

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

const SiblingKey kBottom{"", ""};

// A level's blocks from a bound on, in order.
constexpr const char* kLevelFrom =
    "SELECT lo_key, lo_rkey, n FROM order_blocks WHERE grp = ?1 AND lvl = ?2"
    " AND (lo_key, lo_rkey) >= (?3, ?4) ORDER BY lo_key, lo_rkey";

// The level's blocks from `from` (a bound of the level) on, in order, until
// `visit` returns false.
template <class Visit>
Result<void> scan_level(Database& db, std::string_view group, int level, const SiblingKey& from,
                        Visit&& visit) {
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
Result<std::optional<Block>> containing(Database& db, std::string_view group, int level,
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
Result<std::int64_t> count_range(Database& db, std::string_view group, const SiblingKey& from,
                                 const SiblingKey& to) {
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
Result<std::vector<SiblingKey>> nodes_after(Database& db, std::string_view group,
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

Result<std::optional<SiblingKey>> node_after(Database& db, std::string_view group,
                                             const SiblingKey& from, std::int64_t offset) {
  auto keys = nodes_after(db, group, from, offset, 1);
  if (!keys) return pass(keys);
  if (keys->empty()) return std::optional<SiblingKey>();
  return std::optional<SiblingKey>(std::move(keys->front()));
}

// Runs `sql` with a block bound as (?1 group, ?2 level, ?3 and ?4 its bound,
// ?5 its count).
Result<void> run_with_block(Database& db, const char* sql, std::string_view group, int level,
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

Result<void> insert_block(Database& db, std::string_view group, int level, const Block& block) {
  return run_with_block(
      db, "INSERT INTO order_blocks (grp, lvl, lo_key, lo_rkey, n) VALUES (?1, ?2, ?3, ?4, ?5)",
      group, level, block);
}

Result<void> set_count(Database& db, std::string_view group, int level, const Block& block) {
  return run_with_block(
      db,
      "UPDATE order_blocks SET n = ?5 WHERE grp = ?1 AND lvl = ?2 AND lo_key = ?3 AND lo_rkey = ?4",
      group, level, block);
}

// The blocks of `level` - 1 inside `parent` (a block of `level` >= 2), in
// order: the next bound of `level` ends them.
Result<std::vector<Block>> children_of(Database& db, std::string_view group, int level,
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
Result<void> split_around(Database& db, std::string_view group, const SiblingKey& key) {
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

}  // namespace

namespace {

// Steps `stmt` until it has ended, then no more (SQLite would start it over).
Result<bool> step_until_done(Statement& stmt, bool& done) {
  if (done) return false;
  auto row = stmt.step();
  if (row && !*row) done = true;
  return row;
}

// The block of a level holding a key (the last that starts at or before
// it), the nodes before it in the range searched, and where it ends (none
// past the level's last block).
struct Holder {
  Block block;
  std::int64_t before = 0;
  std::optional<SiblingKey> end;
};

// The blocks of `level` in [from, to) (to: none for the whole level), whose
// counts add up to `total`, read from both ends in turn: a key near either
// end costs a few rows. None when no block of the range starts at or before
// `key`.
Result<std::optional<Holder>> find_holder(Database& db, std::string_view group, int level,
                                          const SiblingKey& from,
                                          const std::optional<SiblingKey>& to, std::int64_t total,
                                          const SiblingKey& key) {
  auto up = db.prepare(kLevelFrom);
  if (!up) return pass(up);
  (*up)->bind_view(1, group).bind(2, level).bind_view(3, from.sort_key).bind_view(4, from.rkey);
  auto down = to ? db.prepare(
                       "SELECT lo_key, lo_rkey, n FROM order_blocks WHERE grp = ?1 AND lvl = ?2"
                       " AND (lo_key, lo_rkey) >= (?3, ?4) AND (lo_key, lo_rkey) < (?5, ?6)"
                       " ORDER BY lo_key DESC, lo_rkey DESC")
                 : db.prepare(
                       "SELECT lo_key, lo_rkey, n FROM order_blocks WHERE grp = ?1 AND lvl = ?2"
                       " AND (lo_key, lo_rkey) >= (?3, ?4) ORDER BY lo_key DESC, lo_rkey DESC");
  if (!down) return pass(down);
  (*down)->bind_view(1, group).bind(2, level).bind_view(3, from.sort_key).bind_view(4, from.rkey);
  if (to) (*down)->bind_view(5, to->sort_key).bind_view(6, to->rkey);
  std::int64_t up_sum = 0;  // the blocks read going up, up_last included
  std::optional<Block> up_last;
  std::int64_t down_sum = 0;  // the blocks read going down: all after the key
  std::optional<SiblingKey> down_last;
  bool down_done = false;
  while (true) {
    auto row = (*up)->step();
    if (!row) return pass(row);
    if (!*row || BlockRow{(*up)->text_view(0), (*up)->text_view(1), 0}.after(key)) {
      if (!up_last) return std::optional<Holder>();
      std::optional<SiblingKey> end = to;
      if (*row) end = SiblingKey{(*up)->text(0), (*up)->text(1)};
      const std::int64_t n = up_last->n;
      return std::optional<Holder>(Holder{std::move(*up_last), up_sum - n, std::move(end)});
    }
    up_sum += (*up)->integer(2);
    up_last = Block{{(*up)->text(0), (*up)->text(1)}, (*up)->integer(2)};
    row = step_until_done(**down, down_done);
    if (!row) return pass(row);
    if (!*row) continue;
    const BlockRow block{(*down)->text_view(0), (*down)->text_view(1), (*down)->integer(2)};
    if (!block.after(key)) {
      // The range's counts add up to `total` (else `check` says so).
      const std::int64_t before = std::max<std::int64_t>(0, total - down_sum - block.n);
      std::optional<SiblingKey> end = down_last ? std::move(down_last) : to;
      return std::optional<Holder>(Holder{block.block(), before, std::move(end)});
    }
    down_sum += block.n;
    down_last = block.block().lo;
  }
}

// Nodes of the group in [from, key), where [from, to) holds `total` nodes,
// read from both ends in turn (to: none, the rest of the group, from `from`).
Result<std::int64_t> count_in_block(Database& db, std::string_view group, const SiblingKey& from,
                                    const std::optional<SiblingKey>& to, std::int64_t total,
                                    const SiblingKey& key) {
  if (!to) return count_range(db, group, from, key);
  auto in_block = [&](const char* sql) {
    auto stmt = db.prepare(sql);
    if (stmt) {
      (*stmt)
          ->bind_view(1, group)
          .bind_view(2, from.sort_key)
          .bind_view(3, from.rkey)
          .bind_view(4, to->sort_key)
          .bind_view(5, to->rkey);
    }
    return stmt;
  };
  auto up = in_block(
      "SELECT sort_key, rkey FROM nodes WHERE grp = ?1 AND (sort_key, rkey) >= (?2, ?3)"
      " AND (sort_key, rkey) < (?4, ?5) ORDER BY sort_key, rkey");
  if (!up) return pass(up);
  auto down = in_block(
      "SELECT sort_key, rkey FROM nodes WHERE grp = ?1 AND (sort_key, rkey) >= (?2, ?3)"
      " AND (sort_key, rkey) < (?4, ?5) ORDER BY sort_key DESC, rkey DESC");
  if (!down) return pass(down);
  using Key = std::tuple<std::string_view, std::string_view>;
  auto before_key = [&](Statement& stmt) {
    return Key(stmt.text_view(0), stmt.text_view(1)) < Key(key.sort_key, key.rkey);
  };
  std::int64_t below = 0;  // nodes read going up, all before the key
  std::int64_t above = 0;  // nodes read going down, all at or after it
  bool down_done = false;
  while (true) {
    auto row = (*up)->step();
    if (!row) return pass(row);
    if (!*row || !before_key(**up)) return below;
    ++below;
    row = step_until_done(**down, down_done);
    if (!row) return pass(row);
    if (!*row) continue;
    if (before_key(**down)) return std::max<std::int64_t>(0, total - above);
    ++above;
  }
}

}  // namespace

Result<std::int64_t> count_before(Database& db, std::string_view group, const SiblingKey& key,
                                  std::int64_t size) {
  // Top down: each level's holder inside the one above; what is before adds up.
  SiblingKey from = kBottom;
  std::optional<SiblingKey> to;
  std::int64_t total = size;
  std::int64_t before = 0;
  for (int level = kBlockLevels; level >= 1; --level) {
    auto holder = find_holder(db, group, level, from, to, total, key);
    if (!holder) return pass(holder);
    if (!*holder) break;  // no blocks: count the nodes directly
    before += (*holder)->before;
    from = std::move((*holder)->block.lo);
    to = std::move((*holder)->end);
    total = (*holder)->block.n;
  }
  auto rest = count_in_block(db, group, from, to, total, key);
  if (!rest) return pass(rest);
  return before + *rest;
}

Result<std::vector<SiblingKey>> keys_at(Database& db, std::string_view group, std::int64_t index,
                                        int count) {
  if (index < 0 || count < 1) return std::vector<SiblingKey>();
  SiblingKey from = kBottom;
  std::int64_t remaining = index;
  for (int level = kBlockLevels; level >= 1; --level) {
    std::optional<SiblingKey> holder;
    bool any = false;
    auto r = scan_level(db, group, level, from, [&](const BlockRow& row) {
      any = true;
      if (remaining < row.n) {
        holder = row.block().lo;
        return false;
      }
      remaining -= row.n;
      return true;
    });
    if (!r) return pass(r);
    if (!any) break;                                // no blocks
    if (!holder) return std::vector<SiblingKey>();  // past the end
    from = std::move(*holder);
  }
  return nodes_after(db, group, from, remaining, count);
}

Result<std::optional<SiblingKey>> key_at(Database& db, std::string_view group, std::int64_t index) {
  auto keys = keys_at(db, group, index, 1);
  if (!keys) return pass(keys);
  if (keys->empty()) return std::optional<SiblingKey>();
  return std::optional<SiblingKey>(std::move(keys->front()));
}

namespace {

bool before(const SiblingKey& a, const SiblingKey& b) {
  return std::tie(a.sort_key, a.rkey) < std::tie(b.sort_key, b.rkey);
}

// The block of `level` whose range holds `key`, and the bound of the next
// block (none past the level's last): where the holder's range ends.
struct Span {
  Block holder;
  std::optional<SiblingKey> end;
};

// The bound of the block of level ?2 of group ?1 that holds the key (?3, ?4).
#define HOLDER_OF_KEY                                                     \
  "(SELECT lo_key, lo_rkey FROM order_blocks WHERE grp = ?1 AND lvl = ?2" \
  " AND (lo_key, lo_rkey) <= (?3, ?4) ORDER BY lo_key DESC, lo_rkey DESC LIMIT 1)"

Result<std::optional<Span>> span_of(Database& db, std::string_view group, int level,
                                    const SiblingKey& key) {
  auto stmt = db.prepare(
      "SELECT lo_key, lo_rkey, n FROM order_blocks WHERE grp = ?1 AND lvl = ?2"
      " AND (lo_key, lo_rkey) >= " HOLDER_OF_KEY " ORDER BY lo_key, lo_rkey LIMIT 2");
  if (!stmt) return pass(stmt);
  (*stmt)->bind_view(1, group).bind(2, level).bind_view(3, key.sort_key).bind_view(4, key.rkey);
  auto row = (*stmt)->step();
  if (!row) return pass(row);
  if (!*row) return std::optional<Span>();
  Span span{Block{{(*stmt)->text(0), (*stmt)->text(1)}, (*stmt)->integer(2)}, std::nullopt};
  row = (*stmt)->step();
  if (!row) return pass(row);
  if (*row) span.end = SiblingKey{(*stmt)->text(0), (*stmt)->text(1)};
  return std::optional<Span>(std::move(span));
}

// Moves by `delta` the count of the block of `level` holding `key`, found and
// written in one statement.
Result<void> move_one(Database& db, std::string_view group, int level, const SiblingKey& key,
                      int delta) {
  auto stmt = db.prepare(
      "UPDATE order_blocks SET n = n + ?5 WHERE grp = ?1 AND lvl = ?2"
      " AND (lo_key, lo_rkey) = " HOLDER_OF_KEY);
  if (!stmt) return pass(stmt);
  (*stmt)
      ->bind_view(1, group)
      .bind(2, level)
      .bind_view(3, key.sort_key)
      .bind_view(4, key.rkey)
      .bind(5, delta);
  return (*stmt)->run();
}

}  // namespace

Result<void> move_blocks(Database& db, std::string_view group, std::int64_t size,
                         std::vector<std::pair<SiblingKey, int>> moves) {
  std::sort(moves.begin(), moves.end(),
            [](const auto& a, const auto& b) { return before(a.first, b.first); });
  // Nodes that came into level-1 blocks that may now be past twice the
  // fan-out: only there can a split start (a block above grows only by a
  // split below).
  std::vector<SiblingKey> grown;
  std::int64_t blocks = size;  // about how many blocks the level has
  for (int level = 1; level <= kBlockLevels; ++level) {
    blocks = std::max<std::int64_t>(1, blocks / kBlockFanout);
    const auto count = static_cast<std::int64_t>(moves.size());
    if (count < 2 * blocks) {
      // Fewer than two moves a block, as a rule: each move finds and moves
      // its own block in one statement (finding where a block ends, to
      // share it, would cost more than it saves).
      for (const auto& [key, delta] : moves) {
        if (auto r = move_one(db, group, level, key, delta); !r) return r;
        if (level == 1 && delta > 0) grown.push_back(key);
      }
      continue;
    }
    // In key order, each block met once: found by the first move it holds,
    // with where it ends, and its count moved by the sum of all of them in
    // one write. The level's last move needs no end: it shares with none.
    for (std::size_t first = 0; first < moves.size();) {
      const auto& [key, delta_of_one] = moves[first];
      if (first + 1 == moves.size()) {
        if (auto r = move_one(db, group, level, key, delta_of_one); !r) return r;
        if (level == 1 && delta_of_one > 0) grown.push_back(key);
        break;
      }
      auto span = span_of(db, group, level, key);
      if (!span) return pass(span);
      if (!*span) break;  // no blocks at this level
      std::size_t last = first;
      std::int64_t delta = 0;
      while (last < moves.size() && (!(*span)->end || before(moves[last].first, *(*span)->end))) {
        delta += moves[last].second;
        ++last;
      }
      if (delta != 0) {
        const Block moved{(*span)->holder.lo, delta};
        if (auto r = run_with_block(db,
                                    "UPDATE order_blocks SET n = n + ?5 WHERE grp = ?1 AND lvl = ?2"
                                    " AND lo_key = ?3 AND lo_rkey = ?4",
                                    group, level, moved);
            !r) {
          return r;
        }
      }
      if (level == 1 && (*span)->holder.n + delta > 2 * kBlockFanout) {
        for (std::size_t i = first; i < last; ++i) {
          if (moves[i].second > 0) grown.push_back(moves[i].first);
        }
      }
      first = last;
    }
  }
  for (const SiblingKey& key : grown) {
    if (auto r = split_around(db, group, key); !r) return r;
  }
  return {};
}

Result<void> build_blocks(Database& db, std::string_view group) {
  {
    auto clear = db.prepare("DELETE FROM order_blocks WHERE grp = ?1");
    if (!clear) return pass(clear);
    (*clear)->bind_view(1, group);
    if (auto r = (*clear)->run(); !r) return r;
  }
  std::vector<Block> leaves;
  {
    auto stmt =
        db.prepare("SELECT sort_key, rkey FROM nodes WHERE grp = ?1 ORDER BY sort_key, rkey");
    if (!stmt) return pass(stmt);
    (*stmt)->bind_view(1, group);
    std::int64_t i = 0;
    while (true) {
      auto row = (*stmt)->step();
      if (!row) return pass(row);
      if (!*row) break;
      if (i++ % kBlockFanout == 0) {
        leaves.push_back(
            Block{leaves.empty() ? kBottom : SiblingKey{(*stmt)->text(0), (*stmt)->text(1)}, 0});
      }
      ++leaves.back().n;
    }
  }
  {
    auto mark = db.prepare("UPDATE group_counts SET blocked = 1 WHERE grp = ?1");
    if (!mark) return pass(mark);
    (*mark)->bind_view(1, group);
    if (auto r = (*mark)->run(); !r) return r;
  }
  // Each level groups kBlockFanout blocks of the one below (half of what a
  // block may hold before it splits: room to grow either way).
  std::vector<Block> level = std::move(leaves);
  for (int depth = 1; depth <= kBlockLevels && !level.empty(); ++depth) {
    std::vector<Block> above;
    for (std::size_t i = 0; i < level.size(); ++i) {
      if (auto r = insert_block(db, group, depth, level[i]); !r) return r;
      if (i % kBlockFanout == 0) above.push_back(Block{level[i].lo, 0});
      above.back().n += level[i].n;
    }
    level = std::move(above);
  }
  return {};
}

Result<void> build_missing_blocks(Database& db,
                                  const std::function<void(std::int64_t, std::int64_t)>& progress) {
  std::vector<std::pair<std::string, std::int64_t>> groups;
  {
    auto stmt =
        db.prepare("SELECT g.grp, g.n FROM group_counts g WHERE g.n > ?1 AND g.blocked = 0");
    if (!stmt) return pass(stmt);
    (*stmt)->bind(1, kBlockedGroup);
    while (true) {
      auto row = (*stmt)->step();
      if (!row) return pass(row);
      if (!*row) break;
      groups.emplace_back((*stmt)->text(0), (*stmt)->integer(1));
    }
  }
  std::int64_t total = 0;
  for (const auto& group : groups) total += group.second;
  std::int64_t done = 0;
  if (progress) progress(done, total);
  for (const auto& [group, size] : groups) {
    if (auto r = build_blocks(db, group); !r) return r;
    done += size;
    if (progress) progress(done, total);
  }
  return {};
}

Result<std::int64_t> wrong_blocks(Database& db) {
  // A block's range ends at the next bound of its level (char(127) sorts
  // after every effective key, which are ASCII up to '~').
  auto miscounted =
      query_value<std::int64_t>(db,
                                "SELECT count(*) FROM (SELECT b.grp, b.lo_key, b.lo_rkey, b.n,"
                                "  coalesce(lead(b.lo_key) OVER w, char(127)) AS hi_key,"
                                "  coalesce(lead(b.lo_rkey) OVER w, '') AS hi_rkey"
                                "  FROM order_blocks b WINDOW w AS (PARTITION BY b.grp, b.lvl "
                                "ORDER BY b.lo_key, b.lo_rkey)) x"
                                " WHERE x.n <> (SELECT count(*) FROM nodes c WHERE c.grp = x.grp"
                                "  AND (c.sort_key, c.rkey) >= (x.lo_key, x.lo_rkey)"
                                "  AND (c.sort_key, c.rkey) < (x.hi_key, x.hi_rkey))");
  if (!miscounted) return pass(miscounted);
  auto misshapen = query_value<std::int64_t>(
      db,
      "SELECT (SELECT count(*) FROM (SELECT grp, count(DISTINCT lvl) AS levels,"
      "  sum(lo_key = '' AND lo_rkey = '') AS bottoms FROM order_blocks GROUP BY grp)"
      "  WHERE levels <> ?1 OR bottoms <> ?1)"
      " + (SELECT count(*) FROM order_blocks b WHERE b.lvl > 1 AND NOT EXISTS"
      "  (SELECT 1 FROM order_blocks a WHERE a.grp = b.grp AND a.lvl = b.lvl - 1"
      "   AND a.lo_key = b.lo_key AND a.lo_rkey = b.lo_rkey))"
      " + (SELECT count(*) FROM order_blocks b WHERE b.lvl < 1 OR b.lvl > ?1"
      "  OR NOT EXISTS (SELECT 1 FROM group_counts g WHERE g.grp = b.grp AND g.blocked = 1))"
      " + (SELECT count(*) FROM group_counts g WHERE g.blocked = 1"
      "  AND NOT EXISTS (SELECT 1 FROM order_blocks b WHERE b.grp = g.grp))",
      kBlockLevels);
  if (!misshapen) return pass(misshapen);
  return miscounted->value_or(0) + misshapen->value_or(0);
}

}  // namespace bulleted::schema
