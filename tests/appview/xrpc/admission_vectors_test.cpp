// The admission vectors (admission_vectors.txt): every mode, method,
// credential and body size against the status the API gives before the
// body is read. The credentials are real: tokens in the index, a session
// and its cookie, service-auth JWTs signed with alice's key and checked
// against her DID document (a directory without a network).
#include <gtest/gtest.h>

#include <chrono>

#include "appview/imports/import_jobs.hpp"
#include "appview/signin/jwt.hpp"
#include "appview/signin/service_auth.hpp"
#include "appview/signin/tokens.hpp"
#include "appview/xrpc/api.hpp"
#include "tests/support/fake_identity.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/vector_file.hpp"

namespace bulleted::appview {
namespace {

constexpr const char* kAlice = "did:plc:alicealicealicealicealic";
constexpr const char* kAppView = "did:web:appview.test";
constexpr const char* kPublicUrl = "https://appview.test";

// One mode's app view, with alice's credentials of every kind.
class ModeUnderTest {
 public:
  ModeUnderTest(const std::string& dir, Mode mode) {
    config_.db_path = dir + "/" + std::string(to_string(mode)) + ".db";
    config_.mode = mode;
    config_.service_did = kAppView;
    config_.public_url = kPublicUrl;
    config_.allow_password_sessions = true;
    config_.procedure_rate_per_minute = 0;
    config_.query_bytes_per_minute = 0;
    config_.sign_in_per_minute = 0;
    directory_.put(kAlice, "https://127.0.0.1:2583", alice_.public_key());
    identity_ = directory_.resolver({.allow_private_addresses = true});
    EXPECT_TRUE(identity_->key(kAlice, false).has_value()) << "alice's key is known";
    auth_ = std::make_unique<ServiceAuth>(ServiceAuthOptions{.service_did = kAppView}, *identity_);
    auto store = schema::Store::open(config_.db_path);
    EXPECT_TRUE(store.has_value());
    token_ = new_token();
    if (mode == Mode::kLocal) {
      EXPECT_TRUE((*store)->tokens().add(token_digest(token_), kAlice).has_value());
    } else {
      EXPECT_TRUE((*store)
                      ->sessions()
                      .put({token_digest(token_), kAlice, std::nullopt, "https://127.0.0.1:2583",
                            "sealed", "sealed"})
                      .has_value());
      pds_ = std::make_unique<PdsServices>(directory_.client(), *identity_,
                                           SecretBox(std::string(32, 'k')), written_);
    }
    // Imports are served (a runner that is never started).
    imports_ = std::make_unique<ImportRunner>(
        config_.db_path, 1000, [](schema::Store&, const schema::ImportJobRow&) {
          return Result<std::unique_ptr<JobSink>>(
              std::unexpected(Error{ErrorCode::kUnavailable, "not in this test"}));
        });
    context_ = std::make_unique<AppContext>(config_);
    context_->services.imports = imports_.get();
    context_->services.service_auth = auth_.get();
    context_->services.pds = pds_.get();
    api_ = std::make_unique<Api>(*context_);
  }

  // The status before the body: a refusal's, else 413 past the method's
  // limit, else 200.
  int status(const std::string& method, const std::string& credential, std::size_t size) {
    HttpRequestHead head;
    const bool query = method.starts_with("get");
    head.method = query ? "GET" : "POST";
    head.path = "/xrpc/app.bulleted." + method;
    head.remote = "198.51.100.1";
    head.headers["content-length"] = std::to_string(size);
    const std::string nsid = "app.bulleted." + method;
    if (credential == "bad-token") head.headers["authorization"] = "Bearer " + new_token();
    if (credential == "token") head.headers["authorization"] = "Bearer " + token_;
    if (credential == "cookie") {
      head.headers["cookie"] = cookie_name(config_, kSessionCookie) + "=" + token_;
      head.headers["origin"] = kPublicUrl;
    }
    if (credential.starts_with("jwt")) {
      const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
      nlohmann::json claims = {{"iss", kAlice},   {"aud", kAppView},
                               {"lxm", nsid},     {"iat", now},
                               {"exp", now + 60}, {"jti", "jti-" + std::to_string(++serial_)}};
      if (credential == "jwt-expired") claims["exp"] = now - 600;
      if (credential == "jwt-wrong-lxm") claims["lxm"] = "app.bulleted.deleteNode";
      head.headers["authorization"] = "Bearer " + sign_jwt({{"typ", "JWT"}}, claims, alice_);
    }
    const Admission admission = api_->admit(head);
    if (admission.refusal) return admission.refusal->status;
    return size > admission.body_limit ? 413 : 200;
  }

 private:
  Config config_;
  testing::FakeIdentityDirectory directory_;
  firehose::PrivateKey alice_ = firehose::PrivateKey::generate(firehose::KeyCurve::kSecp256k1);
  std::unique_ptr<identity::IdentityResolver> identity_;
  std::unique_ptr<ServiceAuth> auth_;
  firehose::WrittenRevs written_;
  std::unique_ptr<PdsServices> pds_;
  std::unique_ptr<ImportRunner> imports_;
  std::unique_ptr<AppContext> context_;
  std::unique_ptr<Api> api_;
  std::string token_;
  int serial_ = 0;
};

std::size_t size_of(const std::string& name) {
  if (name == "4k") return 4096;
  if (name == "16k") return 16384;
  if (name == "2m") return 2'000'000;
  throw std::runtime_error("no size " + name);
}

TEST(AdmissionVectors, EveryModeCredentialAndSizeGetsItsStatus) {
  testing::TempDir dir;
  ModeUnderTest local(dir.path(), Mode::kLocal);
  ModeUnderTest pds(dir.path(), Mode::kPds);
  const auto lines = testing::read_vector_file(std::string(BULLETED_SOURCE_DIR) +
                                               "/tests/appview/xrpc/admission_vectors.txt");
  ASSERT_GE(lines.size(), 200u);
  for (const auto& line : lines) {
    ASSERT_EQ(line.fields.size(), 5u) << "line " << line.line_number;
    ModeUnderTest& mode = line.fields[0] == "local" ? local : pds;
    EXPECT_EQ(mode.status(line.fields[1], line.fields[2], size_of(line.fields[3])),
              std::stoi(line.fields[4]))
        << "line " << line.line_number << ": " << line.raw;
  }
}

}  // namespace
}  // namespace bulleted::appview
