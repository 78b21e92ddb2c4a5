// Store: what `bulleted-appview check` reports of the index.
#include "schema/node_record.hpp"
#include "schema/positions.hpp"
#include "schema/search_index.hpp"
#include "schema/sqlite.hpp"
#include "schema/store.hpp"

namespace bulleted::schema {
namespace {

// A node `c` filed under a parent node (a group naming one) and that parent
// not in the index: the parent is looked up by its key (an index seek per
// child, never a scan).
#define UNDER_A_NODE "c.grp LIKE 'at://%/app.bulleted.node/%'"
#define PARENT_MISSING                                        \
  "NOT EXISTS (SELECT 1 FROM nodes p WHERE p.did = c.did AND" \
  " p.rkey = substr(c.grp, length('at://' || c.did || '/app.bulleted.node/') + 1))"

// Rows whose kept facets or record length (what pages, windows and subtrees
// serve in place of the record) are not what their record gives. Only the
// records that name facets, or whose row keeps facets or a wrong length,
// are parsed again.
Result<std::int64_t> wrong_record_fields(Database& db) {
  auto stmt = db.prepare(
      "SELECT text, record, facets, record_bytes = length(CAST(record AS BLOB)) FROM nodes"
      " WHERE facets IS NOT NULL OR instr(record, '\"facets\"') > 0"
      " OR record_bytes IS NOT length(CAST(record AS BLOB))");
  if (!stmt) return pass(stmt);
  std::int64_t wrong = 0;
  while (true) {
    auto row = (*stmt)->step();
    if (!row) return pass(row);
    if (!*row) return wrong;
    const auto kept =
        (*stmt)->is_null(2) ? std::nullopt : std::optional<std::string>((*stmt)->text(2));
    const bool length_right = (*stmt)->integer(3) != 0;
    if (!length_right || served_facets((*stmt)->text_view(0), (*stmt)->text_view(1)) != kept) {
      ++wrong;
    }
  }
}

}  // namespace

Result<IntegrityReport> Store::integrity_report() {
  auto tx = Transaction::begin(*db_, Transaction::Kind::kRead);
  if (!tx) return pass(tx);
  IntegrityReport report;
  report.schema_version = latest_schema_version();
  auto check = query_value<std::string>(*db_, "PRAGMA quick_check");
  if (!check) return pass(check);
  report.sqlite_check = check->value_or("no answer");
  auto count = [&](const char* sql, std::int64_t& out) -> Result<void> {
    auto value = query_value<std::int64_t>(*db_, sql);
    if (!value) return pass(value);
    out = value->value_or(0);
    return {};
  };
  if (auto r = count("SELECT COUNT(*) FROM nodes", report.nodes); !r) return pass(r);
  if (auto r = count("SELECT COUNT(*) FROM tombstones", report.tombstones); !r) return pass(r);
  if (auto r = count("SELECT nodes FROM index_totals WHERE id = 1", report.kept_node_total); !r) {
    return pass(r);
  }
  if (auto r = count("SELECT COUNT(*) FROM nodes WHERE sort_key = '~'", report.malformed_keys); !r)
    return pass(r);
  if (auto r = count("SELECT COUNT(*) FROM nodes WHERE grp LIKE '%#unattached'", report.unattached);
      !r)
    return pass(r);
  // Children filed under a node the index does not hold.
  if (auto r = count("SELECT COUNT(*) FROM nodes c WHERE " UNDER_A_NODE " AND " PARENT_MISSING,
                     report.dangling);
      !r) {
    return pass(r);
  }
  // Nodes in parent cycles: those not reached going down from the top
  // level, the unattached groups and the children of missing parents (each
  // node is reached once, through the children index).
  if (auto r = count("WITH RECURSIVE reached(did, rkey) AS ("
                     " SELECT c.did, c.rkey FROM nodes c WHERE NOT " UNDER_A_NODE
                     " OR " PARENT_MISSING " UNION"
                     " SELECT c.did, c.rkey FROM reached r JOIN nodes c"
                     "  ON c.grp = 'at://' || r.did || '/app.bulleted.node/' || r.rkey)"
                     "SELECT (SELECT COUNT(*) FROM nodes) - (SELECT COUNT(*) FROM reached)",
                     report.in_cycles);
      !r) {
    return pass(r);
  }
  // Kept child counts against the groups' sizes, both ways.
  if (auto r = count(
          "SELECT (SELECT COUNT(*) FROM (SELECT grp, COUNT(*) AS size FROM nodes GROUP BY grp) a"
          " WHERE a.size IS NOT (SELECT g.n FROM group_counts g WHERE g.grp = a.grp))"
          " + (SELECT COUNT(*) FROM group_counts g"
          " WHERE NOT EXISTS (SELECT 1 FROM nodes c WHERE c.grp = g.grp))",
          report.wrong_counts);
      !r) {
    return pass(r);
  }
  auto blocks = wrong_blocks(*db_);
  if (!blocks) return pass(blocks);
  report.wrong_blocks = *blocks;
  auto fields = wrong_record_fields(*db_);
  if (!fields) return pass(fields);
  report.wrong_record_fields = *fields;
  if (auto r = count("SELECT COUNT(*) FROM notes", report.notes); !r) return pass(r);
  if (auto r = count("SELECT COUNT(*) FROM notes t WHERE NOT EXISTS"
                     " (SELECT 1 FROM nodes n WHERE n.did = t.did AND n.rkey = t.rkey)",
                     report.notes_waiting);
      !r) {
    return pass(r);
  }
  if (auto r = count("SELECT COUNT(*) FROM notes t JOIN nodes n ON n.did = t.did AND"
                     " n.rkey = t.rkey WHERE n.note IS NOT t.text",
                     report.wrong_notes);
      !r) {
    return pass(r);
  }
  auto search = search_index_matches(*db_);
  if (!search) return pass(search);
  report.search_index_ok = *search;
  for (const char* sql : {"SELECT status, COUNT(*) FROM repos GROUP BY status",
                          "SELECT sync_state, COUNT(*) FROM repos GROUP BY sync_state"}) {
    auto stmt = db_->prepare(sql);
    if (!stmt) return pass(stmt);
    auto& target = std::string_view(sql).find("sync_state") == std::string_view::npos
                       ? report.repos_by_status
                       : report.repos_by_sync_state;
    while (true) {
      auto row = (*stmt)->step();
      if (!row) return pass(row);
      if (!*row) break;
      target[(*stmt)->text(0)] = (*stmt)->integer(1);
    }
  }
  return report;
}

}  // namespace bulleted::schema
