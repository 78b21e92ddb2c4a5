// What a PDS's error answer becomes for the app view's caller.
#include <gtest/gtest.h>

#include "appview/signin/pds_sessions.hpp"

namespace bulleted::appview {
namespace {

firehose::XrpcReply reply(int status, const std::string& body,
                          std::map<std::string, std::string> headers = {}) {
  firehose::XrpcReply r;
  r.status = status;
  r.body = body;
  r.headers = std::move(headers);
  return r;
}

TEST(PdsErrorTest, WhatAnAnswerMeansForTheCaller) {
  EXPECT_EQ(
      pds_error(reply(400, R"({"error":"InvalidSwap","message":"Commit was at x"})"), "w").code,
      ErrorCode::kRepoChanged);
  EXPECT_EQ(pds_error(reply(400, R"({"error":"ExpiredToken"})"), "w").code,
            ErrorCode::kAuthRequired);
  EXPECT_EQ(pds_error(reply(401, R"({"error":"AuthenticationRequired"})"), "w").code,
            ErrorCode::kAuthRequired);
  const Error limited =
      pds_error(reply(429, R"({"error":"RateLimitExceeded"})", {{"retry-after", "3597"}}), "w");
  EXPECT_EQ(limited.code, ErrorCode::kRateLimited);
  EXPECT_EQ(limited.retry_after_seconds, 3597);
  EXPECT_EQ(pds_error(reply(429, "{}", {{"retry-after", "soon"}}), "w").retry_after_seconds, 60);
  EXPECT_EQ(pds_error(reply(500, R"({"error":"InternalServerError"})"), "w").code,
            ErrorCode::kUpstreamFailure);
  EXPECT_EQ(pds_error(reply(502, "<html>bad gateway</html>"), "w").code,
            ErrorCode::kUpstreamFailure);
  const Error refused = pds_error(reply(400, R"({"error":"InvalidRequest","message":"m"})"), "w");
  EXPECT_EQ(refused.code, ErrorCode::kUpstreamFailure);
  EXPECT_NE(refused.message.find("InvalidRequest: m"), std::string::npos);
}

}  // namespace
}  // namespace bulleted::appview
