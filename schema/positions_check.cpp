// Positions: what `check` finds wrong in the blocks.
#include "schema/position_blocks.hpp"
#include "schema/positions.hpp"
#include "schema/sqlite.hpp"

namespace bulleted::schema {

using namespace position_blocks;

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
