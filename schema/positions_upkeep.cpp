// Positions: the blocks moved with a batch's nodes, split when they grow,
// and built for a group that grew past kBlockedGroup.
#include <algorithm>
#include <tuple>

#include "schema/position_blocks.hpp"
#include "schema/positions.hpp"
#include "schema/sqlite.hpp"

namespace bulleted::schema {

using namespace position_blocks;

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

}  // namespace bulleted::schema
