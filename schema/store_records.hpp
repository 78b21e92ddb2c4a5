// Store's writes of the records other than nodes (store.cpp's apply):
// tombstones by collection, outline records, and the records kept as they
// came (mirrors, comments, comment policies). Each applies only when its
// rev is newer than what the index holds; false when the op was stale.
// Only store.cpp includes this.
#pragma once

#include <optional>
#include <string>

#include "schema/error.hpp"
#include "schema/rows.hpp"

namespace bulleted::schema {

class Database;

// The rev of an op's record's tombstone (a collection other than nodes).
Result<std::optional<std::string>> record_tombstone_rev(Database& db, const RecordOp& op);
// The op's record's tombstone, written at its rev, or cleared.
Result<void> write_record_tombstone(Database& db, const RecordOp& op);
Result<void> clear_record_tombstone(Database& db, const RecordOp& op);
Result<bool> apply_outline(Database& db, const RecordOp& op);
Result<bool> apply_kept(Database& db, const RecordOp& op);

}  // namespace bulleted::schema
