// Positions: a node's index in its group, and the node at an index.
#include <algorithm>
#include <tuple>

#include "schema/position_blocks.hpp"
#include "schema/positions.hpp"
#include "schema/sqlite.hpp"

namespace bulleted::schema {

using namespace position_blocks;

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

}  // namespace bulleted::schema
