// The key directory make_frames writes next to a stream (OUT.keys.json:
// {"did": "did:key:..."}) as the ingest path's RepoKeys, for benchmarks and
// tests that replay generated streams.
#pragma once

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "firehose/crypto.hpp"
#include "firehose/verify.hpp"

namespace bulleted::bench {

class KeyDirectory final : public firehose::RepoKeys {
 public:
  // Empty when the file is missing or unreadable.
  explicit KeyDirectory(const std::string& path) {
    std::ifstream in(path);
    const auto json = nlohmann::json::parse(in, nullptr, false);
    if (!json.is_object()) return;
    for (const auto& [did, key] : json.items()) {
      if (!key.is_string()) continue;
      if (auto parsed = firehose::PublicKey::from_did_key(key.get<std::string>())) {
        keys_.insert_or_assign(did, *parsed);
      }
    }
  }
  std::size_t size() const { return keys_.size(); }
  Result<firehose::PublicKey> key(const std::string& did, bool) override {
    auto it = keys_.find(did);
    if (it == keys_.end()) return fail(ErrorCode::kNotFound, "no key for " + did);
    return it->second;
  }
  void forget(const std::string&) override {}

 private:
  std::map<std::string, firehose::PublicKey> keys_;
};

}  // namespace bulleted::bench
