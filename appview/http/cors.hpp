// Cross-origin access to the XRPC routes, for frontends on other origins:
// every answer under /xrpc/ (and /xrpc/_health) says who may read it
// (Access-Control-Allow-Origin: * by default, never with credentials) and
// which of its headers a client may read; a preflight (OPTIONS) is answered
// 204 with the methods, the headers the client asked for, and a max-age of a
// day, without reaching the request workers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "appview/http/server.hpp"

namespace bulleted::appview {

class CorsPolicy {
 public:
  // `origins`: {"*"} (any origin), or the origins allowed
  // (scheme://host[:port]); an empty list allows none.
  explicit CorsPolicy(std::vector<std::string> origins = {"*"});

  // Adds the headers every answer to `head` carries (nothing outside /xrpc/,
  // or for an origin not allowed).
  void decorate(const HttpRequestHead& head, HttpResponse& response) const;
  // The answer to OPTIONS on an XRPC route; nullopt for anything else.
  std::optional<HttpResponse> preflight(const HttpRequestHead& head) const;

 private:
  std::optional<std::string> allowed_origin(const HttpRequestHead& head) const;
  bool any_ = false;
  std::vector<std::string> origins_;
};

}  // namespace bulleted::appview
