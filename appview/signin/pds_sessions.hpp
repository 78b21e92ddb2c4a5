// Sessions on users' PDSes (pds mode).
//
// A session is made by an app-password sign-in (createSession: the PDS's
// own access and refresh tokens) or by OAuth (oauth_client.hpp: DPoP-bound
// tokens and the grant they need); either way its tokens are kept
// server-side, sealed with the configured key, and the caller gets an
// app-view token (a bearer token or the web client's cookie, stored only as
// its SHA-256 digest). Calls to the PDS go through call(): an OAuth access
// token about to expire is refreshed first; one the PDS calls expired (or
// invalid) is refreshed once and the call retried; a refused refresh ends the
// session (kAuthRequired, "sign in again"). Tokens never reach a log.
//
// Thread-safe.
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "appview/signin/oauth_client.hpp"
#include "appview/signin/secret_box.hpp"
#include "firehose/client/xrpc_client.hpp"
#include "firehose/identity/identity.hpp"
#include "schema/store.hpp"

namespace bulleted::appview {

struct PdsSession {
  std::string digest;  // of the app view's token
  std::string did;
  std::optional<std::string> handle;
  std::string pds_url;
  std::string access;
  std::string refresh;
  std::optional<OAuthGrant> oauth;  // an OAuth session's; none: an app password's
};

struct NewSession {
  PdsSession session;
  std::string token;  // the app view's bearer token, shown once
};

class PdsSessions {
 public:
  PdsSessions(std::shared_ptr<firehose::XrpcClient> client, identity::IdentityResolver& identity,
              SecretBox box);

  Result<NewSession> create(schema::Store& store, const std::string& identifier,
                            const std::string& password);
  // The session of a completed OAuth sign-in.
  Result<NewSession> create(schema::Store& store, const SignedIn& signed_in);
  // OAuth sessions refresh and revoke through `client` (set once, before
  // requests are served).
  void use_oauth(OAuthClient* client) { oauth_ = client; }
  // The session of a bearer token; kAuthRequired when there is none.
  Result<PdsSession> find(schema::Store& store, std::string_view token);
  // The same by the token's digest (jobs keep the digest, never the token).
  Result<PdsSession> find_by_digest(schema::Store& store, const std::string& digest);
  // The session of a DID refreshed last (a caller proven by service auth);
  // kAuthRequired when the app view holds none.
  Result<PdsSession> find_for_did(schema::Store& store, const std::string& did);
  // Ends the session here and (best effort) on the PDS or, for OAuth, at
  // the authorization server (its tokens revoked).
  Result<void> remove(schema::Store& store, const PdsSession& session);

  // Calls the session's PDS with its access token (the request's base_url and
  // bearer are filled in). Refreshes and retries once on an expired token.
  Result<firehose::XrpcReply> call(schema::Store& store, PdsSession& session,
                                   firehose::XrpcRequest request);

  // Tests only (fault injection): replaces the session's access token (and,
  // with `refresh_too`, its refresh token) by one the PDS refuses, here and
  // in the database, as after an expiry.
  Result<void> spoil(schema::Store& store, PdsSession& session, bool refresh_too);

 private:
  Result<void> refresh(schema::Store& store, PdsSession& session);
  Result<PdsSession> opened(const schema::SessionRow& row) const;
  // Whether a call to a user's PDS (the network's address, from the DID
  // document) is checked on every connection, as it was at sign-in.
  bool public_only() const { return !identity_.fetcher().allow_private_addresses(); }

  // Refreshes of one session run one at a time (refresh tokens are
  // single-use); sessions share these locks by their digest's hash.
  std::mutex& refresh_lock(const std::string& digest);

  std::shared_ptr<firehose::XrpcClient> client_;
  identity::IdentityResolver& identity_;
  SecretBox box_;
  OAuthClient* oauth_ = nullptr;
  std::array<std::mutex, 64> refresh_locks_;
};

// A user's PDS is whatever their DID document names, maybe a slow host
// that holds the worker of every request waiting on it. So a request takes
// a place of the outbound gate (identity::FetchGate) before it waits on a
// PDS, or before it waits on anything (a group's lock) that a request
// waiting on a PDS holds: slow PDSes never hold more workers than the
// gate's places; an account's requests hold at most two. kUnavailable
// (retry in a second) when none is free; a call outside a request (an
// import job, the CLI) passes. PdsSessions::call takes it itself.
Result<void> hold_pds_place(const std::string& did);

// The error a failed PDS answer means for our caller: InvalidSwap is
// kRepoChanged; auth failures kAuthRequired; 429 kRateLimited with the
// PDS's Retry-After; everything else kUpstreamFailure.
Error pds_error(const firehose::XrpcReply& reply, const std::string& what);

}  // namespace bulleted::appview
