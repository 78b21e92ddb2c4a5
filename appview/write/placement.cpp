#include "appview/write/placement.hpp"

#include <algorithm>
#include <charconv>
#include <tuple>

#include "ordering/order_key.hpp"
#include "schema/syntax.hpp"

namespace bulleted::appview {
namespace {

using schema::SiblingKey;

// The neighbours a placement resolved to; empty optionals are open ends.
struct Bounds {
  std::optional<SiblingKey> lo;
  std::optional<SiblingKey> hi;
};

Error stale(std::string why) { return Error{ErrorCode::kStaleNeighbours, std::move(why)}; }

// Siblings of `group` next to `from` in one direction, skipping `skip`.
Result<std::optional<SiblingKey>> adjacent(schema::Store& store, const std::string& group,
                                           const std::optional<SiblingKey>& from, bool reverse,
                                           const std::optional<std::string>& skip) {
  auto keys = store.read().sibling_keys(group, from, reverse, 2);
  if (!keys) return std::unexpected(keys.error());
  for (auto& key : *keys) {
    if (skip && key.rkey == *skip) continue;
    return std::optional<SiblingKey>(std::move(key));
  }
  return std::optional<SiblingKey>();
}

// A named neighbour: it must exist (else InvalidNeighbour) and be in the
// group (else the captured view is stale).
Result<SiblingKey> neighbour(schema::Store& store, const std::string& did, const std::string& group,
                             const std::string& rkey, const std::optional<std::string>& moving) {
  if (moving && rkey == *moving) {
    return fail(ErrorCode::kInvalidNeighbour, "a node cannot be its own neighbour");
  }
  auto node = store.read().node(did, rkey);
  if (!node) {
    if (node.error().code == ErrorCode::kNotFound) {
      return fail(ErrorCode::kInvalidNeighbour, "neighbour " + rkey + " does not exist");
    }
    return std::unexpected(node.error());
  }
  if (node->group != group)
    return std::unexpected(stale("neighbour " + rkey + " is not in the target group"));
  return SiblingKey{node->sort_key, node->rkey};
}

Result<Bounds> resolve(schema::Store& store, const std::string& did, const std::string& group,
                       const NeighbourIntent& intent, const std::optional<std::string>& moving) {
  Bounds bounds;
  if (intent.after_rkey) {
    auto after = neighbour(store, did, group, *intent.after_rkey, moving);
    if (!after) return std::unexpected(after.error());
    bounds.lo = *after;
    auto next = adjacent(store, group, bounds.lo, false, moving);
    if (!next) return std::unexpected(next.error());
    if (intent.before_rkey) {
      // Both named: the node goes right after `after`, which is between the
      // two even when others arrived in between. Stale only when `before` no
      // longer follows `after`.
      auto before = neighbour(store, did, group, *intent.before_rkey, moving);
      if (!before) return std::unexpected(before.error());
      if (std::tie(before->sort_key, before->rkey) <= std::tie(after->sort_key, after->rkey)) {
        return std::unexpected(
            stale("neighbour " + *intent.before_rkey + " no longer follows " + *intent.after_rkey));
      }
    }
    bounds.hi = *next;
    return bounds;
  }
  if (intent.before_rkey) {
    auto before = neighbour(store, did, group, *intent.before_rkey, moving);
    if (!before) return std::unexpected(before.error());
    bounds.hi = *before;
    auto previous = adjacent(store, group, bounds.hi, true, moving);
    if (!previous) return std::unexpected(previous.error());
    bounds.lo = *previous;
    return bounds;
  }
  auto first_bounds = [&]() -> Result<Bounds> {
    auto first = adjacent(store, group, std::nullopt, false, moving);
    if (!first) return std::unexpected(first.error());
    bounds.hi = *first;
    return bounds;
  };
  auto last_bounds = [&]() -> Result<Bounds> {
    auto last = adjacent(store, group, std::nullopt, true, moving);
    if (!last) return std::unexpected(last.error());
    bounds.lo = *last;
    return bounds;
  };
  const PositionIntent& position = intent.position;
  if (position.kind == PositionIntent::Kind::kFirst) return first_bounds();
  if (position.kind == PositionIntent::Kind::kLast) return last_bounds();
  const std::int64_t index = position.index;
  if (index <= 0) return first_bounds();
  // Positions count the other siblings: past the moving node's own place
  // (when it is in this group) indexes shift by one.
  std::optional<std::int64_t> own_index;
  if (moving) {
    auto own = store.read().node(did, *moving);
    if (!own) return std::unexpected(own.error());
    if (own->group == group) {
      auto where = store.read().position(did, *moving);
      if (!where) return std::unexpected(where.error());
      own_index = where->index;
    }
  }
  // The two siblings around the index, read side by side: from where the
  // one before it stands (one further when the moving node is before it),
  // three keys, the moving node left out. index - 1 >= 0 here, and index + 1
  // cannot overflow: index - 1 < index <= INT64_MAX.
  const std::int64_t from = own_index && index - 1 >= *own_index ? index : index - 1;
  auto around = store.read().sibling_keys_at(group, from, 3);
  if (!around) return std::unexpected(around.error());
  std::erase_if(*around, [&](const SiblingKey& key) { return moving && key.rkey == *moving; });
  if (around->empty()) return last_bounds();  // past the end: last
  bounds.lo = (*around)[0];
  if (around->size() > 1) bounds.hi = (*around)[1];
  return bounds;
}

// Keys for every sibling from `first` on whose key equals first's, spread
// into the gap after them (order kept).
Result<void> rekey_equal_run(schema::Store& store, const std::string& group,
                             const SiblingKey& first, const std::optional<std::string>& moving,
                             ordering::RandomSource& jitter, Placement& placement,
                             SiblingKey& new_first) {
  std::vector<SiblingKey> run{first};
  std::optional<std::string> upper;
  std::optional<SiblingKey> cursor = first;
  while (true) {
    auto next = store.read().sibling_keys(group, cursor, false, 64);
    if (!next) return std::unexpected(next.error());
    if (next->empty()) break;
    bool ended = false;
    for (auto& key : *next) {
      cursor = key;
      if (moving && key.rkey == *moving) continue;
      if (key.sort_key != first.sort_key) {
        if (key.valid()) upper = key.sort_key;
        ended = true;
        break;
      }
      run.push_back(key);
    }
    if (ended) break;
  }
  auto keys = ordering::n_between(first.sort_key, upper, run.size(), jitter);
  if (!keys) return std::unexpected(key_error(keys.error()));
  for (std::size_t i = 0; i < run.size(); ++i)
    placement.rekeys.emplace_back(run[i].rkey, (*keys)[i]);
  new_first = SiblingKey{(*keys)[0], first.rkey};
  return {};
}

// Gives every sibling with a malformed key (they sort last) a valid key after
// the last valid one, in their current (rkey) order.
Result<void> repair_invalid_tail(schema::Store& store, const std::string& group,
                                 const std::optional<std::string>& moving,
                                 ordering::RandomSource& jitter, Placement& placement,
                                 Bounds& bounds) {
  std::vector<SiblingKey> tail;
  std::optional<std::string> last_valid;
  std::optional<SiblingKey> cursor;
  while (true) {
    auto keys = store.read().sibling_keys(group, cursor, true, 256);
    if (!keys) return std::unexpected(keys.error());
    if (keys->empty()) break;
    bool done = false;
    for (auto& key : *keys) {
      cursor = key;
      if (moving && key.rkey == *moving) continue;
      if (key.valid()) {
        last_valid = key.sort_key;
        done = true;
        break;
      }
      tail.push_back(key);
    }
    if (done) break;
  }
  std::reverse(tail.begin(), tail.end());
  auto keys = ordering::n_between(last_valid, std::nullopt, tail.size(), jitter);
  if (!keys) return std::unexpected(key_error(keys.error()));
  for (std::size_t i = 0; i < tail.size(); ++i) {
    placement.rekeys.emplace_back(tail[i].rkey, (*keys)[i]);
    if (bounds.lo && bounds.lo->rkey == tail[i].rkey) bounds.lo->sort_key = (*keys)[i];
    if (bounds.hi && bounds.hi->rkey == tail[i].rkey) bounds.hi->sort_key = (*keys)[i];
  }
  return {};
}

Result<Placement> attempt(schema::Store& store, const std::string& did, const std::string& group,
                          const NeighbourIntent& intent, const std::optional<std::string>& moving,
                          ordering::RandomSource& jitter, PlacementFaults* faults) {
  if (faults != nullptr && faults->stale_reads.load() > 0 && faults->stale_reads.fetch_sub(1) > 0) {
    return std::unexpected(stale("injected stale read"));
  }
  auto bounds = resolve(store, did, group, intent, moving);
  if (!bounds) return std::unexpected(bounds.error());
  Placement placement;
  placement.group = group;
  if (bounds->lo && !bounds->lo->valid()) {
    if (auto r = repair_invalid_tail(store, group, moving, jitter, placement, *bounds); !r) {
      return std::unexpected(r.error());
    }
  }
  // Before a malformed key is the same place as after the last valid one.
  if (bounds->hi && !bounds->hi->valid()) bounds->hi.reset();
  if (bounds->lo && bounds->hi && bounds->lo->sort_key == bounds->hi->sort_key) {
    SiblingKey moved_hi;
    if (auto r = rekey_equal_run(store, group, *bounds->hi, moving, jitter, placement, moved_hi);
        !r) {
      return std::unexpected(r.error());
    }
    bounds->hi = moved_hi;
  }
  auto lo = bounds->lo ? std::optional<std::string_view>(bounds->lo->sort_key) : std::nullopt;
  auto hi = bounds->hi ? std::optional<std::string_view>(bounds->hi->sort_key) : std::nullopt;
  auto key = ordering::between(lo, hi, jitter);
  if (!key) return std::unexpected(key_error(key.error()));
  placement.sort_key = std::move(*key);
  return placement;
}

}  // namespace

Result<PositionIntent> PositionIntent::parse(std::string_view text) {
  if (text == "first") return first();
  if (text == "last") return last();
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos) {
    return fail(ErrorCode::kInvalidRequest, std::string(kBadPosition));
  }
  std::int64_t index = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), index);
  if (ec == std::errc::result_out_of_range) return last();  // no group reaches it
  if (ec != std::errc() || end != text.data() + text.size()) {
    return fail(ErrorCode::kInvalidRequest, std::string(kBadPosition));
  }
  return at(index);
}

Error key_error(const ordering::KeyError& error) {
  switch (error.code) {
    case ordering::KeyErrorCode::kExhausted:
      return Error{ErrorCode::kExhausted, "no order key fits between these neighbours"};
    case ordering::KeyErrorCode::kOutOfOrder:
      return stale("neighbours are out of order: " + error.message);
    case ordering::KeyErrorCode::kInvalidKey:
      break;
  }
  // Placement never takes a malformed key as a bound (it re-keys such a
  // sibling first): one seen here changed under the read, so read again.
  return stale("a neighbour's key is not valid: " + error.message);
}

Result<Placement> place(schema::Store& store, const std::string& did, const NeighbourIntent& intent,
                        const std::optional<std::string>& moving_rkey,
                        ordering::RandomSource& jitter, PlacementFaults* faults) {
  const std::string group = schema::target_group(did, intent.parent_rkey);
  std::optional<std::string> parent_uri;
  if (intent.parent_rkey) {
    auto parent = store.read().node(did, *intent.parent_rkey);
    if (!parent) return std::unexpected(parent.error());
    if (parent->mirror_of) {
      return fail(ErrorCode::kInvalidRequest, *intent.parent_rkey + " is a mirror: it stands for " +
                                                  *parent->mirror_of +
                                                  " and has no children of its own");
    }
    parent_uri = group;
  }
  for (int retry = 0;; ++retry) {
    auto placement = attempt(store, did, group, intent, moving_rkey, jitter, faults);
    if (placement) {
      placement->parent_uri = parent_uri;
      placement->retries = retry;
      return placement;
    }
    if (placement.error().code != ErrorCode::kStaleNeighbours) return placement;
    if (retry == 1) {
      placement.error().message = "stale neighbours after a retry: " + placement.error().message +
                                  "; refetch the siblings and try again";
      return placement;
    }
  }
}

template <class Mutex>
std::shared_ptr<Mutex> GroupLocks::mutex_of(std::map<std::string, std::weak_ptr<Mutex>>& table,
                                            const std::string& name) {
  std::lock_guard held(table_mutex_);
  auto& slot = table[name];
  std::shared_ptr<Mutex> mutex = slot.lock();
  if (!mutex) {
    mutex = std::make_shared<Mutex>();
    slot = mutex;
  }
  // Forget names nobody holds, now and then.
  if (table.size() > 4096) {
    std::erase_if(table, [](const auto& entry) { return entry.second.expired(); });
  }
  return mutex;
}

GroupLocks::Guard GroupLocks::lock(std::vector<std::string> groups) {
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  Guard guard;
  for (const auto& group : groups) {
    auto mutex = mutex_of(table_, group);
    guard.locks_.emplace_back(*mutex);
    guard.keep_.push_back(std::move(mutex));
  }
  return guard;
}

GroupLocks::Guard GroupLocks::lock(const std::string& did, std::vector<std::string> groups,
                                   TreeAccess tree, RepoWrites repo) {
  auto tree_mutex = mutex_of(trees_, did);
  std::shared_lock<std::shared_mutex> shared;
  std::unique_lock<std::shared_mutex> exclusive;
  if (tree == TreeAccess::kShared) {
    shared = std::shared_lock(*tree_mutex);
  } else {
    exclusive = std::unique_lock(*tree_mutex);
  }
  std::shared_ptr<std::mutex> repo_mutex;
  std::unique_lock<std::mutex> repo_lock;
  if (repo == RepoWrites::kOneAtATime) {
    repo_mutex = mutex_of(repos_, did);
    repo_lock = std::unique_lock(*repo_mutex);
  }
  Guard guard = lock(std::move(groups));
  guard.tree_keep_ = std::move(tree_mutex);
  guard.shared_ = std::move(shared);
  guard.exclusive_ = std::move(exclusive);
  guard.repo_keep_ = std::move(repo_mutex);
  guard.repo_ = std::move(repo_lock);
  return guard;
}

}  // namespace bulleted::appview
