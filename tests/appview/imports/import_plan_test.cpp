// An import's plan lives as long as it may be needed: dropped in the
// transaction that marks the job done, kept by a failed job (an operator
// may resume it) until it is abandoned; an index written before this gives
// the plans of its finished jobs back when it is opened.
#include <gtest/gtest.h>

#include "appview/imports/import_jobs.hpp"
#include "schema/sqlite.hpp"
#include "tests/support/store_internals.hpp"
#include "tests/support/temp_dir.hpp"

namespace bulleted::appview {
namespace {

const std::string kDid = "did:plc:importer";

// A sink the repo refuses: every commit is a kForbidden (a job fails).
class RefusingSink final : public RecordSink {
 public:
  Result<Committed> commit(schema::Store&, const std::string&, const std::vector<RecordWrite>&,
                           const CommitOptions&) override {
    return fail(ErrorCode::kForbidden, "the repo refuses these records");
  }
  Result<void> refresh(schema::Store&, const std::string&) override { return {}; }
  RepoWrites repo_writes() const override { return RepoWrites::kConcurrent; }
  Result<bool> holds(schema::Store&, const std::string&, const std::string&) override {
    return false;
  }
};

class ImportPlanTest : public ::testing::Test {
 protected:
  void SetUp() override { store_ = std::move(*schema::Store::open(dir_.file("index.db"))); }

  schema::ImportJobRow plan(int nodes) {
    outline::Outline tree;
    for (int i = 0; i < nodes; ++i) {
      tree.nodes.push_back({.parent = i % 10 == 0 ? -1 : static_cast<std::ptrdiff_t>(i - i % 10),
                            .text = "bullet " + std::to_string(i)});
    }
    auto job = plan_import(*store_, locks_, clock_, {kDid, std::nullopt}, tree);
    EXPECT_TRUE(job.has_value()) << job.error().message;
    return *job;
  }
  schema::ImportJobRow run(const std::string& id, RecordSink& sink, int max_batches = 1000) {
    bool first = true;
    for (int i = 0; i < max_batches; ++i) {
      auto job = run_import_batch(*store_, sink, id, first);
      first = false;
      EXPECT_TRUE(job.has_value()) << job.error().message;
      if (!job || job->state != schema::ImportState::kRunning) break;
    }
    return **store_->import_jobs().find(id);
  }
  std::int64_t plan_rows(const std::string& id) { return *store_->import_jobs().plan_rows(id); }

  testing::TempDir dir_;
  std::unique_ptr<schema::Store> store_;
  GroupLocks locks_;
  ordering::TidClock clock_;
};

TEST_F(ImportPlanTest, AJobThatIsDoneKeepsNoPlanAndAnswersAsBefore) {
  const auto job = plan(500);
  EXPECT_EQ(plan_rows(job.id), 501);
  LocalSink sink(clock_);
  run(job.id, sink, 1);
  EXPECT_EQ(plan_rows(job.id), 501) << "a running job keeps what it still needs";
  const auto done = run(job.id, sink);
  EXPECT_EQ(done.state, schema::ImportState::kDone);
  EXPECT_EQ(done.done, 501);
  EXPECT_EQ(done.total, 501);
  EXPECT_EQ(plan_rows(job.id), 0);
  EXPECT_EQ(*store_->read().node_count(), 501);
  // And the pages the plan held went back to the system.
  auto free = schema::query_value<std::int64_t>(bulleted::testing::database_of(*store_),
                                                "PRAGMA freelist_count");
  ASSERT_TRUE(free.has_value());
  EXPECT_EQ(free->value_or(-1), 0);
}

TEST_F(ImportPlanTest, AnImportedOutlineIsSearchableAndTheIndexMatchesItsRows) {
  const auto job = plan(50);
  LocalSink sink(clock_);
  EXPECT_EQ(run(job.id, sink).state, schema::ImportState::kDone);
  schema::SearchRequest request{
      .did = kDid, .q = "bullet 37", .query = *schema::parse_search_query("bullet 37")};
  auto page = store_->read().search(request);
  ASSERT_TRUE(page.has_value()) << page.error().message;
  ASSERT_EQ(page->results.size(), 1u);
  EXPECT_EQ(page->results[0].node.text, "bullet 37");
  ASSERT_EQ(page->results[0].ancestors.size(), 2u);  // the import root, then bullet 30
  EXPECT_EQ(page->results[0].ancestors[1].text, "bullet 30");
  auto report = store_->integrity_report();
  ASSERT_TRUE(report.has_value());
  EXPECT_TRUE(report->search_index_ok);
}

TEST_F(ImportPlanTest, TheStateAndTheDroppedPlanCommitTogether) {
  const auto job = plan(20);
  // The move to done inside a transaction that is rolled back: neither the
  // state nor the plan's removal stays.
  {
    auto tx = store_->begin_write();
    ASSERT_TRUE(tx.has_value());
    ASSERT_TRUE(store_->import_jobs()
                    .set_state(job.id, schema::ImportState::kDone, std::nullopt, "[]")
                    .has_value());
    EXPECT_EQ(plan_rows(job.id), 0);
  }
  EXPECT_EQ((**store_->import_jobs().find(job.id)).state, schema::ImportState::kRunning);
  EXPECT_EQ(plan_rows(job.id), 21);
}

TEST_F(ImportPlanTest, AFailedJobKeepsItsPlanUntilAbandonedAndResumesUntilThen) {
  const auto job = plan(300);
  RefusingSink refusing;
  const auto failed = run(job.id, refusing);
  ASSERT_EQ(failed.state, schema::ImportState::kFailed);
  EXPECT_EQ(plan_rows(job.id), 301) << "what resuming needs";
  // Its operator mends the cause and resumes it: it runs to the end.
  auto resumed = resume_failed_import(*store_, job.id);
  ASSERT_TRUE(resumed.has_value()) << resumed.error().message;
  EXPECT_EQ(resumed->state, schema::ImportState::kRunning);
  LocalSink sink(clock_);
  EXPECT_EQ(run(job.id, sink).state, schema::ImportState::kDone);
  EXPECT_EQ(*store_->read().node_count(), 301);
  EXPECT_EQ(plan_rows(job.id), 0);

  // Another one fails and is abandoned: its plan goes, and with it resuming.
  const auto second = plan(300);
  ASSERT_EQ(run(second.id, refusing).state, schema::ImportState::kFailed);
  auto abandoned = abandon_import(*store_, second.id);
  ASSERT_TRUE(abandoned.has_value());
  EXPECT_EQ(abandoned->state, schema::ImportState::kFailed);
  EXPECT_EQ(plan_rows(second.id), 0);
  auto refused = resume_failed_import(*store_, second.id);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("abandoned"), std::string::npos);
}

TEST_F(ImportPlanTest, AbandoningAJobUnderWayEndsItAndDropsItsPlan) {
  const auto job = plan(500);
  LocalSink sink(clock_);
  run(job.id, sink, 1);
  auto abandoned = abandon_import(*store_, job.id);
  ASSERT_TRUE(abandoned.has_value());
  EXPECT_EQ(abandoned->state, schema::ImportState::kFailed);
  EXPECT_NE(abandoned->errors_json.find("abandoned by the operator"), std::string::npos);
  EXPECT_EQ(plan_rows(job.id), 0);
  EXPECT_TRUE(store_->import_jobs().unfinished()->empty());
  // Nothing further is written.
  const auto written = *store_->read().node_count();
  EXPECT_FALSE(run_import_batch(*store_, sink, job.id, false).has_value());
  EXPECT_EQ(*store_->read().node_count(), written);
}

TEST(ImportPlanMigration, AnIndexWrittenBeforeGivesBackThePlansOfFinishedJobs) {
  testing::TempDir dir;
  const std::string path = dir.file("index.db");
  std::string done_id, running_id;
  {
    auto store = std::move(*schema::Store::open(path));
    GroupLocks locks;
    ordering::TidClock clock;
    outline::Outline tree;
    for (int i = 0; i < 50; ++i) tree.nodes.push_back({.parent = -1, .text = std::to_string(i)});
    auto done = plan_import(*store, locks, clock, {kDid, std::nullopt}, tree);
    auto running = plan_import(*store, locks, clock, {kDid, std::nullopt}, tree);
    ASSERT_TRUE(done && running);
    done_id = done->id;
    running_id = running->id;
    // As schema 9 left it: the done job's plan still there.
    ASSERT_TRUE(bulleted::testing::database_of(*store)
                    .exec("UPDATE import_jobs SET state = 'done', done = total"
                          " WHERE id = (SELECT id FROM import_jobs ORDER BY created_at, id"
                          " LIMIT 1);")
                    .has_value());
    ASSERT_TRUE(bulleted::testing::rewind_schema(*store, 9).has_value());
  }
  std::vector<schema::MigrationProgress> steps;
  auto store = schema::Store::open(
      path,
      {.on_migration = [&](const schema::MigrationProgress& step) { steps.push_back(step); }});
  ASSERT_TRUE(store.has_value()) << store.error().message;
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps.front().version, 10);
  // Schema 10's reports (later steps follow them).
  std::erase_if(steps, [](const schema::MigrationProgress& step) { return step.version != 10; });
  ASSERT_FALSE(steps.empty());
  EXPECT_TRUE(steps.back().finished);
  EXPECT_EQ(steps.back().total, 51) << "the finished job's rows, counted";
  EXPECT_EQ(steps.back().done, 51);
  std::int64_t kept = 0;
  for (const std::string& id : {done_id, running_id}) {
    const auto job = **(*store)->import_jobs().find(id);
    if (job.state == schema::ImportState::kDone) {
      EXPECT_EQ(*(*store)->import_jobs().plan_rows(id), 0);
    } else {
      kept = *(*store)->import_jobs().plan_rows(id);
    }
  }
  EXPECT_EQ(kept, 51) << "an unfinished job keeps its plan";
}

TEST(IndexFile, ANewFileGivesFreedPagesBackOnRequest) {
  testing::TempDir dir;
  auto store = std::move(*schema::Store::open(dir.file("index.db")));
  auto mode = schema::query_value<std::int64_t>(bulleted::testing::database_of(*store),
                                                "PRAGMA auto_vacuum");
  ASSERT_TRUE(mode.has_value());
  EXPECT_EQ(mode->value_or(-1), 2) << "incremental";
}

}  // namespace
}  // namespace bulleted::appview
