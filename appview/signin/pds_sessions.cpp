#include "appview/signin/pds_sessions.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <functional>

#include "appview/signin/tokens.hpp"
#include "firehose/identity/fetcher.hpp"

namespace bulleted::appview {
namespace {

bool expired_token(const firehose::XrpcReply& reply) {
  const std::string name = reply.error_name();
  if (reply.status == 401 &&
      reply.header("www-authenticate").value_or("").find("invalid_token") != std::string::npos) {
    return true;  // a DPoP-bound token the resource server refused
  }
  return (reply.status == 400 || reply.status == 401) &&
         (name == "ExpiredToken" || name == "InvalidToken");
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Refreshed this long before the access token's expiry.
constexpr std::int64_t kRefreshMarginSeconds = 60;
// Requests of one account that may wait on its PDS at once, counted by the
// account rather than the address (people behind one address, or a PDS
// calling for its users with service auth, write at the same time).
constexpr int kPdsCallsPerAccount = 2;

}  // namespace

Error pds_error(const firehose::XrpcReply& reply, const std::string& what) {
  const std::string name = reply.error_name();
  std::string detail = name.empty() ? "HTTP " + std::to_string(reply.status) : name;
  if (const std::string message = reply.error_message(); !message.empty()) {
    detail += ": " + message;
  }
  if (name == "InvalidSwap") {
    return Error{ErrorCode::kRepoChanged, what + ": the repo changed meanwhile (" + detail + ")"};
  }
  if (reply.status == 401 || name == "ExpiredToken" || name == "InvalidToken" ||
      name == "AuthMissing") {
    return Error{ErrorCode::kAuthRequired,
                 what + ": the PDS refused the session (" + detail + "); sign in again"};
  }
  if (reply.status == 429) {
    Error error{ErrorCode::kRateLimited, what + ": the PDS's rate limit (" + detail + ")"};
    error.retry_after_seconds = 60;
    if (auto after = reply.header("retry-after")) {
      try {
        error.retry_after_seconds = std::max(1, std::stoi(*after));
      } catch (const std::exception&) {
      }
    }
    return error;
  }
  return Error{ErrorCode::kUpstreamFailure, what + ": the PDS answered " + detail};
}

PdsSessions::PdsSessions(std::shared_ptr<firehose::XrpcClient> client,
                         identity::IdentityResolver& identity, SecretBox box)
    : client_(std::move(client)), identity_(identity), box_(std::move(box)) {}

Result<NewSession> PdsSessions::create(schema::Store& store, const std::string& identifier,
                                       const std::string& password) {
  if (identifier.empty() || password.empty()) {
    return fail(ErrorCode::kInvalidRequest, "identifier and password are required");
  }
  auto did = identity_.did_of(identifier);
  if (!did) return std::unexpected(did.error());
  auto pds = identity_.pds_of(*did);
  if (!pds) return std::unexpected(pds.error());
  // The PDS is the one the DID document names: the network's address.
  auto reply = identity_.fetcher().fetch(
      identity::FetchKind::kPdsSignIn, identity::Target::kNetwork,
      {.method = "POST",
       .base_url = *pds,
       .path = "/xrpc/com.atproto.server.createSession",
       .body = nlohmann::json{{"identifier", *did}, {"password", password}}});
  if (!reply) return std::unexpected(reply.error());
  if (reply->status != 200) {
    Error error = pds_error(*reply, "createSession");
    if (reply->status == 401 || reply->status == 400) {
      error =
          Error{ErrorCode::kAuthRequired, "the PDS refused the sign-in: " + reply->error_message()};
    }
    return std::unexpected(error);
  }
  auto json = reply->json();
  PdsSession session;
  session.did = firehose::json_text(json, {"did"});
  session.access = firehose::json_text(json, {"accessJwt"});
  session.refresh = firehose::json_text(json, {"refreshJwt"});
  if (session.did != *did || session.access.empty() || session.refresh.empty()) {
    return fail(ErrorCode::kUpstreamFailure, "createSession: the PDS's answer is incomplete");
  }
  if (auto handle = firehose::json_text(json, {"handle"}); !handle.empty()) session.handle = handle;
  session.pds_url = *pds;
  NewSession created{session, new_token()};
  created.session.digest = token_digest(created.token);
  if (auto r = store.sessions().put({created.session.digest, session.did, session.handle,
                                     session.pds_url, box_.seal(session.access),
                                     box_.seal(session.refresh)});
      !r) {
    return std::unexpected(r.error());
  }
  spdlog::info("session: {} signed in through {}", session.did, session.pds_url);
  return created;
}

Result<NewSession> PdsSessions::create(schema::Store& store, const SignedIn& signed_in) {
  NewSession created{PdsSession{"", signed_in.did, signed_in.handle, signed_in.pds_url,
                                signed_in.tokens.access, signed_in.tokens.refresh, signed_in.grant},
                     new_token()};
  created.session.digest = token_digest(created.token);
  if (auto r = store.sessions().put({created.session.digest, signed_in.did, signed_in.handle,
                                     signed_in.pds_url, box_.seal(signed_in.tokens.access),
                                     box_.seal(signed_in.tokens.refresh),
                                     box_.seal(signed_in.grant.to_json().dump())});
      !r) {
    return std::unexpected(r.error());
  }
  return created;
}

std::mutex& PdsSessions::refresh_lock(const std::string& digest) {
  return refresh_locks_[std::hash<std::string>{}(digest) % refresh_locks_.size()];
}

Result<PdsSession> PdsSessions::find(schema::Store& store, std::string_view token) {
  return find_by_digest(store, token_digest(token));
}

Result<PdsSession> PdsSessions::find_by_digest(schema::Store& store, const std::string& digest) {
  auto row = store.sessions().find(digest);
  if (!row) return std::unexpected(row.error());
  if (!*row) return fail(ErrorCode::kAuthRequired, "the token is not valid; sign in again");
  return opened(**row);
}

Result<PdsSession> PdsSessions::find_for_did(schema::Store& store, const std::string& did) {
  auto row = store.sessions().latest_of(did);
  if (!row) return std::unexpected(row.error());
  if (!*row) {
    return fail(ErrorCode::kAuthRequired,
                "the app view holds no session of " + did +
                    " to write to its PDS with; sign in to the app view first");
  }
  return opened(**row);
}

Result<PdsSession> PdsSessions::opened(const schema::SessionRow& row) const {
  auto access = box_.open(row.access_sealed);
  auto refresh = box_.open(row.refresh_sealed);
  if (!access || !refresh) {
    // Sealed with another key (the key was rotated): the session is gone.
    spdlog::warn("session: a stored session of {} does not open with the configured key", row.did);
    return fail(ErrorCode::kAuthRequired, "the session is no longer valid; sign in again");
  }
  PdsSession session{row.digest,          row.did, row.handle, row.pds_url, std::move(*access),
                     std::move(*refresh), {}};
  if (row.oauth_sealed) {
    auto grant_text = box_.open(*row.oauth_sealed);
    auto grant = grant_text
                     ? OAuthGrant::from_json(nlohmann::json::parse(*grant_text, nullptr, false))
                     : Result<OAuthGrant>(std::unexpected(grant_text.error()));
    if (!grant) {
      spdlog::warn("session: the OAuth grant of a session of {} cannot be read", row.did);
      return fail(ErrorCode::kAuthRequired, "the session is no longer valid; sign in again");
    }
    session.oauth = std::move(*grant);
  }
  return session;
}

Result<void> PdsSessions::remove(schema::Store& store, const PdsSession& session) {
  if (session.oauth) {
    if (oauth_ != nullptr) {
      oauth_->revoke(*session.oauth, session.refresh);
      oauth_->revoke(*session.oauth, session.access);
    }
  } else {
    auto reply = client_->call({.method = "POST",
                                .base_url = session.pds_url,
                                .path = "/xrpc/com.atproto.server.deleteSession",
                                .bearer = session.refresh,
                                .public_only = public_only()});
    if (!reply || reply->status != 200) {
      spdlog::info("session: the PDS did not confirm the sign-out of {}", session.did);
    }
  }
  auto deleted = store.sessions().remove(session.digest);
  if (!deleted) return std::unexpected(deleted.error());
  return {};
}

Result<void> PdsSessions::refresh(schema::Store& store, PdsSession& session) {
  std::lock_guard lock(refresh_lock(session.digest));
  // Another request may have refreshed this session meanwhile.
  if (auto row = store.sessions().find(session.digest); row && *row) {
    if (auto access = box_.open((*row)->access_sealed); access && *access != session.access) {
      if (auto fresh = opened(**row)) {
        session = std::move(*fresh);
        return {};
      }
    }
  }
  std::string access;
  std::string refresh;
  std::optional<std::string> grant_sealed;
  if (session.oauth) {
    if (oauth_ == nullptr) return fail(ErrorCode::kAuthRequired, "OAuth is off; sign in again");
    auto tokens = oauth_->refresh(*session.oauth, session.refresh, session.did);
    if (!tokens) {
      if (tokens.error().code != ErrorCode::kAuthRequired) return std::unexpected(tokens.error());
      spdlog::info(
          "session: the authorization server refused to refresh the session of {}; it is ended",
          session.did);
      (void)store.sessions().remove(session.digest);
      return fail(ErrorCode::kAuthRequired, "the session has expired; sign in again");
    }
    access = tokens->access;
    refresh = tokens->refresh.empty() ? session.refresh : tokens->refresh;
    session.oauth->expires_at = tokens->expires_at;
    grant_sealed = box_.seal(session.oauth->to_json().dump());
  } else {
    auto reply = client_->call({.method = "POST",
                                .base_url = session.pds_url,
                                .path = "/xrpc/com.atproto.server.refreshSession",
                                .bearer = session.refresh,
                                .public_only = public_only()});
    if (!reply) return std::unexpected(reply.error());
    if (reply->status != 200) {
      if (reply->status >= 500) return std::unexpected(pds_error(*reply, "refreshSession"));
      spdlog::info("session: the PDS refused to refresh the session of {}; it is ended",
                   session.did);
      (void)store.sessions().remove(session.digest);
      return fail(ErrorCode::kAuthRequired, "the PDS session has expired; sign in again");
    }
    auto json = reply->json();
    access = firehose::json_text(json, {"accessJwt"});
    refresh = firehose::json_text(json, {"refreshJwt"});
    if (access.empty() || refresh.empty()) {
      return fail(ErrorCode::kUpstreamFailure, "refreshSession: the PDS's answer is incomplete");
    }
  }
  session.access = access;
  session.refresh = refresh;
  // The new pair (and grant) replace the old in one statement: a refresh
  // token is single-use, so losing the new one would end the session.
  return store.sessions().update_tokens(session.digest, box_.seal(access), box_.seal(refresh),
                                        grant_sealed);
}

Result<void> hold_pds_place(const std::string& did) {
  if (auto* scope = identity::RequestScope::current();
      scope != nullptr && !scope->hold_as("account " + did, kPdsCallsPerAccount)) {
    Error busy{ErrorCode::kUnavailable,
               "the app view is waiting on other hosts for other requests; retry in a second"};
    busy.retry_after_seconds = 1;
    return std::unexpected(busy);
  }
  return {};
}

Result<firehose::XrpcReply> PdsSessions::call(schema::Store& store, PdsSession& session,
                                              firehose::XrpcRequest request) {
  if (auto r = hold_pds_place(session.did); !r) return std::unexpected(r.error());
  request.base_url = session.pds_url;
  request.public_only = public_only();
  auto send = [&]() -> Result<firehose::XrpcReply> {
    if (session.oauth) {
      if (oauth_ == nullptr) return fail(ErrorCode::kAuthRequired, "OAuth is off; sign in again");
      return oauth_->resource_call(*session.oauth, session.access, request);
    }
    request.bearer = session.access;
    return client_->call(request);
  };
  if (session.oauth && session.oauth->expires_at - unix_now() < kRefreshMarginSeconds) {
    if (auto r = refresh(store, session); !r) return std::unexpected(r.error());
  }
  auto reply = send();
  if (!reply || !expired_token(*reply)) return reply;
  if (auto r = refresh(store, session); !r) return std::unexpected(r.error());
  return send();
}

Result<void> PdsSessions::spoil(schema::Store& store, PdsSession& session, bool refresh_too) {
  session.access = "spoiled-access-token";
  if (refresh_too) session.refresh = "spoiled-refresh-token";
  return store.sessions().update_tokens(session.digest, box_.seal(session.access),
                                        box_.seal(session.refresh));
}

}  // namespace bulleted::appview
