// Import jobs have one runner at a time: a process claims a job for a
// while (renewed at each step), and another takes it only once that runs
// out, so a job two processes see (the server and the `import` command on
// one file) is never written twice.
#include <gtest/gtest.h>

#include "schema/store.hpp"
#include "tests/support/index_fixture.hpp"

namespace bulleted::schema {
namespace {

class ImportLeaseTest : public testing::IndexTest {};

TEST_F(ImportLeaseTest, OneRunnerAtATimeUntilItsLeaseRunsOut) {
  ImportJobRow job;
  job.id = "imp_lease";
  job.did = "did:plc:alice";
  job.root_rkey = "3kroot";
  job.format = "text";
  job.total = 1;
  job.runner = "import 1 1";
  job.lease_until_ms = 1'000'000 + kImportLeaseMs;
  ASSERT_TRUE(store_->import_jobs().create(job, {{"3kroot", "{}"}}).has_value());
  auto found = store_->import_jobs().find("imp_lease");
  ASSERT_TRUE(found.has_value() && found->has_value());
  EXPECT_EQ((*found)->runner, "import 1 1");
  EXPECT_EQ((*found)->lease_until_ms, 1'000'000 + kImportLeaseMs);
  auto claim = [&](const char* runner, std::int64_t now) {
    auto claimed = store_->import_jobs().claim("imp_lease", runner, now);
    EXPECT_TRUE(claimed.has_value());
    return claimed && *claimed;
  };
  EXPECT_FALSE(claim("server 2 2", 1'000'000)) << "held by the import command";
  EXPECT_TRUE(claim("import 1 1", 1'000'010)) << "its runner renews it";
  EXPECT_FALSE(claim("server 2 2", 1'000'010 + kImportLeaseMs - 1));
  EXPECT_TRUE(claim("server 2 2", 1'000'010 + kImportLeaseMs + 1)) << "taken once it ran out";
  EXPECT_FALSE(claim("import 1 1", 1'000'010 + kImportLeaseMs + 2)) << "and now the server's";
  auto unfinished = store_->import_jobs().unfinished();
  ASSERT_TRUE(unfinished.has_value());
  ASSERT_EQ(unfinished->size(), 1u);
  EXPECT_EQ(unfinished->front().runner, "server 2 2");
}

TEST_F(ImportLeaseTest, AJobWithoutARunnerGoesToTheFirstWhoClaimsIt) {
  ImportJobRow job;
  job.id = "imp_free";
  job.did = "did:plc:alice";
  job.root_rkey = "3kroot";
  job.format = "text";
  ASSERT_TRUE(store_->import_jobs().create(job, {}).has_value());
  auto first = store_->import_jobs().claim("imp_free", "server 2 2", 5);
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(*first);
  auto second = store_->import_jobs().claim("imp_free", "import 1 1", 6);
  ASSERT_TRUE(second.has_value());
  EXPECT_FALSE(*second);
}

}  // namespace
}  // namespace bulleted::schema
