// Outbound XRPC over HTTP(S): one small interface for every call the app view
// makes to other services (getRepo on a PDS, identity lookups, a user's PDS
// writes). The implementation is http_exchange.hpp's: every limit of an
// answer kept while it is read, connections kept for a bounded number of
// origins.
//
// Thread-safe. Calls block: make them from worker threads, never from a
// handler or continuation of a network library.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "schema/error.hpp"

namespace bulleted::firehose {

struct XrpcRequest {
  std::string method = "GET";  // GET or POST
  std::string base_url;        // scheme://host[:port]
  std::string path;            // "/xrpc/<nsid>" or any path
  std::vector<std::pair<std::string, std::string>> query;
  std::optional<nlohmann::json> body;  // POSTed as application/json
  // POSTed as application/x-www-form-urlencoded (OAuth endpoints), when no body
  std::vector<std::pair<std::string, std::string>> form;
  std::optional<std::string> bearer;  // Authorization: Bearer ...
  // Further request headers (an Authorization here replaces the bearer's).
  std::vector<std::pair<std::string, std::string>> headers;
  // The network's address, not the operator's: refused when the host
  // resolves to an address the network may not send this app view to
  // (HttpExchange::public_only).
  bool public_only = false;
};

// name=value pairs percent-encoded as a form body (RFC 3986 unreserved kept).
std::string form_encode(const std::vector<std::pair<std::string, std::string>>& fields);

// The string at `path` in an answer's JSON (object keys, outermost first),
// or "" when it is missing or not a string: how every reader of XRPC answers
// takes a field.
std::string json_text(const nlohmann::json& json, std::initializer_list<const char*> path);

struct XrpcReply {
  int status = 0;
  std::string body;                            // raw bytes
  std::map<std::string, std::string> headers;  // names in lower case
  // The parsed body when it is JSON, else a discarded value.
  nlohmann::json json() const;
  // The XRPC error name of a failed call ("" when absent).
  std::string error_name() const;
  std::string error_message() const;
  std::optional<std::string> header(const std::string& lower_name) const;
};

class XrpcClient {
 public:
  virtual ~XrpcClient() = default;
  // Any answer from the server, whatever its status, is a value; a
  // transport failure (refused, reset, timeout, bad URL) is kUpstreamFailure,
  // an answer over the cap kPayloadTooLarge (read no further than the cap).
  virtual Result<XrpcReply> call(const XrpcRequest& request) = 0;
  // How many hosts the client holds connections for (0 for clients that
  // keep none).
  virtual std::size_t pooled_hosts() const { return 0; }
};

// `max_body_bytes` caps every answer read (no more than that is ever read
// from the socket, and the head at most 32 KiB); `timeout` bounds each
// call as a whole; connections are pooled for
// at most `max_hosts` hosts at once, the least recently used dropped first.
std::shared_ptr<XrpcClient> make_http_xrpc_client(std::chrono::seconds timeout,
                                                  std::size_t max_body_bytes,
                                                  std::size_t max_hosts = 64);

// Sets the size of cpprest's thread pool, which the websocket sessions
// share; must run before any other cpprest use.
void init_cpprest_threads(int threads);

}  // namespace bulleted::firehose
