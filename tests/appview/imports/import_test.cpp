// Import and export: the WorkFlowy dialects in and out, hostile documents,
// and import jobs run against a real SQLite index.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

#include "appview/imports/import_jobs.hpp"
#include "appview/outline/from_index.hpp"
#include "appview/outline/outline.hpp"
#include "ordering/order_key.hpp"
#include "schema/note_record.hpp"
#include "tests/support/files.hpp"
#include "tests/support/store_internals.hpp"
#include "tests/support/temp_dir.hpp"

namespace bulleted::appview {
namespace {

using nlohmann::json;
using outline::ImportLimits;
using outline::Outline;
using outline::read_outline;

const std::string kDid = "did:plc:importer";

// A node as the tests compare it: depth, text, note, completion, facets.
json shape(const Outline& tree, std::size_t skip_root = 0) {
  std::vector<std::size_t> depth(tree.nodes.size(), 0);
  json out = json::array();
  for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
    const auto& node = tree.nodes[i];
    depth[i] = node.parent < 0 ? 0 : depth[static_cast<std::size_t>(node.parent)] + 1;
    if (i < skip_root) continue;
    json item = {{"depth", depth[i] - (skip_root > 0 ? 1 : 0)}, {"text", node.text}};
    if (node.note) item["note"] = *node.note;
    if (node.completed) item["completed"] = true;
    if (node.facets.is_array()) item["facets"] = node.facets;
    out.push_back(std::move(item));
  }
  return out;
}

json expected_fixture() {
  json expected = testing::read_json(testing::fixture_path("import/workflowy.expected.json"));
  for (auto& item : expected) {
    if (item.contains("completed") && !item["completed"].get<bool>()) item.erase("completed");
  }
  return expected;
}

Outline fixture_outline() {
  auto parsed = outline::parse_opml(
      testing::read_file(testing::fixture_path("import/workflowy.opml")), ImportLimits{});
  EXPECT_TRUE(parsed.has_value()) << parsed.error().message;
  return parsed ? std::move(*parsed) : Outline{};
}

TEST(OpmlTest, TheFixtureParsesToTheExactOutline) {
  const Outline tree = fixture_outline();
  EXPECT_EQ(shape(tree), expected_fixture());
}

TEST(OpmlTest, TheHeadIsNeverKept) {
  const std::string dump = shape(fixture_outline()).dump();
  EXPECT_EQ(dump.find("owner@example.com"), std::string::npos);
  EXPECT_EQ(dump.find("ownerEmail"), std::string::npos);
}

TEST(RichTextTest, ToleratesWhatWorkFlowyAndPeopleWrite) {
  auto plain = [](std::string_view html) { return outline::decode_rich_text(html).text; };
  EXPECT_EQ(plain("a & b"), "a & b");              // a bare '&'
  EXPECT_EQ(plain("a &bogus; b"), "a &bogus; b");  // an unknown entity
  EXPECT_EQ(plain("1 < 2 > 0"), "1 < 2 > 0");      // no tags at all
  EXPECT_EQ(plain("x</b>y"), "xy");                // a stray close
  EXPECT_EQ(plain("<blink>on</blink>"), "on");     // an unknown tag
  EXPECT_EQ(plain("a<br>b"), "a\nb");
  EXPECT_EQ(plain("&#65;&#x42;&#x1F389;&#0;"), "AB\xF0\x9F\x8E\x89\xEF\xBF\xBD");
  EXPECT_EQ(plain("tail <b"), "tail <b");  // a tag never closed by '>'
  auto unclosed = outline::decode_rich_text("<b>to the end");
  EXPECT_EQ(
      unclosed.facets.dump(),
      R"([{"features":[{"$type":"app.bulleted.format#bold"}],"index":{"byteEnd":10,"byteStart":0}}])");
  EXPECT_TRUE(outline::decode_rich_text("<b></b>empty").facets.is_null());
  EXPECT_TRUE(outline::decode_rich_text("<a href=\"\">no link</a>").facets.is_null());
}

TEST(RichTextTest, EncodingThenDecodingGivesTheSameFormatting) {
  for (const auto& node : fixture_outline().nodes) {
    const std::string html = outline::encode_rich_text(node.text, node.facets);
    const auto again = outline::decode_rich_text(html);
    EXPECT_EQ(again.text, node.text) << html;
    EXPECT_EQ(again.facets, node.facets) << html;
  }
  // Facets out of range, inside a UTF-8 sequence or of unknown kinds are left out.
  const json odd = json::array(
      {{{"index", {{"byteStart", 0}, {"byteEnd", 99}}},
        {"features", {{{"$type", "app.bulleted.format#bold"}}}}},
       {{"index", {{"byteStart", 1}, {"byteEnd", 2}}},
        {"features", {{{"$type", "app.bulleted.format#bold"}}}}},
       {{"index", {{"byteStart", 0}, {"byteEnd", 2}}}, {"features", {{{"$type", "x.y#z"}}}}}});
  EXPECT_EQ(outline::encode_rich_text("\xC3\xA9t\xC3\xA9", odd), "\xC3\xA9t\xC3\xA9");
  EXPECT_EQ(outline::encode_rich_text("<&>", nullptr), "&lt;&amp;&gt;");
}

TEST(PlainTextTest, BulletsLevelsCompletionAndNotes) {
  auto parsed = outline::parse_plain_text(
      testing::read_file(testing::fixture_path("import/workflowy.txt")), ImportLimits{});
  ASSERT_TRUE(parsed.has_value()) << parsed.error().message;
  const json expected = json::parse(R"([
    {"depth":0,"text":"Projects","note":"Everything I am working on\nsecond line of the note"},
    {"depth":1,"text":"Write the launch post","completed":true},
    {"depth":1,"text":"Read the spec twice"},
    {"depth":2,"text":"italic, underlined and struck"},
    {"depth":2,"text":"Run make test before pushing"},
    {"depth":1,"text":"Urgent: call Sam"},
    {"depth":0,"text":"Messy & <stray>"},
    {"depth":0,"text":""},
    {"depth":0,"text":"","completed":true},
    {"depth":1,"text":"a jump of two levels is one level"},
    {"depth":0,"text":"Mirror"},
    {"depth":0,"text":"Mirror"}])");
  EXPECT_EQ(shape(*parsed), expected);
  EXPECT_FALSE(outline::parse_plain_text("no bullet here\n", ImportLimits{}).has_value());
}

TEST(PlainTextTest, WritingAndReadingBackKeepsTheOutline) {
  Outline tree = fixture_outline();
  for (auto& node : tree.nodes) node.facets = nullptr;  // the text format has no formatting
  auto again = outline::parse_plain_text(outline::write_plain_text(tree), ImportLimits{});
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_EQ(shape(*again), shape(tree));
}

TEST(OpmlTest, WritingAndReadingBackKeepsTheOutline) {
  const Outline tree = fixture_outline();
  const std::string document = outline::write_opml(tree, "a \"title\" & <more>");
  auto again = outline::parse_opml(document, ImportLimits{});
  ASSERT_TRUE(again.has_value()) << again.error().message << "\n" << document;
  EXPECT_EQ(shape(*again), shape(tree));
}

// Line breaks and tabs in notes survive as character references; other
// control characters, which XML 1.0 cannot hold, are dropped.
TEST(OpmlTest, ControlCharactersInAttributes) {
  Outline tree;
  tree.nodes.push_back({-1, "say \"hi\"", nullptr,
                        std::string("one\ntwo\tthree\r\x01"
                                    "end"),
                        false});
  const std::string document = outline::write_opml(tree, "t");
  EXPECT_NE(document.find("_note=\"one&#10;two&#9;three&#13;end\""), std::string::npos) << document;
  EXPECT_NE(document.find("text=\"say &quot;hi&quot;\""), std::string::npos) << document;
  auto again = outline::parse_opml(document, ImportLimits{});
  ASSERT_TRUE(again.has_value()) << again.error().message;
  ASSERT_EQ(again->nodes.size(), 1u);
  EXPECT_EQ(again->nodes[0].note, std::optional<std::string>("one\ntwo\tthree\rend"));
  EXPECT_EQ(again->nodes[0].text, "say \"hi\"");
}

// ---- hostile documents

Error opml_error(const std::string& document, ImportLimits limits = {}) {
  auto parsed = outline::parse_opml(document, limits);
  EXPECT_FALSE(parsed.has_value());
  return parsed ? Error{ErrorCode::kInternal, "parsed"} : parsed.error();
}

TEST(OpmlHostileTest, BillionLaughsIsRefused) {
  std::string doc = "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n<!ENTITY lol \"lol\">\n";
  for (int i = 1; i <= 9; ++i) {
    doc += "<!ENTITY lol" + std::to_string(i) + " \"";
    for (int j = 0; j < 10; ++j)
      doc += "&lol" + (i == 1 ? std::string() : std::to_string(i - 1)) + ";";
    doc += "\">\n";
  }
  doc += "]>\n<opml><body><outline text=\"&lol9;\"/></body></opml>";
  const Error error = opml_error(doc);
  EXPECT_EQ(error.code, ErrorCode::kInvalidRequest);
  EXPECT_NE(error.message.find("DTD"), std::string::npos) << error.message;
}

TEST(OpmlHostileTest, ExternalEntitiesAreRefused) {
  const Error error = opml_error(
      "<?xml version=\"1.0\"?><!DOCTYPE opml [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>"
      "<opml><body><outline text=\"&x;\"/></body></opml>");
  EXPECT_EQ(error.code, ErrorCode::kInvalidRequest);
  EXPECT_NE(error.message.find("DTD"), std::string::npos) << error.message;
  // An undeclared entity is malformed XML, not a fetch.
  EXPECT_NE(opml_error("<opml><body><outline text=\"&x;\"/></body></opml>").message.find("line 1"),
            std::string::npos);
}

TEST(OpmlHostileTest, ADocumentOverTheSizeLimitIsRefused) {
  std::string doc = "<opml><body>";
  const std::string row = "<outline text=\"0123456789012345678901234567890123456789\"/>\n";
  while (doc.size() < 100u * 1024 * 1024) doc += row;
  doc += "</body></opml>";
  const Error error = opml_error(doc);  // the default limit is 50 MiB
  EXPECT_EQ(error.code, ErrorCode::kPayloadTooLarge);
  EXPECT_NE(error.message.find("52428800 bytes"), std::string::npos) << error.message;
}

TEST(OpmlHostileTest, DepthAndNodeCountHaveLimits) {
  std::string deep = "<opml><body>";
  for (int i = 0; i < 10'000; ++i) deep += "<outline text=\"x\">";
  for (int i = 0; i < 10'000; ++i) deep += "</outline>";
  deep += "</body></opml>";
  const Error error = opml_error(deep);
  EXPECT_EQ(error.code, ErrorCode::kPayloadTooLarge);
  EXPECT_NE(error.message.find("1000 levels"), std::string::npos) << error.message;
  std::string wide = "<opml><body>";
  for (int i = 0; i < 11; ++i) wide += "<outline text=\"x\"/>";
  wide += "</body></opml>";
  ImportLimits small;
  small.max_nodes = 10;
  EXPECT_NE(opml_error(wide, small).message.find("limit of 10"), std::string::npos);
  std::string deep_text;
  for (int i = 0; i < 1'100; ++i) deep_text += std::string(2 * i, ' ') + "- x\n";
  auto text = outline::parse_plain_text(deep_text, ImportLimits{});
  ASSERT_FALSE(text.has_value());
  EXPECT_EQ(text.error().code, ErrorCode::kPayloadTooLarge);
  EXPECT_NE(text.error().message.find("1000 levels"), std::string::npos);
}

TEST(OpmlHostileTest, TruncatedXmlNamesTheLineAndColumn) {
  std::string doc = testing::read_file(testing::fixture_path("import/workflowy.opml"));
  for (std::size_t cut : {doc.size() / 3, doc.size() / 2, doc.size() - 10}) {
    const Error error = opml_error(doc.substr(0, cut));
    EXPECT_EQ(error.code, ErrorCode::kInvalidRequest);
    EXPECT_NE(error.message.find("malformed XML at line"), std::string::npos) << error.message;
    EXPECT_NE(error.message.find("column"), std::string::npos) << error.message;
  }
  EXPECT_NE(opml_error("<opml><body></body></opml>").message.find("no <outline>"),
            std::string::npos);
}

// ---- jobs against a real index

class ImportJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = schema::Store::open(dir_.file("index.db"));
    ASSERT_TRUE(opened.has_value());
    store_ = std::move(*opened);
  }

  schema::ImportJobRow plan(const Outline& tree, std::optional<std::string> parent = {}) {
    auto job = plan_import(*store_, locks_, clock_, {kDid, parent}, tree);
    EXPECT_TRUE(job.has_value()) << job.error().message;
    return job ? *job : schema::ImportJobRow{};
  }

  // Runs batches until the job is no longer running; returns the batch count.
  int run(const std::string& id, int max_batches = 1'000'000) {
    LocalSink sink(clock_);
    int batches = 0;
    bool first = true;
    while (batches < max_batches) {
      auto job = run_import_batch(*store_, sink, id, first);
      first = false;
      EXPECT_TRUE(job.has_value()) << job.error().message;
      if (!job || job->state != schema::ImportState::kRunning) break;
      ++batches;
    }
    return batches;
  }

  Outline exported(const std::string& root) {
    auto tree = read_outline(*store_, kDid, root, 1'000'000);
    EXPECT_TRUE(tree.has_value()) << tree.error().message;
    return tree ? *tree : Outline{};
  }

  testing::TempDir dir_;
  std::unique_ptr<schema::Store> store_;
  GroupLocks locks_;
  ordering::TidClock clock_;
};

TEST_F(ImportJobTest, TheImportedTreeIsExact) {
  const auto job = plan(fixture_outline());
  EXPECT_EQ(job.state, schema::ImportState::kRunning);
  EXPECT_EQ(job.total, 14);
  // Nothing is written before the job runs.
  EXPECT_EQ(*store_->read().node_count(), 0);
  run(job.id);
  EXPECT_EQ((**store_->import_jobs().find(job.id)).state, schema::ImportState::kDone);
  EXPECT_EQ((**store_->import_jobs().find(job.id)).done, 14);
  const Outline tree = exported(job.root_rkey);
  ASSERT_FALSE(tree.nodes.empty());
  EXPECT_TRUE(tree.nodes[0].text.starts_with("Imported from WorkFlowy \u2014 20"));
  EXPECT_EQ(shape(tree, 1), expected_fixture());
  // The root went to the top level, last.
  auto top = store_->read().children({.did = kDid, .limit = 10});
  ASSERT_EQ(top->nodes.size(), 1u);
  EXPECT_EQ(top->nodes[0].rkey, job.root_rkey);
}

TEST_F(ImportJobTest, ImportThenExportGivesBackTheSameOutline) {
  const auto first = plan(fixture_outline());
  run(first.id);
  // Export the imported nodes (without the job's root), import that again.
  Outline tree = exported(first.root_rkey);
  tree.nodes.erase(tree.nodes.begin());
  for (auto& node : tree.nodes) node.parent -= 1;
  for (auto& node : tree.nodes) {
    if (node.parent < 0) node.parent = -1;
  }
  const std::string document = outline::write_opml(tree, "export");
  auto reparsed = outline::parse_opml(document, ImportLimits{});
  ASSERT_TRUE(reparsed.has_value()) << reparsed.error().message;
  const auto second = plan(*reparsed);
  run(second.id);
  EXPECT_EQ(shape(exported(second.root_rkey), 1), shape(exported(first.root_rkey), 1));
  EXPECT_EQ(shape(exported(second.root_rkey), 1), expected_fixture());
  // And in the text dialect, without formatting.
  auto text = outline::parse_plain_text(outline::write_plain_text(tree), ImportLimits{});
  ASSERT_TRUE(text.has_value());
  json plain = expected_fixture();
  for (auto& item : plain) item.erase("facets");
  EXPECT_EQ(shape(*text), plain);
}

TEST_F(ImportJobTest, ThreeThousandChildrenGetKeysOfAtMostThreeBytesInOrder) {
  Outline tree;
  for (int i = 0; i < 3000; ++i) {
    tree.nodes.push_back({.parent = -1, .text = "child " + std::to_string(i)});
  }
  const auto job = plan(tree);
  run(job.id);
  std::vector<schema::NodeRow> children;
  std::optional<std::string> cursor;
  do {
    auto page = store_->read().children(
        {.did = kDid, .parent_rkey = job.root_rkey, .limit = 1000, .cursor = cursor});
    ASSERT_TRUE(page.has_value());
    children.insert(children.end(), page->nodes.begin(), page->nodes.end());
    cursor = page->cursor;
  } while (cursor);
  ASSERT_EQ(children.size(), 3000u);
  for (std::size_t i = 0; i < children.size(); ++i) {
    EXPECT_EQ(children[i].text, "child " + std::to_string(i));
    EXPECT_LE(children[i].sort_key.size(), 3u) << children[i].sort_key;
    EXPECT_TRUE(ordering::is_valid_key(children[i].sort_key));
    if (i > 0) {
      EXPECT_LT(children[i - 1].sort_key, children[i].sort_key);
    }
  }
}

// The server's runner and the `import` command see the same jobs: a job
// the command runs (its lease fresh) is left to it, and taken over once
// the lease runs out (the command stopped).
TEST_F(ImportJobTest, TheServersRunnerLeavesAJobAnotherProcessRunsUntilItsLeaseRunsOut) {
  Outline tree;
  for (int i = 0; i < 5; ++i) tree.nodes.push_back({.parent = -1, .text = std::to_string(i)});
  auto planned = plan_import(
      *store_, locks_, clock_,
      {kDid, std::nullopt, outline::Format::kOpml, std::nullopt, "WorkFlowy", "import 1 1"}, tree);
  ASSERT_TRUE(planned.has_value()) << planned.error().message;
  struct LocalJobSink final : JobSink {
    explicit LocalJobSink(ordering::TidClock& clock) : local(clock) {}
    RecordSink& sink() override { return local; }
    LocalSink local;
  };
  std::atomic<int> sinks{0};
  ImportRunner runner(
      dir_.file("index.db"), 1000, [&](schema::Store&, const schema::ImportJobRow&) {
        ++sinks;
        return Result<std::unique_ptr<JobSink>>(std::make_unique<LocalJobSink>(clock_));
      });
  runner.start();
  runner.wake();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  auto held = store_->import_jobs().find(planned->id);
  ASSERT_TRUE(held.has_value() && held->has_value());
  EXPECT_EQ((*held)->done, 0) << "the command's job was left to it";
  EXPECT_EQ((*held)->runner, "import 1 1");
  EXPECT_EQ(sinks.load(), 0);
  // The command stopped: its lease runs out, and the server's runner goes on.
  ASSERT_TRUE(
      testing::database_of(*store_).exec("UPDATE import_jobs SET lease_until = 0").has_value());
  runner.wake();
  for (int i = 0; i < 100; ++i) {
    auto job = store_->import_jobs().find(planned->id);
    if (job && *job && (*job)->state == schema::ImportState::kDone) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  runner.stop();
  auto done = store_->import_jobs().find(planned->id);
  ASSERT_TRUE(done.has_value() && done->has_value());
  EXPECT_EQ((*done)->state, schema::ImportState::kDone);
  EXPECT_EQ(*store_->read().node_count(), 6);
  EXPECT_NE((*done)->runner, "import 1 1");
}

TEST_F(ImportJobTest, AStoppedJobResumesWithNoDuplicateAndNoGap) {
  Outline tree;
  for (int i = 0; i < 1000; ++i) {
    tree.nodes.push_back({.parent = i % 10 == 0 ? -1 : static_cast<std::ptrdiff_t>(i - i % 10),
                          .text = std::to_string(i)});
  }
  const auto job = plan(tree);
  EXPECT_EQ(run(job.id, 2), 2);  // 400 of 1001 rows, then the "process" stops
  EXPECT_EQ((**store_->import_jobs().find(job.id)).done, 400);
  EXPECT_EQ(*store_->read().node_count(), 400);
  // A new connection (a restarted process) picks the job up where it was.
  store_.reset();
  auto reopened = schema::Store::open(dir_.file("index.db"));
  ASSERT_TRUE(reopened.has_value());
  store_ = std::move(*reopened);
  auto unfinished = store_->import_jobs().unfinished();
  ASSERT_EQ(unfinished->size(), 1u);
  run(job.id);
  EXPECT_EQ(*store_->read().node_count(), 1001);
  const Outline out = exported(job.root_rkey);
  ASSERT_EQ(out.nodes.size(), 1001u);
  EXPECT_EQ(shape(out, 1), shape(tree));
  EXPECT_TRUE(store_->import_jobs().unfinished()->empty());
}

TEST_F(ImportJobTest, ARecordOverTheLimitsRefusesThePlanAndWritesNothing) {
  Outline tree;
  tree.nodes.push_back({.parent = -1, .text = "fine"});
  tree.nodes.push_back({.parent = -1, .text = std::string(100'001, 'x')});
  auto job = plan_import(*store_, locks_, clock_, {kDid, std::nullopt}, tree);
  ASSERT_FALSE(job.has_value());
  EXPECT_EQ(job.error().code, ErrorCode::kInvalidRequest);
  EXPECT_NE(job.error().message.find("node 2"), std::string::npos) << job.error().message;
  EXPECT_TRUE(store_->import_jobs().unfinished()->empty());
  EXPECT_EQ(*store_->read().node_count(), 0);
}

TEST_F(ImportJobTest, ATextPastThePublishedLimitsLosesNothingAndTheReportNamesIt) {
  // Years of notes in one bullet: 18,000 bytes (bold at its start and at its
  // end), with a note.
  std::string text;
  for (int i = 0; i < 2'000; ++i) text += "word " + std::to_string(i % 10) + "...";
  const std::string note = "the note";
  Outline tree;
  tree.nodes.push_back({.parent = -1, .text = "short"});
  tree.nodes.push_back({.parent = -1, .text = text, .note = note});
  const std::size_t size = text.size();
  tree.nodes[1].facets = json::array({{{"index", {{"byteStart", 0}, {"byteEnd", 4}}},
                                       {"features", {{{"$type", "app.bulleted.format#bold"}}}}},
                                      {{"index", {{"byteStart", size - 4}, {"byteEnd", size}}},
                                       {"features", {{{"$type", "app.bulleted.format#bold"}}}}}});
  const auto job = plan(tree);
  const json errors = json::parse(job.errors_json);
  ASSERT_EQ(errors.size(), 1u) << errors.dump() << ": the long one alone is named";
  const std::string said = errors[0];
  EXPECT_NE(said.find("node 2 (\"word 0...word 1"), std::string::npos) << said;
  EXPECT_NE(said.find("text is longer than 10000 bytes"), std::string::npos) << said;
  EXPECT_NE(said.find("textRest"), std::string::npos) << said;
  run(job.id);
  // Every record written is within the published limits; the index and the
  // export have the whole text, with its formatting, and the whole note.
  auto top = store_->read().children({.did = kDid, .parent_rkey = job.root_rkey});
  ASSERT_TRUE(top.has_value());
  ASSERT_EQ(top->nodes.size(), 2u);
  auto row = store_->read().node(kDid, top->nodes[1].rkey);
  ASSERT_TRUE(row.has_value());
  const json record = json::parse(row->record_json);
  EXPECT_FALSE(schema::written_field_error("text", record["text"].get<std::string>()).has_value());
  EXPECT_EQ(record["text"].get<std::string>() + record["textRest"].get<std::string>(), text);
  EXPECT_EQ(row->text, text);
  auto note_record = store_->read().note_record(kDid, top->nodes[1].rkey);
  ASSERT_TRUE(note_record.has_value() && note_record->has_value());
  EXPECT_EQ((*note_record)->text, note);
  const Outline back = exported(job.root_rkey);
  ASSERT_EQ(back.nodes.size(), 3u);
  EXPECT_EQ(back.nodes[2].text, text);
  EXPECT_EQ(back.nodes[2].note, note);
  EXPECT_EQ(back.nodes[2].facets, tree.nodes[1].facets);
}

TEST_F(ImportJobTest, UnderAMissingParentNothingIsPlanned) {
  auto job =
      plan_import(*store_, locks_, clock_, {kDid, std::string("nosuchnode")}, fixture_outline());
  ASSERT_FALSE(job.has_value());
  EXPECT_EQ(job.error().code, ErrorCode::kNotFound);
  EXPECT_TRUE(store_->import_jobs().unfinished()->empty());
}

}  // namespace
}  // namespace bulleted::appview
