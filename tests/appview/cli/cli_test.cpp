// The bulleted-appview binary, run as a user would: exit statuses and output.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "ordering/order_key.hpp"
#include "schema/sqlite.hpp"
#include "tests/support/loopback_port.hpp"
#include "tests/support/store_fixtures.hpp"
#include "tests/support/store_internals.hpp"

namespace {

struct CommandResult {
  int status;
  std::string out;
};

CommandResult run(const std::string& arguments) {
  const std::string command = std::string(BULLETED_BINARY) + " " + arguments + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, ""};
  std::string out;
  std::array<char, 4096> buffer;
  while (std::size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) out.append(buffer.data(), n);
  const int raw = pclose(pipe);
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, out};
}

TEST(KeysCommand, BetweenWithSeedMatchesTheLibrary) {
  const CommandResult r = run("keys between a0 a1 --n 5 --seed 42");
  ASSERT_EQ(r.status, 0);
  auto jitter = bulleted::ordering::Mulberry32::from_seed(42);
  auto keys = bulleted::ordering::n_between("a0", "a1", 5, jitter);
  std::string expected;
  for (const auto& key : *keys) expected += key + "\n";
  EXPECT_EQ(r.out, expected);
}

TEST(KeysCommand, OpenEnds) {
  EXPECT_EQ(run("keys between - -").out, "a0\n");
  EXPECT_EQ(run("keys between - - --n 3").out, "a0\na1\na2\n");
  EXPECT_EQ(run("keys between - a0").out, "Zz\n");
  EXPECT_EQ(run("keys between az -").out, "b00\n");
}

TEST(KeysCommand, BetweenErrorsExitOne) {
  EXPECT_EQ(run("keys between a1 a0").status, 1);
  EXPECT_EQ(run("keys between a00 -").status, 1);
}

TEST(KeysCommand, BadArgumentsExitTwo) {
  EXPECT_EQ(run("keys between a0").status, 2);
  EXPECT_EQ(run("keys between a0 a1 --n zero").status, 2);
  EXPECT_EQ(run("keys between a0 a1 --seed -1").status, 2);
  EXPECT_EQ(run("keys between a0 a1 --bogus 1").status, 2);
  EXPECT_EQ(run("keys validate").status, 2);
  EXPECT_EQ(run("keys frobnicate").status, 2);
  EXPECT_EQ(run("nonsense").status, 2);
}

TEST(CheckCommand, ReportsOnAFreshDatabase) {
  char dir[] = "/tmp/bulleted-cli-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string db = std::string(dir) + "/index.db";
  const CommandResult token = run("token create --did did:plc:alice --db " + db);
  ASSERT_EQ(token.status, 0);
  EXPECT_EQ(token.out.rfind("bt_", 0), 0u);
  const CommandResult check = run("check --db " + db);
  EXPECT_EQ(check.status, 0);
  EXPECT_NE(check.out.find("\"sqliteCheck\": \"ok\""), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("\"nodes\": 0"), std::string::npos) << check.out;
  EXPECT_EQ(run("token create --did not-a-did --db " + db).status, 2);
  EXPECT_EQ(run("check extra --db " + db).status, 2);
  std::system(("rm -rf " + std::string(dir)).c_str());
}

TEST(BackupCommand, CopiesTheDatabaseToANewFileOnly) {
  char dir[] = "/tmp/bulleted-cli-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string db = std::string(dir) + "/index.db";
  const std::string copy = std::string(dir) + "/copy.db";
  const std::string outline = std::string(dir) + "/outline.txt";
  std::ofstream(outline) << "- one\n  - two\n- three\n";
  ASSERT_EQ(run("import " + outline + " --repo did:plc:alice --db " + db).status, 0);
  const CommandResult backup = run("backup " + copy + " --db " + db);
  EXPECT_EQ(backup.status, 0);
  EXPECT_NE(backup.out.find("backed up"), std::string::npos) << backup.out;
  // The copy is a whole, consistent database with the same outline.
  const CommandResult check = run("check --db " + copy);
  EXPECT_NE(check.out.find("\"sqliteCheck\": \"ok\""), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("\"nodes\": 4"), std::string::npos) << check.out;
  // Never over an existing file; bad arguments are usage errors.
  EXPECT_EQ(run("backup " + copy + " --db " + db).status, 1);
  EXPECT_EQ(run("backup --db " + db).status, 2);
  std::system(("rm -rf " + std::string(dir)).c_str());
}

TEST(BackupCommand, CompactCopiesOnlyTheLivePages) {
  char dir[] = "/tmp/bulleted-cli-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string db = std::string(dir) + "/index.db";
  const std::string outline = std::string(dir) + "/outline.txt";
  {
    std::ofstream out(outline);
    for (int i = 0; i < 3000; ++i) out << "- bullet " << i << " with a line of ordinary text\n";
  }
  ASSERT_EQ(run("import " + outline + " --repo did:plc:alice --db " + db).status, 0);
  // The repo deleted: its pages are free, the file keeps them.
  {
    auto store = bulleted::schema::Store::open(db);
    ASSERT_TRUE(store.has_value());
    ASSERT_TRUE((*store)
                    ->set_repo_status("did:plc:alice", bulleted::schema::RepoStatus::kDeleted)
                    .has_value());
  }
  const std::string whole = std::string(dir) + "/whole.db";
  const std::string compact = std::string(dir) + "/compact.db";
  ASSERT_EQ(run("backup " + whole + " --db " + db).status, 0);
  const CommandResult r = run("backup " + compact + " --compact --db " + db);
  ASSERT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("compacted"), std::string::npos) << r.out;
  EXPECT_LT(std::filesystem::file_size(compact) * 2, std::filesystem::file_size(whole));
  const CommandResult check = run("check --db " + compact);
  EXPECT_EQ(check.status, 0) << check.out;
  EXPECT_EQ(run("backup " + compact + " --compact --db " + db).status, 1) << "never over a file";
  std::system(("rm -rf " + std::string(dir)).c_str());
}

TEST(ImportCommand, AJobIsAbandonedByItsIdAndAnUnknownOneIsAnError) {
  char dir[] = "/tmp/bulleted-cli-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string db = std::string(dir) + "/index.db";
  const std::string outline = std::string(dir) + "/outline.txt";
  std::ofstream(outline) << "- one\n  - two\n";
  ASSERT_EQ(run("import " + outline + " --repo did:plc:alice --db " + db).status, 0);
  std::string job;
  {
    auto store = bulleted::schema::Store::open(db);
    ASSERT_TRUE(store.has_value());
    auto id = bulleted::schema::query_value<std::string>(bulleted::testing::database_of(**store),
                                                         "SELECT id FROM import_jobs");
    ASSERT_TRUE(id.has_value() && id->has_value());
    job = **id;
  }
  const CommandResult done = run("import --abandon " + job + " --db " + db);
  EXPECT_EQ(done.status, 0);
  EXPECT_NE(done.out.find("is done"), std::string::npos) << done.out;
  EXPECT_EQ(run("import --abandon nosuchjob --db " + db).status, 1);
  std::system(("rm -rf " + std::string(dir)).c_str());
}

TEST(CheckCommand, ACycleIsCorruptionAndIsCountedOnALargeIndex) {
  char dir[] = "/tmp/bulleted-cli-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string db = std::string(dir) + "/index.db";
  {
    // An 11,000-node chain whose top names its bottom as parent (what a
    // record written around the app view can do), beside a sound outline.
    auto store = bulleted::schema::Store::open(db);
    ASSERT_TRUE(store.has_value());
    bulleted::schema::ApplyBatch batch;
    constexpr int kCycle = 11'000;
    for (int i = 0; i < kCycle; ++i) {
      bulleted::testing::NodeSpec spec{.rkey = "c" + std::to_string(i)};
      spec.parent_rkey = "c" + std::to_string((i + kCycle - 1) % kCycle);
      batch.ops.push_back(bulleted::testing::upsert(spec));
    }
    for (int i = 0; i < 100; ++i) {
      bulleted::testing::NodeSpec spec{.rkey = "t" + std::to_string(i)};
      if (i > 0) spec.parent_rkey = "t0";
      batch.ops.push_back(bulleted::testing::upsert(spec));
    }
    ASSERT_TRUE((*store)->apply(batch).has_value());
  }
  const CommandResult check = run("check --db " + db);
  EXPECT_EQ(check.status, 1) << check.out;
  EXPECT_NE(check.out.find("\"nodesInCycles\": 11000"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("\"sqliteCheck\": \"ok\""), std::string::npos) << check.out;
  std::system(("rm -rf " + std::string(dir)).c_str());
}

TEST(KeysCommand, ValidateReportsEachKey) {
  const CommandResult r = run("keys validate a0 a00 b0 Zz");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out,
            "ok\ninvalid: fraction ends in '0'\n"
            "invalid: integer part shorter than its head says (3 bytes)\nok\n");
  EXPECT_EQ(run("keys validate a0 a1V").status, 0);
}

// Serve under an open-files limit of 1,500 (hard, so it cannot be raised),
// for at most `seconds`: its exit status (124 when it was still running)
// and its log.
CommandResult serve_with_few_files(const std::string& env, int seconds) {
  char dir[] = "/tmp/bulleted-cli-files-XXXXXX";
  if (mkdtemp(dir) == nullptr) return {-1, ""};
  const std::string command = "sh -c 'ulimit -Sn 1500 && ulimit -Hn 1500 && " + env +
                              " exec timeout " + std::to_string(seconds) + " " + BULLETED_BINARY +
                              " serve --db " + dir + "/index.db --port " +
                              std::to_string(bulleted::testing::free_loopback_port()) + "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  std::array<char, 4096> buffer;
  while (std::size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) out.append(buffer.data(), n);
  const int raw = pclose(pipe);
  std::filesystem::remove_all(dir);
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, out};
}

TEST(ServeCommand, AnExplicitMaxStreamsThatCannotFitTheOpenFilesLimitRefusesToStart) {
  const CommandResult r = serve_with_few_files("BULLETED_MAX_STREAMS=5000", 10);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("limits.maxStreams is 5000"), std::string::npos) << r.out;
}

TEST(ServeCommand, TheDefaultMaxStreamsIsLoweredToFitWithAWarning) {
  const CommandResult r = serve_with_few_files("", 3);
  EXPECT_EQ(r.status, 124) << "it started, and ran until stopped: " << r.out;
  EXPECT_NE(r.out.find("leaves room for 476 change streams, not 10000"), std::string::npos)
      << r.out;
}

}  // namespace
