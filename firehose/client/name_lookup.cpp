#include "firehose/client/name_lookup.hpp"

#include <algorithm>
#include <system_error>
#include <thread>

namespace bulleted::firehose {

// What a lookup's thread and its caller share: the caller may leave before
// the answer comes, and the thread then frees it.
struct NameLookups::Pending {
  std::mutex mutex;
  std::condition_variable answered;
  bool done = false;
  bool left = false;
  int status = 0;
  addrinfo* found = nullptr;
};

namespace {
thread_local const std::string* current_client = nullptr;
}  // namespace

NameLookups::ForClient::ForClient(std::string client)
    : client_(std::move(client)), outer_(current_client) {
  current_client = &client_;
}

NameLookups::ForClient::~ForClient() { current_client = outer_; }

NameLookups::NameLookups(std::size_t max_running, Lookup lookup, std::size_t request_share,
                         std::size_t per_client)
    : max_running_(max_running),
      lookup_(lookup),
      request_share_(request_share > 0 ? std::min(request_share, max_running) : max_running / 2),
      per_client_(per_client) {}

std::optional<std::string> NameLookups::take_place(const std::string& client,
                                                   const std::string& host) {
  std::lock_guard lock(mutex_);
  if (running_ >= max_running_) {
    ++refused_;
    return "cannot resolve " + host + ": too many name lookups wait on name servers";
  }
  if (!client.empty()) {
    auto& mine = clients_[client];
    if (requests_running_ >= request_share_ || mine >= per_client_) {
      if (mine == 0) clients_.erase(client);
      ++refused_;
      return "cannot resolve " + host + ": too many name lookups wait on name servers";
    }
    ++mine;
    ++requests_running_;
  }
  ++running_;
  return std::nullopt;
}

void NameLookups::give_place(const std::string& client) {
  // Under mutex_.
  --running_;
  if (client.empty()) return;
  --requests_running_;
  auto mine = clients_.find(client);
  if (mine != clients_.end() && --mine->second == 0) clients_.erase(mine);
}

NameLookups::~NameLookups() {
  std::unique_lock lock(mutex_);
  ended_.wait(lock, [&] { return running_ == 0; });
}

NameLookups& NameLookups::shared() {
  static NameLookups* lookups = new NameLookups();
  return *lookups;
}

std::size_t NameLookups::running() const {
  std::lock_guard lock(mutex_);
  return running_;
}

NameLookups::Counts NameLookups::counts() const {
  std::lock_guard lock(mutex_);
  return Counts{running_, requests_running_, refused_};
}

Result<AddressInfo> NameLookups::look_up(const std::string& host, const std::string& port,
                                         const addrinfo& hints,
                                         std::chrono::steady_clock::time_point deadline) {
  // An address written out asks no name server: read at once.
  addrinfo numeric = hints;
  numeric.ai_flags |= AI_NUMERICHOST;
  addrinfo* literal = nullptr;
  if (getaddrinfo(host.c_str(), port.empty() ? nullptr : port.c_str(), &numeric, &literal) == 0 &&
      literal != nullptr) {
    return AddressInfo(literal);
  }
  const std::string client = current_client != nullptr ? *current_client : std::string();
  if (auto refused = take_place(client, host)) return fail(ErrorCode::kUpstreamFailure, *refused);
  auto pending = std::make_shared<Pending>();
  try {
    std::thread([this, pending, host, port, hints, client] {
      addrinfo* found = nullptr;
      const int status =
          lookup_(host.c_str(), port.empty() ? nullptr : port.c_str(), &hints, &found);
      {
        // Counted out first, and `this` not touched after: its destructor
        // waits for no more than this.
        std::lock_guard lock(mutex_);
        give_place(client);
        ended_.notify_all();
      }
      std::lock_guard lock(pending->mutex);
      if (pending->left) {
        if (found != nullptr) freeaddrinfo(found);
        return;
      }
      pending->status = status;
      pending->found = found;
      pending->done = true;
      pending->answered.notify_all();
    }).detach();
  } catch (const std::system_error&) {
    std::lock_guard lock(mutex_);
    give_place(client);
    return fail(ErrorCode::kUpstreamFailure,
                "cannot resolve " + host + ": no thread to look it up");
  }
  std::unique_lock lock(pending->mutex);
  if (!pending->answered.wait_until(lock, deadline, [&] { return pending->done; })) {
    pending->left = true;
    return fail(ErrorCode::kUpstreamFailure, "resolving " + host + ": timed out");
  }
  AddressInfo found(pending->found);
  if (pending->status != 0 || !found)
    return fail(ErrorCode::kUpstreamFailure, "cannot resolve " + host);
  return found;
}

}  // namespace bulleted::firehose
