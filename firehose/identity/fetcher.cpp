#include "firehose/identity/fetcher.hpp"

#include "firehose/client/name_lookup.hpp"
#include "firehose/client/network_policy.hpp"

namespace bulleted::identity {
namespace {

thread_local RequestScope* current_scope = nullptr;

// What names a GET's answer: its kind and whole address.
std::string failure_key(FetchKind kind, const firehose::XrpcRequest& request) {
  std::string key(fetch_kind(kind).name);
  key += ' ';
  key += request.base_url;
  key += request.path;
  char sep = '?';
  for (const auto& [name, value] : request.query) {
    key += sep;
    key += name;
    key += '=';
    key += value;
    sep = '&';
  }
  return key;
}

}  // namespace

FetchGate::Place::~Place() {
  if (gate_ == nullptr) return;
  std::lock_guard lock(gate_->mutex_);
  auto& clients = gate_->clients_[static_cast<std::size_t>(share_)];
  if (--clients[client_] <= 0) clients.erase(client_);
}

std::optional<FetchGate::Place> FetchGate::try_enter(const std::string& client, int per_client,
                                                     Target share) {
  std::lock_guard lock(mutex_);
  auto& clients = clients_[static_cast<std::size_t>(share)];
  int held = 0;
  for (const auto& [name, count] : clients) held += count;
  auto mine = clients.find(client);
  if ((mine != clients.end() && mine->second >= per_client) || held >= total_) {
    refused_++;
    return std::nullopt;
  }
  ++clients[client];
  return Place(this, client, share);
}

int FetchGate::held() const {
  std::lock_guard lock(mutex_);
  int held = 0;
  for (const auto& clients : clients_) {
    for (const auto& [name, count] : clients) held += count;
  }
  return held;
}

RequestScope::RequestScope(FetchGate& gate, std::string client)
    : gate_(gate), client_(std::move(client)), outer_(current_scope) {
  current_scope = this;
}

RequestScope::~RequestScope() { current_scope = outer_; }

RequestScope* RequestScope::current() { return current_scope; }

bool RequestScope::hold(int per_client, Target share) {
  return hold_as(client_, per_client, share);
}

bool RequestScope::hold_as(const std::string& client, int per_client, Target share) {
  auto& place = places_[static_cast<std::size_t>(share)];
  if (place) return true;
  auto entered = gate_.try_enter(client, per_client, share);
  if (!entered) return false;
  place.emplace(std::move(*entered));
  return true;
}

Fetcher::Fetcher(FetcherOptions options, const ClientMaker& make_client)
    : options_(std::move(options)) {
  for (const auto& kind : kFetchKinds) {
    clients_[static_cast<std::size_t>(kind.kind)] = make_client(kind.timeout, kind.max_bytes);
  }
}

std::shared_ptr<Fetcher> Fetcher::over(std::shared_ptr<firehose::XrpcClient> client,
                                       FetcherOptions options) {
  return std::make_shared<Fetcher>(std::move(options),
                                   [&](std::chrono::seconds, std::size_t) { return client; });
}

std::optional<Result<firehose::XrpcReply>> Fetcher::remembered(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto it = failures_.find(key);
  if (it == failures_.end()) return std::nullopt;
  if (it->second.until <= std::chrono::steady_clock::now()) {
    failures_.erase(it);
    return std::nullopt;
  }
  remembered_hits_++;
  if (it->second.reply) return Result<firehose::XrpcReply>(*it->second.reply);
  return Result<firehose::XrpcReply>(std::unexpected(it->second.error));
}

void Fetcher::remember(const std::string& key, const Result<firehose::XrpcReply>& outcome) {
  Failure failure;
  if (outcome) {
    failure.reply = *outcome;
  } else {
    failure.error = outcome.error();
  }
  failure.until = std::chrono::steady_clock::now() + options_.negative_seconds;
  std::lock_guard lock(mutex_);
  while (failures_.size() >= options_.max_remembered_failures && !failure_order_.empty()) {
    failures_.erase(failure_order_.front());
    failure_order_.pop_front();
  }
  if (failures_.insert_or_assign(key, std::move(failure)).second) failure_order_.push_back(key);
}

Result<firehose::XrpcReply> Fetcher::fetch(FetchKind kind, Target target,
                                           const firehose::XrpcRequest& request) {
  const FetchKindInfo& info = fetch_kind(kind);
  const bool get = request.method != "POST";
  const std::string key = get ? failure_key(kind, request) : std::string();
  if (get) {
    if (auto known = remembered(key)) return std::move(*known);
  }
  // The policy's check looks no name up (the client does, with the
  // request's place): an address it refuses takes no place, and is
  // remembered like any other failure.
  if (target == Target::kNetwork) {
    if (auto allowed = firehose::check_network_url(request.base_url + request.path,
                                                   options_.allow_private_addresses);
        !allowed) {
      Result<firehose::XrpcReply> refused = std::unexpected(allowed.error());
      if (get) remember(key, refused);
      return refused;
    }
  }
  // A place of the target's share: the operator's hosts never wait behind
  // requests' waits on the network's.
  RequestScope* scope = RequestScope::current();
  if (scope != nullptr && !scope->hold(1, target)) {
    Error busy{ErrorCode::kUnavailable,
               "the app view is waiting on other hosts for other requests; retry in a second"};
    busy.retry_after_seconds = 1;
    return std::unexpected(busy);
  }
  // A request's lookups of the network's names count as its client's, in
  // their share; the operator's hosts are looked up in the process's own.
  std::optional<firehose::NameLookups::ForClient> looking_up;
  if (scope != nullptr && target == Target::kNetwork) looking_up.emplace(scope->client());
  sent_++;
  // The network's host is checked again on the addresses connected to.
  firehose::XrpcRequest sent = request;
  sent.public_only = target == Target::kNetwork && !options_.allow_private_addresses;
  auto outcome = clients_[static_cast<std::size_t>(kind)]->call(sent);
  if (outcome && outcome->body.size() > info.max_bytes) {
    outcome = fail(ErrorCode::kPayloadTooLarge, request.base_url + request.path +
                                                    ": answer larger than the limit of a " +
                                                    std::string(info.name));
  }
  if (get && (!outcome || outcome->status >= 400)) remember(key, outcome);
  return outcome;
}

}  // namespace bulleted::identity
