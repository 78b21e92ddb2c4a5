// Positions in large sibling groups: a counted structure beside the covering
// index (SQLite's b-tree keeps no counts, so an index or a position would
// otherwise cost a scan of everything before it).
//
// A group of more than kBlockedGroup nodes has counted blocks in the table
// order_blocks (schema 7), at kBlockLevels levels: level 1 cuts the group's
// (sort_key, rkey) order into ranges of about kBlockFanout nodes, each level
// above cuts the one below into ranges of about kBlockFanout blocks. A block
// is named by its lower bound (the first block of a level starts at
// ('', ''), below every key) and holds the number of nodes in its range.
// Every bound of a level is also a bound of the level below, so the blocks
// of level k - 1 starting inside a block of level k cover it exactly.
//
// The counts are kept by the writes themselves (schema/group_upkeep.hpp), in
// the transaction of every insert, delete and move, whatever path writes
// (apply for ingest, resync, local writes and imports; the removal of a
// deleted repo); a group that empties loses its blocks. Splitting a block
// that grew past twice the fan-out, and building the blocks of a group that
// grew past kBlockedGroup, is balance, not correctness: it follows the
// writes into the groups, and a group without blocks is counted directly.
// Whether a group has blocks is kept with its count (group_counts.blocked),
// so a write learns both in the one statement that moves the count.
//
// Cost of an index: one statement a level, each visiting at most
// 2 * kBlockFanout rows (the top level about n / kBlockFanout^3), plus at
// most 2 * kBlockFanout index entries of the group's nodes. SQLite spends
// about 0.1 us on each row of these wide keys. A position reads each level
// inside the block found a level up from both ends in turn (the counts of
// that block's children add up to its own), and the nodes of the last block
// the same way: a key near either end visits a few rows a level, one in
// the middle about as many as reading from the start alone visited for a
// key at the end.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "schema/error.hpp"
#include "schema/rows.hpp"

namespace bulleted::schema {

class Database;

inline constexpr std::int64_t kBlockFanout = 16;
inline constexpr std::int64_t kBlockedGroup = 64;
inline constexpr int kBlockLevels = 3;

// The number of nodes of `group` before `key` in (sort_key, rkey) order;
// `size` is the group's node count (group_counts), what its top level's
// blocks add up to, so that a key near the end is counted from the end.
Result<std::int64_t> count_before(Database& db, std::string_view group, const SiblingKey& key,
                                  std::int64_t size);

// The node at 0-based `index` of `group`, if the group is that large.
Result<std::optional<SiblingKey>> key_at(Database& db, std::string_view group, std::int64_t index);
// Up to `count` nodes in order from 0-based `index` (fewer past the end).
Result<std::vector<SiblingKey>> keys_at(Database& db, std::string_view group, std::int64_t index,
                                        int count);

// What a batch did to a group with blocks, of `size` nodes after it: `moves`
// are the nodes that came (+1) or went (-1), at their keys. Moves the count
// of every block that holds them, at every level: where a level has at least
// two moves a block, as a rule, with one write a block for the whole batch
// (the blocks' bounds do not move before the balance, so each node's block
// is the same whenever in the batch it came or went); else one statement a
// move. Then balances: splits the blocks that grew past twice the fan-out
// (and the blocks above).
Result<void> move_blocks(Database& db, std::string_view group, std::int64_t size,
                         std::vector<std::pair<SiblingKey, int>> moves);

// (Re)builds the blocks of one group from its nodes, O(group size), and
// marks the group as counted in blocks (group_counts.blocked).
Result<void> build_blocks(Database& db, std::string_view group);

// Builds the blocks of every group larger than kBlockedGroup that has none
// (the schema 7 migration); `progress` gets (nodes done, nodes in all).
Result<void> build_missing_blocks(Database& db,
                                  const std::function<void(std::int64_t, std::int64_t)>& progress);

// For `check`: blocks whose count is not the number of nodes in their range,
// plus levels that do not start at the bottom, bounds of a level that are not
// bounds of the level below, blocks of groups that are gone or not marked
// as blocked, and groups marked as blocked without blocks.
Result<std::int64_t> wrong_blocks(Database& db);

}  // namespace bulleted::schema
