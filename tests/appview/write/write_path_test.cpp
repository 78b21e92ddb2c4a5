// The write path in process, against a real index: placement from its
// vector file, the writer's one retry when the repo changed under it, the
// group locks under contention, and XRPC parameter parsing.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "appview/write/placement.hpp"
#include "appview/write/writer.hpp"
#include "appview/xrpc/xrpc.hpp"
#include "ordering/random_source.hpp"
#include "schema/outline_record.hpp"
#include "schema/syntax.hpp"
#include "tests/support/index_fixture.hpp"
#include "tests/support/store_fixtures.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/vector_file.hpp"

namespace bulleted::appview {
namespace {

const std::string kDid = "did:plc:alice";

std::vector<std::string> split(const std::string& text, char by) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, by);) out.push_back(part);
  return out;
}

class WritePathTest : public testing::IndexTest {
 protected:
  // The top-level group in order, as rkeys.
  std::vector<std::string> order() {
    auto page = store_->read().children({.did = kDid, .limit = 1000});
    std::vector<std::string> out;
    for (const auto& row : page->nodes) out.push_back(row.rkey);
    return out;
  }

  GroupLocks locks_;
  ordering::TidClock clock_;
};

TEST_F(WritePathTest, PlacementVectors) {
  const auto lines = testing::read_vector_file(std::string(BULLETED_SOURCE_DIR) +
                                               "/tests/appview/write/placement_vectors.txt");
  ASSERT_GE(lines.size(), 20u);
  int n = 0;
  for (const auto& line : lines) {
    ASSERT_GE(line.fields.size(), 4u) << "line " << line.line_number;
    SCOPED_TRACE("line " + std::to_string(line.line_number) + ": " + line.raw);
    reopen("case" + std::to_string(++n) + ".db");  // a fresh group for each case
    std::vector<schema::RecordOp> ops;
    if (line.fields[0] != "(empty)") {
      for (const auto& item : split(line.fields[0], ',')) {
        const auto eq = item.find('=');
        testing::NodeSpec spec{.did = kDid, .rkey = item.substr(0, eq)};
        spec.sort_key = item.substr(eq + 1);
        ops.push_back(testing::upsert(spec));
      }
      apply(std::move(ops));
    }
    NeighbourIntent intent;
    const std::string& said = line.fields[1];
    // A position is read before placement, as a request's is: one it
    // refuses is the vector's answer.
    std::optional<Error> refused;
    if (said == "last" || said == "first" || said.starts_with("pos:")) {
      auto position = PositionIntent::parse(said.starts_with("pos:") ? said.substr(4) : said);
      if (position) {
        intent.position = *position;
      } else {
        refused = position.error();
      }
    } else {
      for (const auto& part : split(said, ',')) {
        if (part.starts_with("after:")) intent.after_rkey = part.substr(6);
        if (part.starts_with("before:")) intent.before_rkey = part.substr(7);
      }
    }
    const std::optional<std::string> moving =
        line.fields[2] == "-" ? std::nullopt : std::optional<std::string>(line.fields[2]);
    auto jitter = ordering::Mulberry32::from_seed(7);
    const auto before = order();
    auto placed = refused ? Result<Placement>(std::unexpected(*refused))
                          : place(*store_, kDid, intent, moving, jitter);
    const std::string& expected = line.fields[3];
    if (expected.starts_with("error:")) {
      ASSERT_FALSE(placed.has_value()) << "placed at " << placed->sort_key;
      EXPECT_EQ(error_status(placed.error().code).name, expected.substr(6));
      EXPECT_EQ(order(), before) << "nothing changed";
      continue;
    }
    ASSERT_TRUE(placed.has_value()) << placed.error().message;
    EXPECT_EQ(placed->group, schema::root_group(kDid));
    // The group afterwards: the re-keys and the new key written, the moving
    // node (if any) taking the new key.
    std::vector<schema::RecordOp> writes;
    std::set<std::string> rekeyed;
    std::uint64_t rev = 10;
    for (const auto& [rkey, key] : placed->rekeys) {
      testing::NodeSpec spec{.did = kDid, .rkey = rkey, .rev = ++rev};
      spec.sort_key = key;
      writes.push_back(testing::upsert(spec));
      rekeyed.insert(rkey);
    }
    testing::NodeSpec placed_node{.did = kDid, .rkey = moving.value_or("NEW"), .rev = ++rev};
    placed_node.sort_key = placed->sort_key;
    writes.push_back(testing::upsert(placed_node));
    apply(std::move(writes));
    std::vector<std::string> after = order();
    if (moving) std::replace(after.begin(), after.end(), *moving, std::string("NEW"));
    ASSERT_TRUE(expected.starts_with("order:"));
    EXPECT_EQ(after, split(expected.substr(6), ','));
    ASSERT_GE(line.fields.size(), 5u);
    const std::string want_rekeys = line.fields[4].substr(std::string("rekeys:").size());
    std::set<std::string> expected_rekeys;
    if (want_rekeys != "-") {
      for (const auto& r : split(want_rekeys, ',')) expected_rekeys.insert(r);
    }
    EXPECT_EQ(rekeyed, expected_rekeys);
  }
}

// A sink that reports the repo changed for its first `changes` commits, then
// writes to the index like local mode; it counts refreshes.
class ChangingRepoSink final : public RecordSink {
 public:
  ChangingRepoSink(ordering::TidClock& clock, int changes) : local_(clock), changes_(changes) {}
  Result<Committed> commit(schema::Store& store, const std::string& did,
                           const std::vector<RecordWrite>& writes,
                           const CommitOptions& options) override {
    ++commits;
    if (changes_ > 0) {
      --changes_;
      return fail(ErrorCode::kRepoChanged, "the repo is not at the commit the index holds");
    }
    return local_.commit(store, did, writes, options);
  }
  Result<void> refresh(schema::Store&, const std::string&) override {
    ++refreshes;
    return {};
  }
  RepoWrites repo_writes() const override { return RepoWrites::kConcurrent; }
  Result<bool> holds(schema::Store&, const std::string&, const std::string&) override {
    return false;
  }
  int commits = 0;
  int refreshes = 0;

 private:
  LocalSink local_;
  int changes_;
};

TEST_F(WritePathTest, TheWriterRetriesOnceWhenTheRepoChangedThenGivesUp) {
  ChangingRepoSink once(clock_, 1);
  Writer writer(locks_, clock_, once);
  auto made = writer.create(*store_, kDid, {}, NodeFields{"one", std::nullopt, std::nullopt});
  ASSERT_TRUE(made.has_value()) << made.error().message;
  EXPECT_EQ(once.refreshes, 1);
  EXPECT_EQ(once.commits, 2);
  EXPECT_EQ(made->retries, 1);
  EXPECT_EQ(order(), std::vector<std::string>{made->rkey});

  ChangingRepoSink twice(clock_, 2);
  Writer stubborn(locks_, clock_, twice);
  auto refused = stubborn.create(*store_, kDid, {}, NodeFields{"two", std::nullopt, std::nullopt});
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kStaleNeighbours);
  EXPECT_EQ(error_status(refused.error().code).status, 409);
  EXPECT_EQ(twice.refreshes, 1) << "one refresh, one retry";
  EXPECT_EQ(twice.commits, 2);
  EXPECT_EQ(order().size(), 1u) << "nothing written";
  // A move takes the same path.
  ChangingRepoSink move_twice(clock_, 2);
  Writer mover(locks_, clock_, move_twice);
  NeighbourIntent first;
  first.position = PositionIntent::first();
  EXPECT_EQ(mover.move(*store_, kDid, made->rkey, first).error().code, ErrorCode::kStaleNeighbours);
}

TEST_F(WritePathTest, ACreateDeepInASubtreeNeverOutlivesTheSubtreesDelete) {
  // Creates under a grandchild of D take only that grandchild's group; the
  // delete of D takes D's. Raced many times, no create may land under a
  // node the delete removed (a dangling child, which `check` counts).
  const std::string path = dir_.file("index.db");
  LocalSink sink(clock_);
  Writer writer(locks_, clock_, sink);
  auto under = [](const std::optional<std::string>& parent) {
    NeighbourIntent intent;
    intent.parent_rkey = parent;
    return intent;
  };
  int landed = 0;
  CreateQueues creates;
  for (int round = 0; round < 40; ++round) {
    auto d = writer.create(*store_, kDid, under(std::nullopt), {.text = "d"});
    ASSERT_TRUE(d.has_value()) << d.error().message;
    auto e = writer.create(*store_, kDid, under(d->rkey), {.text = "e"});
    ASSERT_TRUE(e.has_value());
    auto p = writer.create(*store_, kDid, under(e->rkey), {.text = "p"});
    ASSERT_TRUE(p.has_value());
    std::atomic<bool> go{false};
    std::atomic<int> made{0};
    std::vector<std::thread> threads;
    // A thread with a connection and a writer of its own, started with the rest.
    auto writer_thread = [&](std::function<void(schema::Store&, Writer&)> body) {
      threads.emplace_back([&, body = std::move(body)] {
        auto store = schema::Store::open(path);
        ASSERT_TRUE(store.has_value());
        LocalSink own_sink(clock_);
        // Odd rounds: creates batched through the queues, as createNode is.
        Writer own(locks_, clock_, own_sink, nullptr, round % 2 == 1 ? &creates : nullptr);
        while (!go) std::this_thread::yield();
        body(**store, own);
      });
    };
    for (int t = 0; t < 3; ++t) {
      writer_thread([&](schema::Store& store, Writer& own) {
        for (int i = 0; i < 50; ++i) {
          if (!own.create(store, kDid, under(p->rkey), {.text = "late"})) break;
          ++made;
        }
      });
    }
    writer_thread([&](schema::Store& store, Writer& own) {
      std::this_thread::sleep_for(std::chrono::microseconds(200 * (round % 5)));
      auto removed = own.remove(store, kDid, d->rkey);
      ASSERT_TRUE(removed.has_value()) << removed.error().message;
    });
    go = true;
    for (auto& thread : threads) thread.join();
    landed += made;
    auto report = store_->integrity_report();
    ASSERT_TRUE(report.has_value());
    ASSERT_EQ(report->dangling, 0) << "round " << round;
    EXPECT_EQ(report->nodes, 0) << "the subtree and everything created in it are gone";
  }
  EXPECT_GT(landed, 0) << "creates did run alongside the deletes";
}

// Local writes keep the search index in their own transaction: found as
// soon as the write answered, by new words only after an update, under a
// new root after a move, and gone with a deleted subtree.
TEST_F(WritePathTest, LocalWritesAreFoundAsSoonAsTheyAnswer) {
  LocalSink sink(clock_);
  Writer writer(locks_, clock_, sink);
  auto found = [&](const std::string& q, std::optional<std::string> root = std::nullopt) {
    schema::SearchRequest request{
        .did = kDid, .q = q, .query = *schema::parse_search_query(q), .root_rkey = std::move(root)};
    auto page = store_->read().search(request);
    EXPECT_TRUE(page.has_value()) << page.error().message;
    std::vector<std::string> texts;
    for (const auto& r : page->results) texts.push_back(r.node.text);
    std::sort(texts.begin(), texts.end());
    return texts;
  };
  NeighbourIntent top;
  auto a = writer.create(*store_, kDid, top, {.text = "alpha folder"});
  auto b = writer.create(*store_, kDid, top, {.text = "beta folder"});
  ASSERT_TRUE(a && b);
  NeighbourIntent under_a;
  under_a.parent_rkey = a->rkey;
  auto leaf = writer.create(*store_, kDid, under_a, {.text = "kiwi leaf", .note = "#fruit"});
  ASSERT_TRUE(leaf.has_value());
  EXPECT_EQ(found("kiwi"), std::vector<std::string>{"kiwi leaf"});
  EXPECT_EQ(found("#fruit", a->rkey), std::vector<std::string>{"kiwi leaf"});
  ASSERT_TRUE(writer.update(*store_, kDid, leaf->rkey, {.text = std::string("mango leaf")}));
  EXPECT_EQ(found("kiwi"), std::vector<std::string>{});
  EXPECT_EQ(found("mango"), std::vector<std::string>{"mango leaf"});
  NeighbourIntent under_b;
  under_b.parent_rkey = b->rkey;
  ASSERT_TRUE(writer.move(*store_, kDid, leaf->rkey, under_b));
  EXPECT_EQ(found("mango", a->rkey), std::vector<std::string>{});
  EXPECT_EQ(found("mango", b->rkey), std::vector<std::string>{"mango leaf"});
  ASSERT_TRUE(writer.remove(*store_, kDid, b->rkey));
  EXPECT_EQ(found("mango"), std::vector<std::string>{});
  EXPECT_EQ(found("folder"), std::vector<std::string>{"alpha folder"});
  auto report = store_->integrity_report();
  ASSERT_TRUE(report.has_value());
  EXPECT_TRUE(report->search_index_ok);
}

// What the writer writes holds to the published lexicons (reading is
// lenient, writing strict): a text of at most 2,000 graphemes and 10,000
// bytes, a note of at most 20,000 graphemes; completion is completedAt,
// written at the update that completes and removed by the one that does not.
TEST_F(WritePathTest, WritesHoldToThePublishedRecordsLimitsAndCompleteWithCompletedAt) {
  LocalSink sink(clock_);
  Writer writer(locks_, clock_, sink);
  NeighbourIntent top;
  EXPECT_TRUE(writer.create(*store_, kDid, top, {.text = std::string(2'000, 'x')}).has_value());
  for (const auto& [fields, says] : std::vector<std::pair<NodeFields, std::string>>{
           {{.text = std::string(2'001, 'x')}, "text has more than 2000 graphemes"},
           {{.text = std::string(10'001, 'x')}, "text is longer than 10000 bytes"},
           {{.text = "ok", .note = std::string(20'001, 'n')}, "note has more than 20000"}}) {
    auto refused = writer.create(*store_, kDid, top, fields);
    ASSERT_FALSE(refused.has_value()) << says;
    EXPECT_EQ(refused.error().code, ErrorCode::kInvalidRequest);
    EXPECT_NE(refused.error().message.find(says), std::string::npos) << refused.error().message;
  }
  auto todo = writer.create(*store_, kDid, top, {.text = "todo"});
  ASSERT_TRUE(todo.has_value());
  ASSERT_TRUE(writer.update(*store_, kDid, todo->rkey, {.completed = true}));
  auto record = [&] {
    auto row = store_->read().node(kDid, todo->rkey);
    EXPECT_TRUE(row.has_value());
    return row ? nlohmann::json::parse(row->record_json) : nlohmann::json();
  };
  const auto completed_at = record()["completedAt"];
  ASSERT_TRUE(completed_at.is_string()) << record().dump();
  EXPECT_TRUE(schema::Datetime::parse(completed_at.get<std::string>()).has_value());
  EXPECT_FALSE(record().contains("completed"));
  ASSERT_TRUE(writer.update(*store_, kDid, todo->rkey, {.text = std::string("todo, renamed")}));
  EXPECT_EQ(record()["completedAt"], completed_at) << "kept by an edit";
  ASSERT_TRUE(writer.update(*store_, kDid, todo->rkey, {.completed = false}));
  EXPECT_FALSE(record().contains("completedAt"));
  // Layout and display, as given; an update's "" removes them.
  auto heading =
      writer.create(*store_, kDid, top, {.text = "Plans", .layout = "h1", .display = "collapsed"});
  ASSERT_TRUE(heading.has_value());
  auto fields_of = [&](const std::string& rkey) {
    auto row = store_->read().node(kDid, rkey);
    EXPECT_TRUE(row.has_value());
    return row ? std::pair{row->layout, row->display}
               : std::pair<std::optional<std::string>, std::optional<std::string>>{};
  };
  EXPECT_EQ(fields_of(heading->rkey),
            (std::pair<std::optional<std::string>, std::optional<std::string>>{"h1", "collapsed"}));
  ASSERT_TRUE(writer.update(*store_, kDid, heading->rkey, {.layout = "todo", .display = ""}));
  EXPECT_EQ(
      fields_of(heading->rkey),
      (std::pair<std::optional<std::string>, std::optional<std::string>>{"todo", std::nullopt}));
}

// A mirror of Bob's bullet at `rkey`, as a third-party client writes it.
schema::RecordOp mirror_op(const std::string& rkey, const std::optional<std::string>& parent,
                           const std::string& sort_key) {
  nlohmann::json json = {{"$type", "app.bulleted.mirror"},
                         {"original", "at://did:plc:bob/app.bulleted.node/3kabc"},
                         {"sortKey", sort_key},
                         {"createdAt", "2026-11-30T12:00:00.000Z"}};
  if (parent) json["parent"] = testing::node_uri(kDid, *parent);
  auto kept = schema::parse_kept_record(schema::kMirrorCollection, json, kDid, rkey);
  EXPECT_TRUE(kept.has_value()) << kept.error();
  schema::RecordOp op;
  op.collection = schema::Collection::kMirror;
  op.did = kDid;
  op.rkey = rkey;
  op.rev = testing::rev(1);
  op.cid = "bafymirror" + rkey;
  op.kept = std::move(*kept);
  return op;
}

TEST_F(WritePathTest, AMirrorIsMovedReKeyedAndDeletedAsItsOwnRecordAndNeverEdited) {
  LocalSink sink(clock_);
  Writer writer(locks_, clock_, sink);
  apply({testing::upsert({.did = kDid, .rkey = "a", .sort_key = "a0"}),
         mirror_op("b", std::nullopt, "a0"),
         testing::upsert({.did = kDid, .rkey = "p", .sort_key = "a5"})});
  auto record_of = [&](const std::string& rkey) {
    auto row = store_->read().node(kDid, rkey);
    EXPECT_TRUE(row.has_value());
    return row ? nlohmann::json::parse(row->record_json) : nlohmann::json();
  };
  // Placed between a and the mirror b (one key): b is re-keyed, as a mirror.
  auto between = writer.create(*store_, kDid, {.after_rkey = "a"}, {.text = "between"});
  ASSERT_TRUE(between.has_value()) << between.error().message;
  EXPECT_EQ(order(), (std::vector<std::string>{"a", between->rkey, "b", "p"}));
  EXPECT_EQ(record_of("b")["$type"], "app.bulleted.mirror");
  EXPECT_NE(record_of("b")["sortKey"], "a0");
  EXPECT_EQ(record_of("b")["original"], "at://did:plc:bob/app.bulleted.node/3kabc");
  // Moved under p: its own record, with its parent.
  auto moved = writer.move(*store_, kDid, "b", {.parent_rkey = "p"});
  ASSERT_TRUE(moved.has_value()) << moved.error().message;
  EXPECT_EQ(moved->uri, "at://did:plc:alice/app.bulleted.mirror/b");
  EXPECT_EQ(record_of("b")["parent"], testing::node_uri(kDid, "p"));
  EXPECT_EQ(order(), (std::vector<std::string>{"a", between->rkey, "p"}));
  // Never edited, never a parent.
  auto edited = writer.update(*store_, kDid, "b", {.text = std::string("no")});
  ASSERT_FALSE(edited.has_value());
  EXPECT_EQ(edited.error().code, ErrorCode::kInvalidRequest);
  auto under = writer.create(*store_, kDid, {.parent_rkey = "b"}, {.text = "under"});
  ASSERT_FALSE(under.has_value());
  EXPECT_EQ(under.error().code, ErrorCode::kInvalidRequest);
  // p's subtree goes with its mirror, as a mirror record's delete.
  auto removed = writer.remove(*store_, kDid, "p");
  ASSERT_TRUE(removed.has_value()) << removed.error().message;
  EXPECT_EQ(*removed, 2u);
  EXPECT_FALSE(store_->read().node(kDid, "b").has_value());
  auto records = store_->read().indexed_records(kDid);
  ASSERT_TRUE(records.has_value());
  for (const auto& r : *records) EXPECT_NE(r.collection, schema::Collection::kMirror) << r.rkey;
}

TEST_F(WritePathTest, CreatesBatchedOnOneGroupAllLandInTheirPlaces) {
  // Threads with connections of their own create at random indexes of one
  // group through shared queues (createNode's path), some naming a sibling
  // that does not exist: every good create lands once, in a place no other
  // took, and a failing one leaves the rest of its batch alone.
  const std::string path = dir_.file("index.db");
  CreateQueues creates;
  LocalSink seed_sink(clock_);
  Writer seed(locks_, clock_, seed_sink);
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(seed.create(*store_, kDid, {}, {.text = "seed"}).has_value());
  }
  std::atomic<int> made{0};
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      auto store = schema::Store::open(path);
      ASSERT_TRUE(store.has_value());
      LocalSink sink(clock_);
      Writer own(locks_, clock_, sink, nullptr, &creates);
      std::mt19937 random(static_cast<unsigned>(t));
      for (int i = 0; i < 40; ++i) {
        NeighbourIntent intent;
        if (i % 7 == 3) {
          intent.after_rkey = "3zzzzzzzzzzzz";  // no such sibling
        } else {
          intent.position = PositionIntent::at(random() % 30);
        }
        auto made_one = own.create(**store, kDid, intent, {.text = "t" + std::to_string(t)});
        if (made_one) {
          ++made;
        } else {
          EXPECT_EQ(made_one.error().code, ErrorCode::kInvalidNeighbour)
              << made_one.error().message;
          ++refused;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(refused.load(), 6 * 6);
  EXPECT_EQ(made.load(), 6 * 40 - 6 * 6);
  const auto rkeys = order();
  EXPECT_EQ(rkeys.size(), static_cast<std::size_t>(20 + made.load()));
  EXPECT_EQ(std::set<std::string>(rkeys.begin(), rkeys.end()).size(), rkeys.size());
  auto keys = store_->read().sibling_keys(schema::root_group(kDid), std::nullopt, false, 1000);
  ASSERT_TRUE(keys.has_value());
  for (std::size_t i = 1; i < keys->size(); ++i) {
    EXPECT_LT((*keys)[i - 1].sort_key, (*keys)[i].sort_key) << "two creates took one key";
  }
  auto report = store_->integrity_report();
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->wrong_counts, 0);
  EXPECT_EQ(report->wrong_blocks, 0);
  EXPECT_EQ(report->nodes, 20 + made.load());
}

TEST(CreateQueuesTest, CreatesQueuedBehindABatchRunAsTheNextOneAndOtherGroupsDoNotWait) {
  testing::TempDir dir;
  auto store = schema::Store::open(dir.file("index.db"));
  ASSERT_TRUE(store.has_value());
  CreateQueues queues;
  std::mutex sizes_mutex;
  std::vector<std::size_t> sizes;  // each batch's size, in the order they ran
  auto lead = [&](const std::vector<CreateQueues::Job*>& batch) {
    {
      std::lock_guard lock(sizes_mutex);
      sizes.push_back(batch.size());
    }
    for (auto* job : batch) job->result = job->run(**store);
  };
  auto job_of = [](std::string key, std::string name) {
    return CreateQueues::Job{std::move(key), [name](schema::Store&) -> Result<WriteResult> {
                               return WriteResult{.rkey = name};
                             }};
  };
  std::atomic<bool> release{false};
  std::atomic<bool> first_running{false};
  CreateQueues::Job first = job_of("g", "first");
  std::thread leader([&] {
    queues.submit(first, [&](const std::vector<CreateQueues::Job*>& batch) {
      first_running = true;
      while (!release) std::this_thread::yield();
      lead(batch);
    });
  });
  while (!first_running) std::this_thread::yield();
  // Another group is not held up by the running batch.
  CreateQueues::Job other = job_of("h", "other");
  queues.submit(other, lead);
  ASSERT_TRUE(other.result && *other.result);
  EXPECT_EQ((*other.result)->rkey, "other");
  // Three of the same group queue up behind it ...
  std::vector<CreateQueues::Job> later;
  for (int i = 0; i < 3; ++i) later.push_back(job_of("g", "later" + std::to_string(i)));
  std::vector<std::thread> waiters;
  for (auto& job : later) waiters.emplace_back([&, job = &job] { queues.submit(*job, lead); });
  while (queues.waiting("g") < 3) std::this_thread::yield();
  release = true;
  leader.join();
  for (auto& waiter : waiters) waiter.join();
  // ... and ran as one batch after it, each with its own result.
  EXPECT_EQ(sizes, (std::vector<std::size_t>{1, 1, 3}));
  ASSERT_TRUE(first.result && *first.result);
  EXPECT_EQ((*first.result)->rkey, "first");
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(later[i].result && *later[i].result);
    EXPECT_EQ((*later[i].result)->rkey, "later" + std::to_string(i));
  }
  EXPECT_EQ(queues.waiting("g"), 0u);
}

TEST(GroupLocksTest, TwoGroupsInEitherOrderNeverDeadlockAndExcludeEachOther) {
  GroupLocks locks;
  constexpr int kRounds = 20'000;
  long shared = 0;  // written only under both locks
  auto worker = [&](std::vector<std::string> groups) {
    for (int i = 0; i < kRounds; ++i) {
      auto guard = locks.lock(groups);
      ++shared;
    }
  };
  // Opposite orders, and a third thread on one of the groups: with locks
  // taken as given, the first two would deadlock within a few rounds.
  std::thread a(worker, std::vector<std::string>{"at://did:plc:x/g1", "at://did:plc:x/g2"});
  std::thread b(worker, std::vector<std::string>{"at://did:plc:x/g2", "at://did:plc:x/g1"});
  std::thread c(worker, std::vector<std::string>{"at://did:plc:x/g1"});
  a.join();
  b.join();
  c.join();
  EXPECT_EQ(shared, 3L * kRounds);
  // The same group twice is one lock (a move within its own group): were it
  // taken twice, this would hang the test until its timeout.
  auto same = locks.lock({"at://did:plc:x/g1", "at://did:plc:x/g1"});
}

TEST(XrpcParamsTest, DecodesRepeatsAndRefusesWhatIsMalformed) {
  auto params = XrpcParams::parse("repo=did%3Aplc%3Aa&q=a+b%20c&limit=50&limit=7&flag=true&e=");
  ASSERT_TRUE(params.has_value());
  EXPECT_EQ(params->text("repo"), "did:plc:a");
  EXPECT_EQ(params->text("q"), "a b c");
  EXPECT_EQ(*params->integer("limit", 1, 100), 50) << "the first of repeated values";
  EXPECT_EQ(*params->boolean("flag"), true);
  EXPECT_FALSE(params->text("absent").has_value());
  EXPECT_FALSE(params->integer("absent", 1, 100)->has_value());
  EXPECT_EQ(params->required("e").error().code, ErrorCode::kInvalidRequest) << "empty is missing";
  EXPECT_NE(params->required("absent").error().message.find("absent"), std::string::npos);
  auto bad_limit = XrpcParams::parse("limit=1001")->integer("limit", 1, 1000);
  ASSERT_FALSE(bad_limit.has_value());
  EXPECT_EQ(bad_limit.error().message, "limit must be an integer from 1 to 1000");
  for (const char* text : {"limit=x", "limit=5x", "limit=99999999999999999999", "limit=-"}) {
    EXPECT_FALSE(XrpcParams::parse(text)->integer("limit", 1, 1000).has_value()) << text;
  }
  EXPECT_FALSE(XrpcParams::parse("flag=yes")->boolean("flag").has_value());
  for (const char* text : {"a=%", "a=%4", "a=%zz", "%=1"}) {
    auto malformed = XrpcParams::parse(text);
    ASSERT_FALSE(malformed.has_value()) << text;
    EXPECT_EQ(malformed.error().code, ErrorCode::kInvalidRequest);
  }
  EXPECT_TRUE(XrpcParams::parse("").has_value());
  EXPECT_TRUE(XrpcParams::parse("&&a=1&").has_value());
}

}  // namespace
}  // namespace bulleted::appview
