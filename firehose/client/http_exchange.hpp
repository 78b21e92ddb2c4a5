// One HTTP/1.1 exchange with another host, bounded on every side: the
// answer's head (32 KiB) and its body (the caller's cap, with a length or
// chunked, whatever size a chunk claims) are never read past their limits,
// and the exchange (connecting, TLS, sending, the answer) ends by its
// deadline. A name is resolved on the caller's thread, within the system
// resolver's own timeouts: a slow name server holds no one else.
//
// Every socket is driven by one I/O thread of the process, so a connection
// is never touched by two threads at once; callers block until their
// exchange is over. Connections are kept for reuse, a few per origin, for a
// bounded number of origins. HTTPS verifies the host's certificate chain
// (the system's trust store) and name, TLS 1.2 at least.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "schema/error.hpp"

namespace bulleted::firehose {

struct HttpExchange {
  std::string method = "GET";  // GET or POST
  std::string target = "/";    // the path and query, as sent
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // sent with its Content-Length (POST)
  // The host is the network's (network_policy.hpp): refused when an address
  // it resolves to, the one connected to, is one the network may not send
  // this app view to. Checked on the addresses the connection is made to,
  // so a name cannot answer one way for a check and another to connect.
  bool public_only = false;
};

struct HttpAnswer {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // names in lower case
};

struct HttpLimits {
  std::chrono::milliseconds timeout{30'000};  // the whole exchange
  std::size_t max_body_bytes = 1 << 20;
  std::size_t max_hosts = 64;  // origins connections are kept for
  // Certificates (PEM) trusted besides the system's: tests' own CA.
  std::optional<std::string> extra_trust_pem;
};

class HttpConnections {
 public:
  explicit HttpConnections(HttpLimits limits);
  ~HttpConnections();
  HttpConnections(const HttpConnections&) = delete;
  HttpConnections& operator=(const HttpConnections&) = delete;

  // `origin` is scheme://host[:port], optionally followed by a path that
  // prefixes the target. Any answer is a value; kPayloadTooLarge when its
  // head or body passes its limit (read no further); kInvalidRequest when
  // the target or a header could not be sent as given (a line break in
  // it); kUpstreamFailure otherwise (bad origin, resolving, refused, TLS,
  // reset, timed out, not HTTP).
  Result<HttpAnswer> exchange(std::string_view origin, const HttpExchange& exchange);

  // How many origins connections are kept for (at most max_hosts).
  std::size_t pooled_hosts() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace bulleted::firehose
