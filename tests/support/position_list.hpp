// A sorted list of distinct keys with O(log n) access by position: the
// sibling list of the random-insert property test and benchmark (a vector
// would spend its time moving strings, not generating keys).
#pragma once

#include <ext/pb_ds/assoc_container.hpp>
#include <ext/pb_ds/tree_policy.hpp>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace bulleted::testing {

class PositionList {
 public:
  std::size_t size() const { return tree_.size(); }
  // The key at `position`, nullopt past either end (an open bound).
  std::optional<std::string_view> at(std::size_t position) const {
    if (position >= tree_.size()) return std::nullopt;
    return std::string_view(*tree_.find_by_order(position));
  }
  std::optional<std::string_view> before(std::size_t position) const {
    if (position == 0) return std::nullopt;
    return at(position - 1);
  }
  // False when the key was already present.
  bool insert(std::string key) { return tree_.insert(std::move(key)).second; }
  std::size_t position_of(const std::string& key) const { return tree_.order_of_key(key); }
  template <class F>
  void for_each(F&& f) const {
    for (const auto& key : tree_) f(key);
  }

 private:
  __gnu_pbds::tree<std::string, __gnu_pbds::null_type, std::less<>, __gnu_pbds::rb_tree_tag,
                   __gnu_pbds::tree_order_statistics_node_update>
      tree_;
};

}  // namespace bulleted::testing
