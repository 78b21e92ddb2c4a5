// Identity: a handle or DID to the account's DID and PDS.
//
// Handles resolve through com.atproto.identity.resolveHandle on a configured
// service, or else through https://<handle>/.well-known/atproto-did. A
// did:plc document comes from the configured PLC directory, a did:web
// document from https://<host>/.well-known/did.json. The PDS is the
// document's #atproto_pds service. Answers are cached for a TTL; failures are
// not cached.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "firehose/client/xrpc_client.hpp"
#include "schema/error.hpp"

namespace bulleted::identity {

struct IdentityOptions {
  std::string plc_url = "https://plc.directory";
  std::optional<std::string> handle_resolver;
  std::chrono::seconds cache_ttl{3600};
};

class IdentityResolver {
 public:
  IdentityResolver(std::shared_ptr<firehose::XrpcClient> client, IdentityOptions options);

  // The DID a handle names.
  Result<std::string> resolve_handle(const std::string& handle);
  // The PDS origin (scheme://host[:port]) of a DID.
  Result<std::string> pds_of(const std::string& did);
  // A handle or a DID to the DID.
  Result<std::string> did_of(const std::string& identifier);

 private:
  struct Entry {
    std::string value;
    std::chrono::steady_clock::time_point expires;
  };
  std::optional<std::string> cached(const std::string& key);
  void remember(const std::string& key, const std::string& value);

  std::shared_ptr<firehose::XrpcClient> client_;
  IdentityOptions options_;
  std::mutex mutex_;
  std::map<std::string, Entry> cache_;
};

// Where a DID's document is fetched: {base_url, path}; kInvalidRequest for a
// DID method other than plc and web.
Result<std::pair<std::string, std::string>> did_document_location(const std::string& did,
                                                                  const std::string& plc_url);

// The #atproto_pds service endpoint of a DID document, checked to be the
// document of `did` and an http(s) origin.
Result<std::string> pds_endpoint(const nlohmann::json& document, const std::string& did);

}  // namespace bulleted::identity
