// The CORS policy on its own: which answers carry which headers, what a
// preflight echoes (header names only, bounded), and an origin list.
#include "appview/http/cors.hpp"

#include <gtest/gtest.h>

namespace bulleted::appview {
namespace {

std::string header(const HttpResponse& response, const std::string& name) {
  for (const auto& [key, value] : response.headers) {
    if (key == name) return value;
  }
  return "<none>";
}

HttpRequestHead head(std::string method, std::string path,
                     std::map<std::string, std::string> headers = {}) {
  HttpRequestHead h;
  h.method = std::move(method);
  h.path = std::move(path);
  h.headers = std::move(headers);
  return h;
}

TEST(CorsTest, XrpcAnswersAreReadableFromAnyOriginAndOthersAreLeftAlone) {
  CorsPolicy any;
  HttpResponse answer;
  any.decorate(head("GET", "/xrpc/app.bulleted.getNode", {{"origin", "https://a.example"}}),
               answer);
  EXPECT_EQ(header(answer, "Access-Control-Allow-Origin"), "*");
  EXPECT_NE(header(answer, "Access-Control-Expose-Headers").find("Retry-After"), std::string::npos);
  EXPECT_EQ(header(answer, "Vary"), "<none>");
  HttpResponse other;
  any.decorate(head("GET", "/metrics"), other);
  EXPECT_TRUE(other.headers.empty());
  EXPECT_FALSE(any.preflight(head("OPTIONS", "/metrics")).has_value());
  EXPECT_FALSE(any.preflight(head("GET", "/xrpc/app.bulleted.getNode")).has_value());
}

TEST(CorsTest, PreflightsEchoHeaderNamesOnly) {
  CorsPolicy any;
  auto asked = any.preflight(head("OPTIONS", "/xrpc/app.bulleted.createNode",
                                  {{"access-control-request-headers", "authorization, dpop"}}));
  ASSERT_TRUE(asked.has_value());
  EXPECT_EQ(asked->status, 204);
  EXPECT_EQ(header(*asked, "Access-Control-Allow-Headers"), "authorization, dpop");
  EXPECT_EQ(header(*asked, "Access-Control-Max-Age"), "86400");
  // Anything but a list of names, or a very long one, is not echoed: the
  // standard list is sent instead.
  for (const std::string& odd : {std::string("x-a\r\nSet-Cookie: a=b"), std::string("a;b"),
                                 std::string(5000, 'a'), std::string()}) {
    auto answer = any.preflight(head("OPTIONS", "/xrpc/app.bulleted.createNode",
                                     {{"access-control-request-headers", odd}}));
    EXPECT_EQ(
        header(*answer, "Access-Control-Allow-Headers").rfind("Authorization, Content-Type", 0), 0u)
        << odd.substr(0, 40);
  }
}

TEST(CorsTest, AnOriginListAnswersThoseOriginsAlone) {
  CorsPolicy listed({"https://outliner.example/", "http://localhost:5173"});
  HttpResponse allowed;
  listed.decorate(head("GET", "/xrpc/_health", {{"origin", "https://outliner.example"}}), allowed);
  EXPECT_EQ(header(allowed, "Access-Control-Allow-Origin"), "https://outliner.example");
  EXPECT_EQ(header(allowed, "Vary"), "Origin");
  HttpResponse refused;
  listed.decorate(head("GET", "/xrpc/_health", {{"origin", "https://evil.example"}}), refused);
  EXPECT_EQ(header(refused, "Access-Control-Allow-Origin"), "<none>");
  EXPECT_EQ(header(refused, "Vary"), "Origin");
  auto preflight = listed.preflight(
      head("OPTIONS", "/xrpc/app.bulleted.createNode", {{"origin", "https://evil.example"}}));
  EXPECT_EQ(preflight->status, 204);
  EXPECT_EQ(header(*preflight, "Access-Control-Allow-Methods"), "<none>");
  CorsPolicy none(std::vector<std::string>{});
  HttpResponse nothing;
  none.decorate(head("GET", "/xrpc/_health", {{"origin", "https://outliner.example"}}), nothing);
  EXPECT_EQ(header(nothing, "Access-Control-Allow-Origin"), "<none>");
}

}  // namespace
}  // namespace bulleted::appview
