// The /oauth/ routes of the API (pds mode with service.publicUrl): the
// client's metadata and keys, and the two steps of a browser's sign-in,
// answered with redirects or a small page saying what failed.
#include <spdlog/spdlog.h>

#include "appview/xrpc/api.hpp"
#include "appview/xrpc/xrpc.hpp"
#include "firehose/client/network_policy.hpp"

namespace bulleted::appview {

namespace {

// What a person is told when signing in fails: fixed texts only. Nothing a
// link's parameters or an authorization server said reaches the page (a
// page of this origin saying whatever an attacker wrote would be theirs to
// speak with); the details go to the log.
enum class SignInProblem {
  kHandleRequired,
  kBadReturnTo,
  kNotAnAccount,
  kBusy,
  kTooMany,
  kDeclined,
  kNotCompleted,
  kServerFailed,
  kInternal,
};

struct SignInProblemText {
  SignInProblem problem;
  ErrorCode code;  // the page's status, from the error table
  std::string_view text;
};

constexpr SignInProblemText kSignInProblems[] = {
    {SignInProblem::kHandleRequired, ErrorCode::kInvalidRequest,
     "Enter your handle (or DID) to sign in."},
    {SignInProblem::kBadReturnTo, ErrorCode::kInvalidRequest,
     "The page to return to is not a page of this site."},
    {SignInProblem::kNotAnAccount, ErrorCode::kNotFound,
     "No account was found for that handle or DID."},
    {SignInProblem::kBusy, ErrorCode::kUnavailable,
     "The app view is busy with other sign-ins; try again in a moment."},
    {SignInProblem::kTooMany, ErrorCode::kRateLimited,
     "Too many sign-ins from here; try again in a minute."},
    {SignInProblem::kDeclined, ErrorCode::kAuthRequired,
     "The sign-in was not completed at your account's server."},
    {SignInProblem::kNotCompleted, ErrorCode::kAuthRequired,
     "This sign-in is unknown, expired or was begun in another browser; sign in again."},
    {SignInProblem::kServerFailed, ErrorCode::kUpstreamFailure,
     "Your account's server could not be reached, or did not answer as it should."},
    {SignInProblem::kInternal, ErrorCode::kInternal, "The sign-in failed; try again later."},
};
static_assert(std::size(kSignInProblems) == static_cast<std::size_t>(SignInProblem::kInternal) + 1);

// The problem an error of the sign-in's steps is to a person.
SignInProblem problem_of(const Error& error) {
  switch (error.code) {
    case ErrorCode::kInvalidRequest:
    case ErrorCode::kNotFound:
      return SignInProblem::kNotAnAccount;
    case ErrorCode::kUnavailable:
      return SignInProblem::kBusy;
    case ErrorCode::kRateLimited:
      return SignInProblem::kTooMany;
    case ErrorCode::kAuthRequired:
    case ErrorCode::kForbidden:
      return SignInProblem::kNotCompleted;
    case ErrorCode::kUpstreamFailure:
    case ErrorCode::kPayloadTooLarge:
      return SignInProblem::kServerFailed;
    default:
      return SignInProblem::kInternal;
  }
}

HttpResponse sign_in_page(SignInProblem problem, int retry_after_seconds = 0) {
  const SignInProblemText& row = kSignInProblems[static_cast<std::size_t>(problem)];
  HttpResponse response{
      error_status(row.code).status,
      "text/html; charset=utf-8",
      "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Sign-in failed "
      "- Bulleted</title></head><body><h1>Sign-in failed</h1><p id=\"reason\">" +
          std::string(row.text) + "</p><p><a href=\"/\">Back to Bulleted</a></p></body></html>",
      {},
      {}};
  response.headers = {{"Content-Security-Policy", "default-src 'none'"},
                      {"Cache-Control", "no-store"},
                      {"Referrer-Policy", "no-referrer"}};
  if (retry_after_seconds > 0) {
    response.headers.emplace_back("Retry-After", std::to_string(retry_after_seconds));
  }
  return response;
}

HttpResponse sign_in_page(const Error& error) {
  return sign_in_page(problem_of(error), error.retry_after_seconds);
}

HttpResponse redirect(const std::string& location) {
  HttpResponse response{302, "text/plain", "", {}, {}};
  response.headers = {
      {"Location", location}, {"Cache-Control", "no-store"}, {"Referrer-Policy", "no-referrer"}};
  return response;
}

}  // namespace

HttpResponse Api::oauth_route(const HttpRequest& request) {
  if (context_.services.oauth == nullptr || context_.services.pds == nullptr) {
    return error_response(Error{ErrorCode::kNotFound,
                                "OAuth sign-in is off: it needs pds mode and service.publicUrl"});
  }
  if (request.method != "GET" && request.method != "HEAD") {
    HttpResponse response =
        error_response(Error{ErrorCode::kMethodNotAllowed, "the /oauth/ routes take GET"});
    response.headers.emplace_back("Allow", "GET");
    return response;
  }
  if (request.path == "/oauth/client-metadata.json" || request.path == "/oauth/jwks.json") {
    HttpResponse response = json_response(request.path == "/oauth/jwks.json"
                                              ? context_.services.oauth->jwks()
                                              : context_.services.oauth->client_metadata());
    response.headers.emplace_back("Cache-Control", "max-age=600");
    return response;
  }
  if (request.path != "/oauth/login" && request.path != "/oauth/callback") {
    return error_response(Error{ErrorCode::kNotFound, "no such path under /oauth/"});
  }
  auto params = XrpcParams::parse(request.query);
  if (!params) return sign_in_page(SignInProblem::kHandleRequired);
  if (request.path == "/oauth/login") {
    const auto handle = params->text("handle");
    const std::string return_to = params->text("returnTo").value_or("/");
    if (!handle || handle->empty() || handle->size() > 253) {
      return sign_in_page(SignInProblem::kHandleRequired);
    }
    if (!same_origin_path(return_to)) return sign_in_page(SignInProblem::kBadReturnTo);
    // No limit per account here: OAuth has no password to guess, and such a
    // limit would only let anyone lock an account out of signing in. Each
    // address is limited (admit()), and each step waiting on another host
    // takes a place of the outbound gate.
    auto started = context_.services.oauth->begin(store(), *handle, return_to);
    if (!started) {
      spdlog::info("oauth: a sign-in could not start: {}", started.error().message);
      return sign_in_page(started.error());
    }
    HttpResponse response = redirect(started->url);
    response.headers.emplace_back("Set-Cookie",
                                  sign_in_cookie(context_.config, started->binding, false));
    return response;
  }
  const std::string state = params->text("state").value_or("");
  const std::string binding =
      cookie_value(request, cookie_name(context_.config, kSignInCookie)).value_or("");
  HttpResponse response;
  if (state.empty()) {
    response = sign_in_page(SignInProblem::kNotCompleted);
  } else if (params->text("error")) {
    // Refused at the authorization server: back where the user was (the
    // server's words stay out of the page).
    auto back = context_.services.oauth->abandon(store(), state, binding);
    spdlog::info("oauth: a sign-in ended at the authorization server ({})",
                 back ? "declined" : "not this browser's");
    response =
        back ? redirect(back->empty() ? "/" : *back) : sign_in_page(SignInProblem::kDeclined);
  } else if (!params->text("code") || !params->text("iss")) {
    response = sign_in_page(SignInProblem::kNotCompleted);
  } else {
    auto signed_in = context_.services.oauth->complete(store(), *params->text("code"), state,
                                                       *params->text("iss"), binding);
    if (!signed_in) {
      spdlog::info("oauth: a sign-in did not complete: {}", signed_in.error().message);
      response = sign_in_page(signed_in.error());
    } else if (auto created = context_.services.pds->sessions.create(store(), *signed_in);
               !created) {
      spdlog::error("oauth: the session of {} could not be kept: {}", signed_in->did,
                    created.error().message);
      response = sign_in_page(created.error());
    } else {
      response = redirect(signed_in->return_to.empty() ? "/" : signed_in->return_to);
      response.headers.emplace_back("Set-Cookie",
                                    session_cookie(context_.config, created->token, false));
    }
  }
  // The binding cookie is left to expire (10 minutes): what it binds is
  // taken (single use) whatever became of the sign-in.
  return response;
}

}  // namespace bulleted::appview
