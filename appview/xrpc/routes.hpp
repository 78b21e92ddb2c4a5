// The paths the API answers, one table read by both Api::admit (before a
// body) and Api::handle: what each path is, the label its metrics carry,
// and the lane it runs in. The methods under /xrpc/ have their own table
// (api_methods.hpp); anything not listed is the web outliner's files, or 404.
#pragma once

#include <string_view>

#include "appview/http/server.hpp"

namespace bulleted::appview {

enum class Route {
  kLiveness,     // /healthz
  kReadiness,    // /readyz
  kMetrics,      // /metrics
  kHealth,       // /xrpc/_health
  kXrpc,         // /xrpc/<nsid>: the method table
  kOAuthSignIn,  // /oauth/login, /oauth/callback: sign-ins reach other hosts
  kOAuth,        // the rest of /oauth/ (client metadata, keys)
  kDidDocument,  // /.well-known/did.json
  kWeb,          // the web outliner's files, else 404
};

struct RouteRow {
  std::string_view path;
  bool prefix;  // the path and everything under it
  Route route;
  std::string_view label;  // for metrics ("" for XRPC: the NSID)
  // Operators' routes run in their own lane; those that read kept state
  // (a DatabaseProbe) are answered on the connection's own thread at once.
  bool operators = false;
  bool from_kept_state = false;
};

// The row of `path` (the kWeb row when none other matches).
const RouteRow& route_of(std::string_view path);

}  // namespace bulleted::appview
