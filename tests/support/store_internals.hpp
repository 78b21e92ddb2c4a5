// The connection behind a Store, for the tests that break or inspect the
// index directly (schema/store_internals.hpp).
#pragma once

#include "schema/store_internals.hpp"

namespace bulleted::testing {

inline schema::Database& database_of(schema::Store& store) {
  return schema::StoreInternals::database(store);
}

}  // namespace bulleted::testing
