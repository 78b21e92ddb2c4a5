// One account's PDS without a network, for the pds-mode write path: a real
// signed repo (bench/signed_repo.hpp: an MST, signed commits, getRepo's
// CAR), and the XRPC calls the app view makes of a PDS: createSession,
// refreshSession, getLatestCommit, applyWrites (swapCommit checked:
// InvalidSwap when the repo moved on), getRecord, getRepo. A test can
// write to the repo as another client would, make the access token
// expire, or have the PDS answer 429.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "bench/signed_repo.hpp"
#include "firehose/dag_cbor.hpp"
#include "ordering/tid.hpp"
#include "schema/syntax.hpp"
#include "tests/support/fake_xrpc_client.hpp"

namespace bulleted::testing {

class FakePds {
 public:
  static constexpr const char* kUrl = "https://127.0.0.1:2583";  // no name to resolve

  FakePds(const std::string& did, firehose::PrivateKey key)
      : repo_(did, std::move(key)),
        client_(std::make_shared<FakeXrpcClient>(
            [this](const firehose::XrpcRequest& request) { return answer(request); })) {
    write_as_another_client("3zzzzzzzzzzz2", "written before the app view");
  }

  std::shared_ptr<FakeXrpcClient> client() const { return client_; }
  const bench::SignedRepo& repo() const { return repo_; }

  // A record written by another client: the repo moves on without the app view.
  void write_as_another_client(const std::string& rkey, const std::string& text) {
    std::lock_guard lock(mutex_);
    nlohmann::json record = {
        {"$type", "app.bulleted.node"}, {"text", text}, {"createdAt", "2026-12-04T10:00:00.000Z"}};
    commit({{"create", "app.bulleted.node/" + rkey, block_of(record)}});
  }
  // The access token given out so far is refused from now on.
  void expire_access() {
    std::lock_guard lock(mutex_);
    expired_ = access_;
  }
  // The next `n` applyWrites are answered 429, Retry-After `seconds`.
  void rate_limit(int n, int seconds) {
    std::lock_guard lock(mutex_);
    limited_ = n;
    retry_after_ = seconds;
  }
  int calls_of(const std::string& method) const {
    std::lock_guard lock(mutex_);
    auto it = calls_.find(method);
    return it == calls_.end() ? 0 : it->second;
  }

 private:
  static std::string block_of(const nlohmann::json& record) {
    return firehose::encode_dag_cbor(*firehose::from_json(record));
  }
  static firehose::XrpcReply error(int status, const std::string& name) {
    return reply_of(status, nlohmann::json{{"error", name}, {"message", name}}.dump());
  }

  void commit(const std::vector<bench::SignedRepo::Write>& writes) {
    repo_.commit(writes, revs_.next().str(), ++seq_);
  }

  Result<firehose::XrpcReply> answer(const firehose::XrpcRequest& request) {
    std::lock_guard lock(mutex_);
    const std::string method = request.path.substr(request.path.rfind('/') + 1);
    ++calls_[method];
    if (method == "com.atproto.server.createSession") return session();
    if (method == "com.atproto.server.refreshSession") {
      if (request.bearer != refresh_) return error(400, "ExpiredToken");
      return session();
    }
    if (!request.bearer || *request.bearer != access_ || *request.bearer == expired_) {
      return error(400, "ExpiredToken");
    }
    if (method == "com.atproto.sync.getLatestCommit") {
      return reply_of(200,
                      nlohmann::json{{"cid", repo_.head()->str()}, {"rev", *repo_.rev()}}.dump());
    }
    if (method == "com.atproto.sync.getRepo") return reply_of(200, repo_.car());
    if (method == "com.atproto.repo.getRecord") {
      bool held = false;
      for (const auto& [name, value] : request.query) {
        if (name == "rkey") held = repo_.current("app.bulleted.node/" + value).has_value();
      }
      return held ? reply_of(200, "{}") : error(400, "RecordNotFound");
    }
    if (method == "com.atproto.repo.applyWrites") return apply_writes(*request.body);
    return error(400, "MethodNotImplemented");
  }

  firehose::XrpcReply session() {
    ++tokens_;
    access_ = "access-" + std::to_string(tokens_);
    refresh_ = "refresh-" + std::to_string(tokens_);
    return reply_of(200, nlohmann::json{{"did", repo_.did()},
                                        {"handle", "alice.test"},
                                        {"accessJwt", access_},
                                        {"refreshJwt", refresh_}}
                             .dump());
  }

  firehose::XrpcReply apply_writes(const nlohmann::json& body) {
    if (limited_ > 0) {
      --limited_;
      return reply_of(429, R"({"error":"RateLimitExceeded","message":"slow down"})",
                      {{"retry-after", std::to_string(retry_after_)}});
    }
    if (body.contains("swapCommit") && body["swapCommit"] != repo_.head()->str()) {
      return error(400, "InvalidSwap");
    }
    std::vector<bench::SignedRepo::Write> writes;
    nlohmann::json results = nlohmann::json::array();
    for (const auto& write : body["writes"]) {
      const std::string type = write["$type"];
      const std::string action = type.substr(type.find('#') + 1);
      const std::string path = "app.bulleted.node/" + write["rkey"].get<std::string>();
      if (action == "delete") {
        writes.push_back({"delete", path, ""});
        results.push_back({{"$type", "com.atproto.repo.applyWrites#deleteResult"}});
        continue;
      }
      writes.push_back({action, path, block_of(write["value"])});
      results.push_back({{"$type", "com.atproto.repo.applyWrites#" + action + "Result"},
                         {"uri", "at://" + repo_.did() + "/" + path},
                         {"cid", firehose::Cid::of_dag_cbor(writes.back().record).str()}});
    }
    commit(writes);
    return reply_of(
        200, nlohmann::json{{"commit", {{"cid", repo_.head()->str()}, {"rev", *repo_.rev()}}},
                            {"results", results}}
                 .dump());
  }

  mutable std::mutex mutex_;
  bench::SignedRepo repo_;
  std::shared_ptr<FakeXrpcClient> client_;
  ordering::TidClock revs_{7};
  std::int64_t seq_ = 0;
  int tokens_ = 0;
  std::string access_;
  std::string refresh_;
  std::string expired_ = "none";
  int limited_ = 0;
  int retry_after_ = 0;
  std::map<std::string, int> calls_;
};

}  // namespace bulleted::testing
