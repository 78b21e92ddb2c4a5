// Reader: a sibling group's keys, as placement reads them (the keys around
// a neighbour or an index, under the group's lock) and its children.
#include "schema/positions.hpp"
#include "schema/reader.hpp"
#include "schema/sqlite.hpp"

namespace bulleted::schema {

Result<std::vector<SiblingKey>> Reader::sibling_keys(std::string_view group,
                                                     const std::optional<SiblingKey>& from,
                                                     bool reverse, int limit) {
  const char* sql =
      reverse
          ? (from
                 ? "SELECT sort_key, rkey FROM nodes WHERE grp = ?1 AND (sort_key, rkey) < (?2, ?3)"
                   " ORDER BY sort_key DESC, rkey DESC LIMIT ?4"
                 : "SELECT sort_key, rkey FROM nodes WHERE grp = ?1 ORDER BY sort_key DESC, rkey "
                   "DESC LIMIT ?4")
          : (from
                 ? "SELECT sort_key, rkey FROM nodes WHERE grp = ?1 AND (sort_key, rkey) > (?2, ?3)"
                   " ORDER BY sort_key, rkey LIMIT ?4"
                 : "SELECT sort_key, rkey FROM nodes WHERE grp = ?1 ORDER BY sort_key, rkey LIMIT "
                   "?4");
  auto stmt = db_.prepare(sql);
  if (!stmt) return pass(stmt);
  (*stmt)->bind(1, group).bind(4, limit);
  if (from) (*stmt)->bind(2, from->sort_key).bind(3, from->rkey);
  std::vector<SiblingKey> out;
  while (true) {
    auto row = (*stmt)->step();
    if (!row) return pass(row);
    if (!*row) return out;
    out.push_back(SiblingKey{(*stmt)->text(0), (*stmt)->text(1)});
  }
}

Result<std::optional<SiblingKey>> Reader::sibling_key_at(std::string_view group,
                                                         std::int64_t index) {
  return key_at(db_, group, index);
}

Result<std::vector<SiblingKey>> Reader::sibling_keys_at(std::string_view group, std::int64_t index,
                                                        int count) {
  return keys_at(db_, group, index, count);
}

Result<std::vector<std::string>> Reader::child_rkeys(std::string_view group) {
  return query_texts(db_, "SELECT rkey FROM nodes WHERE grp = ?1", group);
}

}  // namespace bulleted::schema
