// libFuzzer target: the JSON bodies of every procedure (and, when the first
// byte's high bit is set, a forged token and forwarded addresses through
// admission), through the same handler the HTTP server calls, against a real SQLite index (local
// mode, with a valid token). Any body must get an XRPC answer: a JSON object with `error` and
// `message` and a 4xx status, or a 2xx; never a 5xx, a crash or a hang. The first byte picks the
// procedure.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "appview/xrpc/api.hpp"
#include "schema/store.hpp"

using namespace bulleted;

namespace {

constexpr const char* kProcedures[] = {"createNode", "moveNode",      "updateNode",
                                       "deleteNode", "importOutline", "createSession"};
constexpr const char* kDid = "did:plc:fuzzer";

struct World {
  appview::Config config;
  std::unique_ptr<appview::AppContext> context;
  std::unique_ptr<appview::ImportRunner> imports;
  std::unique_ptr<appview::Api> api;
  std::string token;
};

World* world() {
  static World* w = [] {
    spdlog::set_level(spdlog::level::warn);  // a job planned per input is no news
    auto* out = new World;
    char dir[] = "/tmp/bulleted-api-fuzz-XXXXXX";
    if (::mkdtemp(dir) == nullptr) std::abort();
    out->config.db_path = std::string(dir) + "/fuzz.db";
    out->config.procedure_rate_per_minute = 0;
    out->config.query_bytes_per_minute = 0;
    out->config.sign_in_per_minute = 0;
    out->config.sign_in_per_account_per_minute = 0;
    out->config.trusted_proxies = {"127.0.0.1"};
    out->config.max_import_bytes = 1 << 20;
    auto store = schema::Store::open(out->config.db_path);
    if (!store) std::abort();
    out->token = appview::new_token();
    if (!(*store)->tokens().add(appview::token_digest(out->token), kDid)) std::abort();
    out->context = std::make_unique<appview::AppContext>(out->config);
    // Jobs are planned (the part that reads the body); nothing runs them.
    out->imports = std::make_unique<appview::ImportRunner>(
        out->config.db_path, 1000, [](schema::Store&, const schema::ImportJobRow&) {
          return Result<std::unique_ptr<appview::JobSink>>(
              std::unexpected(Error{ErrorCode::kUnavailable, "not in the fuzzer"}));
        });
    out->context->services.imports = out->imports.get();
    out->api = std::make_unique<appview::Api>(*out->context);
    return out;
  }();
  return w;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  World* w = world();
  appview::HttpRequest request;
  request.method = "POST";
  request.path = std::string("/xrpc/app.bulleted.") +
                 kProcedures[data[0] % (sizeof kProcedures / sizeof *kProcedures)];
  request.headers["content-type"] = "application/json";
  request.headers["authorization"] = "Bearer " + w->token;
  request.body.assign(reinterpret_cast<const char*>(data) + 1, size - 1);
  request.remote = "127.0.0.1";
  if ((data[0] & 0x80) != 0) {
    // The head from the input too: a forged token and forwarded addresses
    // (127.0.0.1 is a trusted proxy here) must give a refusal or a limit.
    const std::string_view head_bytes(request.body.data(),
                                      std::min<std::size_t>(64, request.body.size()));
    request.headers["authorization"] = "Bearer " + std::string(head_bytes);
    request.headers["x-forwarded-for"] = std::string(head_bytes);
    request.headers["x-real-ip"] = std::string(head_bytes);
    const appview::Admission admission = w->api->admit(request);
    if (admission.refusal) {
      // 4xx, or 501 for a method this mode does not serve (createSession).
      const int status = admission.refusal->status;
      if (status < 400 || (status >= 500 && status != 501)) std::abort();
      auto json = nlohmann::json::parse(admission.refusal->body, nullptr, false);
      if (!json.is_object() || !json.contains("error") || !json.contains("message")) std::abort();
    } else if (admission.body_limit == 0) {
      std::abort();
    }
  }
  const appview::HttpResponse response = w->api->handle(request);
  if (response.status >= 500 && response.status != 501 && response.status != 503) std::abort();
  if (response.status >= 400) {
    auto json = nlohmann::json::parse(response.body, nullptr, false);
    if (!json.is_object() || !json.contains("error") || !json.contains("message")) std::abort();
  }
  return 0;
}
