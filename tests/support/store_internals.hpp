// The connection behind a Store, for the tests that break or inspect the
// index directly (schema/store_internals.hpp), and an index taken back to an
// older schema, for the tests of a migration.
#pragma once

#include <string>
#include <utility>

#include "schema/store_internals.hpp"

namespace bulleted::testing {

inline schema::Database& database_of(schema::Store& store) {
  return schema::StoreInternals::database(store);
}

// Takes an index back to what schema `version` left: the tables and
// columns of the later steps dropped (schema/migrations.cpp), newest first.
// A step that moves only data (10) has nothing to undo here; schema 6's
// triggers are not put back (no test writes to a rewound index).
inline Result<void> rewind_schema(schema::Store& store, int version) {
  static constexpr std::pair<int, const char*> kUndo[] = {
      {15,
       "DROP TABLE notes; DROP TABLE record_tombstones; DROP TABLE outlines;"
       "DROP TABLE kept_records;"
       "ALTER TABLE repos DROP COLUMN collections_read;"
       "ALTER TABLE import_jobs DROP COLUMN runner; ALTER TABLE import_jobs DROP COLUMN "
       "lease_until; ALTER TABLE nodes DROP COLUMN mirror_of;"},
      {14,
       "ALTER TABLE nodes DROP COLUMN completed_at; ALTER TABLE nodes DROP COLUMN layout;"
       "ALTER TABLE nodes DROP COLUMN display;"},
      {13, "DROP TABLE search_terms;"},
      {12,
       "DROP TABLE search_fts; DROP TABLE search_codes; DROP TABLE search_tags;"
       "ALTER TABLE nodes DROP COLUMN indexed_at;"},
      {11,
       "ALTER TABLE repos DROP COLUMN sync_failed_rounds;"
       "ALTER TABLE repos DROP COLUMN sync_retry_at;"},
      {9, "DROP TABLE index_totals;"},
      {8, "ALTER TABLE nodes DROP COLUMN facets; ALTER TABLE nodes DROP COLUMN record_bytes;"},
      {7, "DROP TABLE order_blocks; ALTER TABLE group_counts DROP COLUMN blocked;"},
  };
  auto& db = database_of(store);
  for (const auto& [step, sql] : kUndo) {
    if (step <= version) continue;
    if (auto r = db.exec(sql); !r) return r;
  }
  const std::string bump = "PRAGMA user_version = " + std::to_string(version);
  return db.exec(bump.c_str());
}

}  // namespace bulleted::testing
