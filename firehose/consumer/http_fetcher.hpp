// The identity room's Fetcher over real HTTP: one outbound client per fetch
// kind, with that kind's timeout and byte cap (identity/fetcher.hpp).
#pragma once

#include <memory>

#include "firehose/client/xrpc_client.hpp"
#include "firehose/identity/fetcher.hpp"

namespace bulleted::firehose {

inline std::shared_ptr<identity::Fetcher> make_http_fetcher(identity::FetcherOptions options) {
  return std::make_shared<identity::Fetcher>(
      std::move(options), [](std::chrono::seconds timeout, std::size_t max_bytes) {
        return make_http_xrpc_client(timeout, max_bytes);
      });
}

}  // namespace bulleted::firehose
