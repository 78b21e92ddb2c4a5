#include "appview/xrpc/routes.hpp"

namespace bulleted::appview {
namespace {

constexpr RouteRow kRoutes[] = {
    {"/healthz", false, Route::kLiveness, "_healthz", true, true},
    {"/readyz", false, Route::kReadiness, "_readyz", true, true},
    {"/metrics", false, Route::kMetrics, "_metrics", true, false},
    {"/xrpc/_health", false, Route::kHealth, "_health", true, true},
    {"/xrpc/", true, Route::kXrpc, ""},
    {"/oauth/login", false, Route::kOAuthSignIn, "_oauth"},
    {"/oauth/callback", false, Route::kOAuthSignIn, "_oauth"},
    {"/oauth/", true, Route::kOAuth, "_oauth"},
    {"/.well-known/did.json", false, Route::kDidDocument, "_did"},
};
constexpr RouteRow kWebRow{"/", true, Route::kWeb, "_web"};

}  // namespace

const RouteRow& route_of(std::string_view path) {
  for (const auto& row : kRoutes) {
    if (row.prefix ? path.starts_with(row.path) : path == row.path) return row;
  }
  return kWebRow;
}

}  // namespace bulleted::appview
