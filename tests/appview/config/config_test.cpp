// Configuration: the documented example loads, the environment overrides the
// file, flags override the environment, mistakes name the key, secrets are
// redacted.
#include "appview/config.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "appview/cli/common.hpp"
#include "tests/support/temp_dir.hpp"

namespace bulleted::appview {
namespace {

cli::Args args_of(std::vector<std::string> words) {
  return *cli::parse_args(words, cli::config_arg_spec());
}

class ConfigTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const char* name :
         {"BULLETED_PORT", "BULLETED_DB", "BULLETED_CONFIG", "BULLETED_LOG_LEVEL"}) {
      unsetenv(name);
    }
  }
  std::string write(const std::string& text) {
    const std::string path = dir_.file("config.json");
    std::ofstream(path) << text;
    return path;
  }
  testing::TempDir dir_;
};

TEST_F(ConfigTest, TheDocumentedExampleLoadsAndCoversEveryKey) {
  const std::string example = std::string(BULLETED_SOURCE_DIR) + "/config/appview.example.json";
  auto config = load_config(args_of({"--config", example}));
  ASSERT_TRUE(config.has_value()) << config.error().message;
  EXPECT_EQ(config->port, 2584);
  EXPECT_EQ(config->firehose_url, "ws://127.0.0.1:2583");
  // Every key the binary knows is in the example (and so documented).
  std::ifstream in(example);
  const auto documented = nlohmann::json::parse(in);
  const nlohmann::json known = to_json(Config{}, false);
  for (const auto& [section, values] : known.items()) {
    ASSERT_TRUE(documented.contains(section)) << section;
    if (!values.is_object()) continue;
    for (const auto& [key, value] : values.items()) {
      EXPECT_TRUE(documented[section].contains(key)) << section << "." << key;
    }
  }
}

TEST_F(ConfigTest, TheServiceDidComesFromThePublicUrlsHostUnlessSet) {
  auto derived = load_config(args_of({"--public-url", "https://appview.example.com:8443/"}));
  ASSERT_TRUE(derived.has_value()) << derived.error().message;
  EXPECT_EQ(derived->public_url, "https://appview.example.com:8443");
  EXPECT_EQ(derived->service_did, "did:web:appview.example.com");
  const std::string file = write(
      R"({"service": {"publicUrl": "https://a.example", "did": "did:plc:ewvi7nxzyoun6zhxrhs64oiz"}})");
  auto given = load_config(args_of({"--config", file}));
  ASSERT_TRUE(given.has_value()) << given.error().message;
  EXPECT_EQ(given->service_did, "did:plc:ewvi7nxzyoun6zhxrhs64oiz");
  EXPECT_FALSE(load_config(args_of({}))->service_did.has_value());
  EXPECT_FALSE(load_config(args_of({"--public-url", "https://a.example/path"})).has_value());
  EXPECT_FALSE(load_config(args_of({"--public-url", "ftp://a.example"})).has_value());
  const std::string bad = write(R"({"service": {"did": "not a did"}})");
  EXPECT_FALSE(load_config(args_of({"--config", bad})).has_value());
}

TEST_F(ConfigTest, EnvironmentOverridesTheFileAndFlagsOverrideBoth) {
  const std::string file =
      write(R"({"server": {"port": 3000}, "database": {"path": "from-file.db"}})");
  auto from_file = load_config(args_of({"--config", file}));
  ASSERT_TRUE(from_file.has_value());
  EXPECT_EQ(from_file->port, 3000);
  EXPECT_EQ(from_file->db_path, "from-file.db");
  setenv("BULLETED_PORT", "3001", 1);
  auto from_env = load_config(args_of({"--config", file}));
  EXPECT_EQ(from_env->port, 3001);
  EXPECT_EQ(from_env->db_path, "from-file.db");
  auto from_flag = load_config(args_of({"--config", file, "--port", "3002", "--db", "flag.db"}));
  EXPECT_EQ(from_flag->port, 3002);
  EXPECT_EQ(from_flag->db_path, "flag.db");
  setenv("BULLETED_CONFIG", file.c_str(), 1);
  EXPECT_EQ(load_config(args_of({}))->db_path, "from-file.db");
}

TEST_F(ConfigTest, MistakesNameTheKey) {
  struct Case {
    std::string file;
    std::vector<std::string> flags;
    std::string says;
  };
  const std::vector<Case> cases = {
      {R"({"server": {"port": 70000}})", {}, "server.port must be from 1 to 65535"},
      {R"({"server": {"prot": 1}})", {}, "unknown key server.prot"},
      {R"({"mode": "cloud"})", {}, "mode must be one of local, pds"},
      {R"({"firehose": {"url": "http://relay"}})",
       {},
       "firehose.url must start with ws:// or wss://"},
      {R"({"auth": {"sessionKey": "short"}})",
       {},
       "auth.sessionKey must be a string of at least 32"},
      {"not json", {}, "is not a JSON object"},
      {"{}", {"--port", "abc"}, "--port is not an integer"},
      {"{}", {"--log-level", "loud"}, "--log-level must be one of"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> words = {"--config", write(c.file)};
    words.insert(words.end(), c.flags.begin(), c.flags.end());
    auto config = load_config(args_of(words));
    ASSERT_FALSE(config.has_value()) << c.says;
    EXPECT_NE(config.error().message.find(c.says), std::string::npos) << config.error().message;
  }
  EXPECT_FALSE(load_config(args_of({"--config", dir_.file("missing.json")})).has_value());
  setenv("BULLETED_LOG_LEVEL", "chatty", 1);
  EXPECT_FALSE(load_config(args_of({})).has_value());
}

TEST_F(ConfigTest, SecretsAreRedacted) {
  const std::string secret = "0123456789abcdef0123456789abcdef-secret";
  auto config =
      load_config(args_of({"--config", write(R"({"auth": {"sessionKey": ")" + secret + R"("}})")}));
  ASSERT_TRUE(config.has_value()) << config.error().message;
  EXPECT_EQ(config->session_key, secret);
  EXPECT_EQ(to_json(*config, true).dump().find(secret), std::string::npos);
  EXPECT_NE(to_json(*config, false).dump().find(secret), std::string::npos);
}

}  // namespace
}  // namespace bulleted::appview
