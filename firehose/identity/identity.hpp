// Identity: a handle or DID to the account's DID and PDS.
//
// Handles resolve through com.atproto.identity.resolveHandle on a configured
// service, or else through https://<handle>/.well-known/atproto-did. A
// did:plc document comes from the configured PLC directory, a did:web
// document from https://<host>/.well-known/did.json. The PDS is the
// document's #atproto_pds service. Every read goes through a Fetcher
// (fetcher.hpp: a 64 KiB cap on documents, short timeouts, the network
// policy for the network's hosts, failures remembered for a minute, and the
// request gate). Answers are cached for a TTL. While a request waits on a
// DID's document, another request for the same DID is told to retry
// (kUnavailable) rather than wait or read it again.
//
// The repo signing key is the document's #atproto verification method
// (Multikey, or the older EcdsaSecp256k1/Secp256r1VerificationKey2019 forms),
// cached like the rest; a caller that saw a signature fail may ask for the
// document again, at most once a minute per DID (forged frames must not turn
// into a flood of directory reads).
//
// Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "firehose/client/xrpc_client.hpp"
#include "firehose/crypto.hpp"
#include "firehose/identity/fetcher.hpp"
#include "firehose/verify.hpp"
#include "schema/error.hpp"

namespace bulleted::identity {

struct IdentityOptions {
  std::string plc_url = "https://plc.directory";
  std::optional<std::string> handle_resolver;
  std::chrono::seconds cache_ttl{3600};
  std::chrono::seconds refresh_interval{60};  // at most one forced re-read per DID
  // Addresses the network names (a did:web host, a handle's host, a PDS)
  // may be http and private: test networks only. The resolver's Fetcher
  // carries its own copy of this setting.
  bool allow_private_addresses = false;
  // The clock of the cache and of re-reads; unset: the steady clock.
  std::function<std::chrono::steady_clock::time_point()> now;
};

class IdentityResolver final : public firehose::RepoKeys {
 public:
  IdentityResolver(std::shared_ptr<Fetcher> fetcher, IdentityOptions options);

  // The DID a handle names.
  Result<std::string> resolve_handle(const std::string& handle);
  // The PDS origin (scheme://host[:port]) of a DID.
  Result<std::string> pds_of(const std::string& did);
  // A handle or a DID to the DID.
  Result<std::string> did_of(const std::string& identifier);

  // The #atproto key of a DID (RepoKeys).
  Result<firehose::PublicKey> key(const std::string& did, bool fresh) override;
  std::optional<firehose::PublicKey> cached_key(const std::string& did) override;
  // Drops what is cached of a DID (an #identity event).
  void forget(const std::string& did) override;
  // DID documents read since start.
  std::uint64_t documents_read() const { return documents_read_.load(); }
  // The fetcher its reads go through (for other fetches of the same kind
  // of caller: a PDS sign-in).
  Fetcher& fetcher() { return *fetcher_; }

 private:
  struct KeyEntry {
    firehose::PublicKey key;
    std::chrono::steady_clock::time_point expires;
    std::chrono::steady_clock::time_point read;
  };
  // Reads a DID document and caches its PDS and key.
  Result<nlohmann::json> read_document(const std::string& did);
  std::map<std::string, KeyEntry> keys_;
  std::atomic<std::uint64_t> documents_read_{0};

  struct Entry {
    std::string value;
    std::chrono::steady_clock::time_point expires;
  };
  std::chrono::steady_clock::time_point now() const {
    return options_.now ? options_.now() : std::chrono::steady_clock::now();
  }
  std::optional<std::string> cached(const std::string& key);
  void remember(const std::string& key, const std::string& value);

  std::shared_ptr<Fetcher> fetcher_;
  IdentityOptions options_;
  std::mutex mutex_;
  std::map<std::string, Entry> cache_;
  std::set<std::string> reading_;  // DIDs whose document is being read
};

// Where a DID's document is fetched: {base_url, path}; kInvalidRequest for a
// DID method other than plc and web.
Result<std::pair<std::string, std::string>> did_document_location(const std::string& did,
                                                                  const std::string& plc_url);

// The #atproto signing key of a DID document, checked to be the document
// of `did`.
Result<firehose::PublicKey> signing_key(const nlohmann::json& document, const std::string& did);

// The #atproto_pds service endpoint of a DID document, checked to be the
// document of `did` and an http(s) origin.
Result<std::string> pds_endpoint(const nlohmann::json& document, const std::string& did);

}  // namespace bulleted::identity
