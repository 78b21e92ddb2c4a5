// Placement: neighbour intent -> an order key, under the sibling group's lock.
//
// A frontend never sends a sortKey; it says where the node goes: after
// and/or before named siblings, or a position ("first", "last", an index).
// place() reads the group as it is now (the caller holds the group's lock)
// and generates a key strictly between the neighbours. When the captured
// neighbours are stale (one left the group, they are no longer adjacent or in
// order) it re-reads and tries exactly once more; a second failure is
// kStaleNeighbours. Two adjacent siblings with equal keys get the later one
// (and any run of equal keys after it) re-keyed into the free gap first, so
// the position between them stays reachable; malformed keys (which sort last)
// are repaired the same way when a placement needs them as neighbours.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "ordering/order_key.hpp"
#include "ordering/random_source.hpp"
#include "schema/error.hpp"
#include "schema/store.hpp"

namespace bulleted::appview {

// Where among its siblings a node goes when no neighbour is named: first,
// last (the default), or at a 0-based index among the other siblings (past
// the end: last). Read once from a request; placement only matches on it.
struct PositionIntent {
  enum class Kind { kFirst, kLast, kIndex };
  Kind kind = Kind::kLast;
  std::int64_t index = 0;  // kIndex only, >= 0

  static PositionIntent first() { return {Kind::kFirst, 0}; }
  static PositionIntent last() { return {Kind::kLast, 0}; }
  static PositionIntent at(std::int64_t index) { return {Kind::kIndex, index}; }
  // "first", "last" or a 0-based index in decimal digits (one past what an
  // int64 holds is past every group's end: last); kInvalidRequest otherwise.
  static Result<PositionIntent> parse(std::string_view text);
  friend bool operator==(const PositionIntent&, const PositionIntent&) = default;
};

// The refusal of a position that is none of the above.
inline constexpr std::string_view kBadPosition =
    "position must be \"first\", \"last\" or a 0-based index";

struct NeighbourIntent {
  std::optional<std::string> parent_rkey;  // nullopt: top level
  std::optional<std::string> after_rkey;
  std::optional<std::string> before_rkey;
  PositionIntent position;
};

struct Placement {
  std::string group;                      // the sibling group the node goes to
  std::optional<std::string> parent_uri;  // for the record's parent field
  std::string sort_key;
  // Siblings whose keys must change in the same write: (rkey, new key).
  std::vector<std::pair<std::string, std::string>> rekeys;
  int retries = 0;
};

// Deterministic faults of placement reads, for tests (and the end-to-end
// tests' fault injection, appview/xrpc/faults.hpp): the next `stale_reads`
// neighbour reads report stale captured neighbours.
struct PlacementFaults {
  std::atomic<int> stale_reads{0};
};

// A key generator's refusal as the project's error: no room in the gap is
// kExhausted; bounds out of order or not valid mean the neighbours changed
// under the read (kStaleNeighbours: re-read and retry once).
Error key_error(const ordering::KeyError& error);

// REQUIRES: the caller holds the lock of the target group (and of the moving
// node's current group for a move). `moving_rkey` is excluded from the
// siblings (a node is never its own neighbour).
Result<Placement> place(schema::Store& store, const std::string& did, const NeighbourIntent& intent,
                        const std::optional<std::string>& moving_rkey,
                        ordering::RandomSource& jitter, PlacementFaults* faults = nullptr);

// Per-group mutexes shared by every request thread. lock() takes one or two
// groups in a fixed (sorted) order, so two moves in opposite directions
// cannot deadlock.
//
// Before its groups, a write takes its repo's tree lock: shared for writes
// that add to the tree or move within it (many at once), exclusive for a
// subtree delete, which must see no child arrive under any node it removes
// (a create under a grandchild takes no lock the delete holds). The tree
// lock is always taken first and never while a group is held.
//
// A sink whose commits must follow each other (pds mode: each names the
// repo commit it follows) asks for the repo's writes one at a time: that
// lock is taken after the tree lock and before the groups.
enum class TreeAccess { kShared, kExclusive };
enum class RepoWrites { kConcurrent, kOneAtATime };

class GroupLocks {
 public:
  class Guard {
   public:
    Guard() = default;
    Guard(Guard&&) = default;
    Guard& operator=(Guard&&) = delete;
    // Unlocks before the mutexes can go: `keep_` may hold their last owners,
    // and members are destroyed in reverse order (a freed mutex unlocked).
    ~Guard() {
      locks_.clear();
      repo_ = {};
      shared_ = {};
      exclusive_ = {};
    }

   private:
    friend class GroupLocks;
    std::shared_ptr<std::shared_mutex> tree_keep_;
    std::shared_ptr<std::mutex> repo_keep_;
    std::vector<std::shared_ptr<std::mutex>> keep_;
    std::shared_lock<std::shared_mutex> shared_;
    std::unique_lock<std::shared_mutex> exclusive_;
    std::unique_lock<std::mutex> repo_;
    std::vector<std::unique_lock<std::mutex>> locks_;
  };
  // The tree lock of `did` (as `tree` says), its writes' lock (as `repo`
  // says), then `groups`.
  Guard lock(const std::string& did, std::vector<std::string> groups,
             TreeAccess tree = TreeAccess::kShared, RepoWrites repo = RepoWrites::kConcurrent);
  // `groups` alone (no tree lock).
  Guard lock(std::vector<std::string> groups);

 private:
  template <class Mutex>
  std::shared_ptr<Mutex> mutex_of(std::map<std::string, std::weak_ptr<Mutex>>& table,
                                  const std::string& name);
  std::mutex table_mutex_;
  std::map<std::string, std::weak_ptr<std::mutex>> table_;  // sibling groups
  std::map<std::string, std::weak_ptr<std::mutex>> repos_;  // repo writes, by DID
  std::map<std::string, std::weak_ptr<std::shared_mutex>> trees_;
};

}  // namespace bulleted::appview
