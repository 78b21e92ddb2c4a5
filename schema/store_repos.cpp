// Store: the repos' sync bookkeeping (each repo's sync state, and the
// resyncs owed for collections an earlier build did not read).
#include "schema/enum_names.hpp"
#include "schema/sqlite.hpp"
#include "schema/store.hpp"

namespace bulleted::schema {

Result<int> Store::want_resync_for_new_collections() {
  auto tx = begin_write();
  if (!tx) return pass(tx);
  auto mark = db_->prepare(
      "UPDATE repos SET sync_state = 'desynchronized' WHERE collections_read != ?1"
      " AND status != 'deleted' AND sync_state = 'synced'");
  if (!mark) return pass(mark);
  (*mark)->bind(1, kCollectionsRead);
  if (auto r = (*mark)->run(); !r) return pass(r);
  const int marked = (*mark)->changes();
  auto read = db_->prepare("UPDATE repos SET collections_read = ?1 WHERE collections_read != ?1");
  if (!read) return pass(read);
  (*read)->bind(1, kCollectionsRead);
  if (auto r = (*read)->run(); !r) return pass(r);
  if (auto r = tx->commit(); !r) return pass(r);
  return marked;
}

Result<void> Store::set_sync(const RepoSyncRow& sync) {
  auto stmt = db_->prepare(
      "INSERT INTO repos (did, sync_state, sync_failed_rounds, sync_retry_at)"
      " VALUES (?1, ?2, ?3, ?4) ON CONFLICT (did) DO UPDATE SET"
      " sync_state = excluded.sync_state, sync_failed_rounds = excluded.sync_failed_rounds,"
      " sync_retry_at = excluded.sync_retry_at");
  if (!stmt) return pass(stmt);
  (*stmt)
      ->bind(1, sync.did)
      .bind(2, to_string(sync.state))
      .bind(3, static_cast<std::int64_t>(sync.failed_rounds))
      .bind(4, sync.retry_at_ms);
  return (*stmt)->run();
}

}  // namespace bulleted::schema
