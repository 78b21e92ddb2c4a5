// A stand-in for the outbound XRPC client: answers each call with what a
// test's handler says, and keeps every request it was sent. A handler may
// block (a slow host) until the test lets it go.
#pragma once

#include <functional>
#include <mutex>
#include <vector>

#include "firehose/client/xrpc_client.hpp"

namespace bulleted::testing {

class FakeXrpcClient final : public firehose::XrpcClient {
 public:
  using Handler = std::function<Result<firehose::XrpcReply>(const firehose::XrpcRequest&)>;
  explicit FakeXrpcClient(Handler handler) : handler_(std::move(handler)) {}

  Result<firehose::XrpcReply> call(const firehose::XrpcRequest& request) override {
    {
      std::lock_guard lock(mutex_);
      sent_.push_back(request);
    }
    return handler_(request);
  }
  std::vector<firehose::XrpcRequest> sent() const {
    std::lock_guard lock(mutex_);
    return sent_;
  }
  std::size_t calls() const {
    std::lock_guard lock(mutex_);
    return sent_.size();
  }

 private:
  Handler handler_;
  mutable std::mutex mutex_;
  std::vector<firehose::XrpcRequest> sent_;
};

// An answer with a status and a body.
inline firehose::XrpcReply reply_of(int status, std::string body,
                                    std::map<std::string, std::string> headers = {}) {
  firehose::XrpcReply reply;
  reply.status = status;
  reply.body = std::move(body);
  reply.headers = std::move(headers);
  return reply;
}

}  // namespace bulleted::testing
