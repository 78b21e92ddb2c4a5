// A DID directory without a network: a PLC directory at kPlc serving the
// documents of the accounts a test puts there (each with a PDS and a
// signing key), 404 for any other DID, and the number of reads of each.
// A document may be replaced (a key rotation, a PDS move) or withdrawn.
// Calls to any other host (a sign-in at a PDS, through the resolver's
// fetcher) go to the handler a test routes them to.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "firehose/crypto.hpp"
#include "firehose/identity/identity.hpp"
#include "tests/support/fake_xrpc_client.hpp"

namespace bulleted::testing {

class FakeIdentityDirectory {
 public:
  static constexpr const char* kPlc = "https://plc.test";

  FakeIdentityDirectory()
      : client_(std::make_shared<FakeXrpcClient>(
            [this](const firehose::XrpcRequest& request) { return answer(request); })) {}

  // The document of `did`: its PDS and its #atproto key.
  void put(const std::string& did, const std::string& pds, const firehose::PublicKey& key) {
    const nlohmann::json document = {{"id", did},
                                     {"verificationMethod",
                                      {{{"id", did + "#atproto"},
                                        {"type", "Multikey"},
                                        {"publicKeyMultibase", key.multikey()}}}},
                                     {"service",
                                      {{{"id", "#atproto_pds"},
                                        {"type", "AtprotoPersonalDataServer"},
                                        {"serviceEndpoint", pds}}}}};
    std::lock_guard lock(mutex_);
    documents_[did] = document.dump();
  }
  void route_others(FakeXrpcClient::Handler handler) {
    std::lock_guard lock(mutex_);
    others_ = std::move(handler);
  }
  void withdraw(const std::string& did) {
    std::lock_guard lock(mutex_);
    documents_.erase(did);
  }
  // Reads of `did`'s document so far.
  int reads(const std::string& did) const {
    std::lock_guard lock(mutex_);
    auto it = reads_.find(did);
    return it == reads_.end() ? 0 : it->second;
  }
  // The client that reaches the directory (and the hosts routed to).
  std::shared_ptr<FakeXrpcClient> client() const { return client_; }
  // A resolver reading this directory (the test's clock, if it gives one).
  std::unique_ptr<identity::IdentityResolver> resolver(identity::IdentityOptions options = {}) {
    options.plc_url = kPlc;
    auto fetcher = identity::Fetcher::over(
        client_, {.allow_private_addresses = options.allow_private_addresses});
    return std::make_unique<identity::IdentityResolver>(std::move(fetcher), std::move(options));
  }

 private:
  Result<firehose::XrpcReply> answer(const firehose::XrpcRequest& request) {
    if (request.base_url != kPlc) {
      FakeXrpcClient::Handler others;
      {
        std::lock_guard lock(mutex_);
        others = others_;
      }
      if (others) return others(request);
      return reply_of(404, R"({"error":"NotFound","message":"no such host"})");
    }
    const std::string did = request.path.substr(1);  // "/did:plc:..."
    std::lock_guard lock(mutex_);
    ++reads_[did];
    auto it = documents_.find(did);
    if (it == documents_.end()) {
      return reply_of(404, R"({"message":"DID not registered"})");
    }
    return reply_of(200, it->second, {{"content-type", "application/json"}});
  }

  std::shared_ptr<FakeXrpcClient> client_;
  mutable std::mutex mutex_;
  std::map<std::string, std::string> documents_;
  std::map<std::string, int> reads_;
  FakeXrpcClient::Handler others_;
};

}  // namespace bulleted::testing
