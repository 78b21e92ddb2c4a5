#include "appview/xrpc/faults.hpp"

#include <atomic>
#include <charconv>

namespace bulleted::appview {
namespace {

// One request's faults, from its headers.
struct RequestFaults {
  PlacementFaults placement;
  std::atomic<int> swap_failures{0};
  std::string expired;  // "", "1", or "refresh"
};

// The faults of the request this thread serves (set by decorate()).
thread_local RequestFaults* current = nullptr;

int count_of(const std::string& header) {
  int n = 0;
  std::from_chars(header.data(), header.data() + header.size(), n);
  return n;
}

// A sink whose next commits find the repo changed, as a PDS answers a
// swapCommit that is no longer its head.
class ChangedRepoSink final : public RecordSink {
 public:
  ChangedRepoSink(std::unique_ptr<RecordSink> inner, std::atomic<int>& failures)
      : inner_(std::move(inner)), failures_(failures) {}
  Result<Committed> commit(schema::Store& store, const std::string& did,
                           const std::vector<RecordWrite>& writes,
                           const CommitOptions& options) override {
    if (options.swap && failures_.load() > 0 && failures_.fetch_sub(1) > 0) {
      return fail(ErrorCode::kRepoChanged, "applyWrites: the repo changed meanwhile (injected)");
    }
    return inner_->commit(store, did, writes, options);
  }
  Result<void> refresh(schema::Store& store, const std::string& did) override {
    return inner_->refresh(store, did);
  }
  RepoWrites repo_writes() const override { return inner_->repo_writes(); }
  bool index_is_repo() const override { return inner_->index_is_repo(); }
  Result<bool> holds(schema::Store& store, const std::string& did,
                     const std::string& rkey) override {
    return inner_->holds(store, did, rkey);
  }

 private:
  std::unique_ptr<RecordSink> inner_;
  std::atomic<int>& failures_;
};

}  // namespace

HttpHandler InjectedFaults::decorate(HttpHandler inner) {
  return [inner = std::move(inner)](const HttpRequest& request) {
    RequestFaults faults;
    faults.placement.stale_reads = count_of(request.header("x-bulleted-inject-stale"));
    faults.swap_failures = count_of(request.header("x-bulleted-inject-swap"));
    faults.expired = request.header("x-bulleted-inject-expired");
    RequestFaults* outer = current;
    current = &faults;
    struct Restore {
      RequestFaults* outer;
      ~Restore() { current = outer; }
    } restore{outer};
    return inner(request);
  };
}

Result<std::unique_ptr<RecordSink>> InjectedFaults::sink(schema::Store& store,
                                                         PdsSession* session) {
  if (current != nullptr && session != nullptr && sessions_ != nullptr &&
      !current->expired.empty()) {
    if (auto r = sessions_->spoil(store, *session, current->expired == "refresh"); !r) {
      return std::unexpected(r.error());
    }
  }
  auto sink = plain_.sink(store, session);
  if (!sink || current == nullptr || current->swap_failures.load() == 0) return sink;
  return std::make_unique<ChangedRepoSink>(std::move(*sink), current->swap_failures);
}

PlacementFaults* InjectedFaults::placement() {
  return current != nullptr ? &current->placement : nullptr;
}

}  // namespace bulleted::appview
