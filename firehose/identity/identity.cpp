#include "firehose/identity/identity.hpp"

#include "schema/syntax.hpp"

namespace bulleted::identity {
namespace {

// "scheme://host[:port]" with nothing after it, or nullopt.
std::optional<std::string> origin_of(const std::string& url) {
  const bool https = url.rfind("https://", 0) == 0;
  if (!https && url.rfind("http://", 0) != 0) return std::nullopt;
  std::string origin = url;
  while (!origin.empty() && origin.back() == '/') origin.pop_back();
  const std::size_t host = origin.find("://") + 3;
  if (host >= origin.size() || origin.find_first_of("/?#@ ", host) != std::string::npos) {
    return std::nullopt;
  }
  return origin;
}

Result<nlohmann::json> fetch_json(Fetcher& fetcher, FetchKind kind, Target target,
                                  const firehose::XrpcRequest& request, const std::string& what) {
  auto reply = fetcher.fetch(kind, target, request);
  if (!reply) return std::unexpected(reply.error());
  if (reply->status == 404 || reply->status == 400) {
    std::string detail = reply->error_message();
    if (detail.empty()) detail = "HTTP " + std::to_string(reply->status);
    return fail(ErrorCode::kNotFound, what + " not found: " + detail);
  }
  if (reply->status != 200) {
    return fail(ErrorCode::kUpstreamFailure,
                what + ": the service answered HTTP " + std::to_string(reply->status));
  }
  auto json = reply->json();
  if (!json.is_object()) return fail(ErrorCode::kUpstreamFailure, what + ": not a JSON object");
  return json;
}

}  // namespace

Result<std::pair<std::string, std::string>> did_document_location(const std::string& did,
                                                                  const std::string& plc_url) {
  if (!schema::Did::parse(did)) return fail(ErrorCode::kInvalidRequest, "not a DID: " + did);
  if (did.rfind("did:plc:", 0) == 0) {
    auto origin = origin_of(plc_url);
    if (!origin) return fail(ErrorCode::kInvalidRequest, "the PLC URL is not an http(s) origin");
    return std::pair{*origin, "/" + did};
  }
  if (did.rfind("did:web:", 0) == 0) {
    std::string host = did.substr(8);
    if (host.find(':') != std::string::npos) {
      return fail(ErrorCode::kInvalidRequest, "did:web with a path is not supported: " + did);
    }
    // A port is written %3A.
    if (auto pos = host.find("%3A"); pos != std::string::npos) host.replace(pos, 3, ":");
    const bool local = host.rfind("localhost", 0) == 0 || host.rfind("127.0.0.1", 0) == 0;
    return std::pair{(local ? "http://" : "https://") + host, std::string("/.well-known/did.json")};
  }
  return fail(ErrorCode::kInvalidRequest, "unsupported DID method: " + did);
}

namespace {

// The first object of the document's `list` (service, verificationMethod)
// whose id is "#<fragment>" or "<did>#<fragment>" and that `usable` accepts,
// once the document is checked to be the DID's; kNotFound when none is.
Result<const nlohmann::json*> document_entry(const nlohmann::json& document, const std::string& did,
                                             const char* list, const std::string& fragment,
                                             bool (*usable)(const nlohmann::json&)) {
  if (!document.is_object() || document.value("id", std::string()) != did) {
    return fail(ErrorCode::kUpstreamFailure, "the DID document is not the document of " + did);
  }
  auto entries = document.find(list);
  if (entries == document.end() || !entries->is_array()) {
    return fail(ErrorCode::kNotFound, did + " names no " + list);
  }
  for (const auto& entry : *entries) {
    if (!entry.is_object()) continue;
    const std::string id = entry.value("id", std::string());
    if ((id == "#" + fragment || id == did + "#" + fragment) && usable(entry)) return &entry;
  }
  return fail(ErrorCode::kNotFound, did + " names no #" + fragment + " in " + list);
}

}  // namespace

Result<std::string> pds_endpoint(const nlohmann::json& document, const std::string& did) {
  auto service = document_entry(document, did, "service", "atproto_pds", [](const auto& entry) {
    return entry.contains("serviceEndpoint") && entry["serviceEndpoint"].is_string();
  });
  if (!service) return std::unexpected(service.error());
  auto origin = origin_of((**service)["serviceEndpoint"].template get<std::string>());
  if (!origin) return fail(ErrorCode::kUpstreamFailure, did + ": the PDS endpoint is not a URL");
  return *origin;
}

Result<firehose::PublicKey> signing_key(const nlohmann::json& document, const std::string& did) {
  auto found = document_entry(document, did, "verificationMethod", "atproto",
                              [](const nlohmann::json&) { return true; });
  if (!found) return std::unexpected(found.error());
  const nlohmann::json& method = **found;
  auto multibase = method.find("publicKeyMultibase");
  if (multibase == method.end() || !multibase->is_string()) {
    return fail(ErrorCode::kUpstreamFailure, did + ": the #atproto key has no publicKeyMultibase");
  }
  const std::string type = method.value("type", std::string());
  const std::string text = multibase->get<std::string>();
  Result<firehose::PublicKey> key =
      fail(ErrorCode::kUpstreamFailure, did + ": the #atproto key is of type " + type);
  if (type == "Multikey") {
    key = firehose::PublicKey::from_multikey(text);
  } else if (type == "EcdsaSecp256k1VerificationKey2019" ||
             type == "EcdsaSecp256r1VerificationKey2019") {
    // The older form: base58btc of the point alone (uncompressed, as the
    // PLC directory writes it, or compressed).
    auto point = text.starts_with("z")
                     ? firehose::base58_decode(text.substr(1))
                     : Result<std::string>(fail(ErrorCode::kInvalidRequest, "not base58btc"));
    key = point ? firehose::PublicKey::from_point(type == "EcdsaSecp256k1VerificationKey2019"
                                                      ? firehose::KeyCurve::kSecp256k1
                                                      : firehose::KeyCurve::kP256,
                                                  *point)
                : Result<firehose::PublicKey>(std::unexpected(point.error()));
  }
  if (!key) {
    return fail(ErrorCode::kUpstreamFailure, did + ": the #atproto key: " + key.error().message);
  }
  return key;
}

IdentityResolver::IdentityResolver(std::shared_ptr<Fetcher> fetcher, IdentityOptions options)
    : fetcher_(std::move(fetcher)), options_(std::move(options)) {}

std::optional<std::string> IdentityResolver::cached(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto it = cache_.find(key);
  if (it == cache_.end()) return std::nullopt;
  if (it->second.expires <= now()) {
    cache_.erase(it);
    return std::nullopt;
  }
  return it->second.value;
}

void IdentityResolver::remember(const std::string& key, const std::string& value) {
  std::lock_guard lock(mutex_);
  if (cache_.size() > 100'000) cache_.clear();  // a bound, not a policy
  cache_[key] = Entry{value, now() + options_.cache_ttl};
}

Result<std::string> IdentityResolver::resolve_handle(const std::string& raw) {
  auto handle = schema::Handle::parse(raw);
  if (!handle) return fail(ErrorCode::kInvalidRequest, "not a handle: " + handle.error());
  std::string name = raw;
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const std::string key = "handle:" + name;
  if (auto hit = cached(key)) return *hit;
  std::string did;
  if (options_.handle_resolver) {
    auto origin = origin_of(*options_.handle_resolver);
    if (!origin) return fail(ErrorCode::kInvalidRequest, "the handle resolver is not a URL");
    auto json = fetch_json(*fetcher_, FetchKind::kHandle, Target::kOperator,
                           {.base_url = *origin,
                            .path = "/xrpc/com.atproto.identity.resolveHandle",
                            .query = {{"handle", name}}},
                           "handle " + name);
    if (!json) return std::unexpected(json.error());
    did = json->value("did", std::string());
  } else {
    // The host is whoever registered the name: checked like every address
    // the network gives.
    auto reply =
        fetcher_->fetch(FetchKind::kHandle, Target::kNetwork,
                        {.base_url = "https://" + name, .path = "/.well-known/atproto-did"});
    if (!reply) {
      if (reply.error().code == ErrorCode::kInvalidRequest) {
        return fail(ErrorCode::kUpstreamFailure, "handle " + name + ": " + reply.error().message);
      }
      return std::unexpected(reply.error());
    }
    if (reply->status != 200) return fail(ErrorCode::kNotFound, "handle " + name + " not found");
    did = reply->body;
    while (!did.empty() && std::isspace(static_cast<unsigned char>(did.back()))) did.pop_back();
  }
  if (!schema::Did::parse(did)) {
    return fail(ErrorCode::kUpstreamFailure, "handle " + name + " resolved to no valid DID");
  }
  remember(key, did);
  return did;
}

Result<nlohmann::json> IdentityResolver::read_document(const std::string& did) {
  auto location = did_document_location(did, options_.plc_url);
  if (!location) return std::unexpected(location.error());
  // While a request waits on one read of a DID's document, another request
  // naming the same DID does not wait too: it is told to come back.
  const bool in_request = RequestScope::current() != nullptr;
  {
    std::lock_guard lock(mutex_);
    if (reading_.contains(did) && in_request) {
      Error busy{ErrorCode::kUnavailable,
                 "the DID document of " + did + " is being read; retry in a second"};
      busy.retry_after_seconds = 1;
      return std::unexpected(busy);
    }
    reading_.insert(did);
  }
  struct Done {
    IdentityResolver* self;
    const std::string& did;
    ~Done() {
      std::lock_guard lock(self->mutex_);
      self->reading_.erase(did);
    }
  } done{this, did};
  // A did:plc document comes from the operator's directory; a did:web
  // host is the network's.
  const Target target = did.starts_with("did:web:") ? Target::kNetwork : Target::kOperator;
  documents_read_++;
  auto document =
      fetch_json(*fetcher_, FetchKind::kDidDocument, target,
                 {.base_url = location->first, .path = location->second}, "DID document of " + did);
  if (!document) {
    if (document.error().code == ErrorCode::kInvalidRequest && target == Target::kNetwork) {
      return fail(ErrorCode::kUpstreamFailure, did + ": " + document.error().message);
    }
    return document;
  }
  // Whatever the caller asked for, keep both answers the document gives.
  if (auto endpoint = pds_endpoint(*document, did)) remember("pds:" + did, *endpoint);
  if (auto key = signing_key(*document, did)) {
    const auto at = now();
    std::lock_guard lock(mutex_);
    if (keys_.size() > 100'000) keys_.clear();  // a bound, not a policy
    keys_.insert_or_assign(did, KeyEntry{*key, at + options_.cache_ttl, at});
  }
  return document;
}

Result<std::string> IdentityResolver::pds_of(const std::string& did) {
  const std::string key = "pds:" + did;
  if (auto hit = cached(key)) return *hit;
  auto document = read_document(did);
  if (!document) return std::unexpected(document.error());
  return pds_endpoint(*document, did);
}

Result<firehose::PublicKey> IdentityResolver::key(const std::string& did, bool fresh) {
  {
    std::lock_guard lock(mutex_);
    auto it = keys_.find(did);
    if (it != keys_.end()) {
      const auto at = now();
      const bool recent = at - it->second.read < options_.refresh_interval;
      if ((!fresh && it->second.expires > at) || (fresh && recent)) return it->second.key;
    }
  }
  auto document = read_document(did);
  if (!document) return std::unexpected(document.error());
  return signing_key(*document, did);
}

std::optional<firehose::PublicKey> IdentityResolver::cached_key(const std::string& did) {
  std::lock_guard lock(mutex_);
  auto it = keys_.find(did);
  if (it == keys_.end() || it->second.expires <= now()) {
    return std::nullopt;
  }
  return it->second.key;
}

void IdentityResolver::forget(const std::string& did) {
  std::lock_guard lock(mutex_);
  cache_.erase("pds:" + did);
  keys_.erase(did);
}

Result<std::string> IdentityResolver::did_of(const std::string& identifier) {
  if (identifier.rfind("did:", 0) == 0) {
    if (!schema::Did::parse(identifier)) {
      return fail(ErrorCode::kInvalidRequest, "not a DID: " + identifier);
    }
    return identifier;
  }
  return resolve_handle(identifier);
}

}  // namespace bulleted::identity
