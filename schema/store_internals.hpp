// The connection behind a Store, for tests and benchmarks only (they break
// the index on purpose, or read it the way `check` does). Production code
// never includes this header: tests/scripts/room_order.py fails on any
// include of it outside tests/ and bench/.
#pragma once

#include "schema/sqlite.hpp"
#include "schema/store.hpp"

namespace bulleted::schema {

struct StoreInternals {
  static Database& database(Store& store) { return *store.db_; }
};

}  // namespace bulleted::schema
