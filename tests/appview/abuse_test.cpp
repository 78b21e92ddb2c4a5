// What an anonymous or hostile client could do to the app view, each case at
// the level it lives: the JSON body reader, the client address behind
// proxies, the limits, the log, the import parsers, the exporter, facets,
// placement past the end, and cycles (admission: admission_test.cpp).
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>

#include "appview/http/client_address.hpp"
#include "appview/imports/import_jobs.hpp"
#include "appview/logging.hpp"
#include "appview/outline/from_index.hpp"
#include "appview/outline/outline.hpp"
#include "appview/write/writer.hpp"
#include "appview/xrpc/json_body.hpp"
#include "appview/xrpc/rate_limiter.hpp"
#include "appview/xrpc/views.hpp"
#include "schema/node_record.hpp"
#include "tests/support/index_fixture.hpp"
#include "tests/support/store_fixtures.hpp"
#include "tests/support/temp_dir.hpp"

namespace bulleted::appview {
namespace {

using nlohmann::json;

// ---- JSON bodies

TEST(JsonBodyTest, KeepsTopLevelScalarsAndOnlyTheKindOfNestedValues) {
  auto body = JsonBody::parse(
      R"({"repo":"did:plc:a","n":5,"ok":true,"none":null,"deep":{"x":[1,2,{"y":"z"}]},"list":[1],"repo":"did:plc:b"})");
  ASSERT_TRUE(body.has_value()) << body.error().message;
  EXPECT_EQ(*body->find("repo"), "did:plc:b") << "a repeated name keeps its last value";
  EXPECT_EQ(*body->find("n"), 5);
  EXPECT_EQ(*body->find("ok"), true);
  EXPECT_TRUE(body->find("none")->is_null());
  EXPECT_EQ(*body->find("deep"), json::object()) << "nested values are not kept";
  EXPECT_EQ(*body->find("list"), json::array());
  EXPECT_EQ(body->find("absent"), nullptr);
  EXPECT_EQ(body->take_string("repo"), "did:plc:b");
  EXPECT_FALSE(body->take_string("n").has_value());
}

TEST(JsonBodyTest, NestingPastTheLimitStopsTheParse) {
  // The abuse report's body, scaled down: {"x": followed by brackets.
  const std::string deep =
      "{\"x\":" + std::string(1'000'000, '[') + std::string(1'000'000, ']') + "}";
  auto body = JsonBody::parse(deep);
  ASSERT_FALSE(body.has_value());
  EXPECT_EQ(body.error().code, ErrorCode::kInvalidRequest);
  EXPECT_NE(body.error().message.find("deeper than 32 levels"), std::string::npos)
      << body.error().message;
  // Exactly at the limit is fine.
  const std::string at_limit = "{\"x\":" + std::string(31, '[') + std::string(31, ']') + "}";
  EXPECT_TRUE(JsonBody::parse(at_limit).has_value());
  const std::string past = "{\"x\":" + std::string(32, '[') + std::string(32, ']') + "}";
  EXPECT_FALSE(JsonBody::parse(past).has_value());
}

TEST(JsonBodyTest, RefusesWhatIsNotOneObject) {
  for (const char* text :
       {"[1,2]", "\"x\"", "5", "{not json", "{\"a\":1} {\"b\":2}", "", "{\"a\":"}) {
    auto body = JsonBody::parse(text);
    EXPECT_FALSE(body.has_value()) << text;
    if (!body) {
      EXPECT_EQ(body.error().code, ErrorCode::kInvalidRequest) << text;
    }
  }
}

// ---- client addresses

HttpRequestHead from(const std::string& peer, std::map<std::string, std::string> headers = {}) {
  HttpRequestHead head;
  head.remote = peer;
  head.headers = std::move(headers);
  return head;
}

TEST(TrustedProxiesTest, ForwardedHeadersCountOnlyFromATrustedPeer) {
  auto proxies = TrustedProxies::parse({"127.0.0.1", "10.0.0.0/8", "::1", "fd00::/8"});
  ASSERT_TRUE(proxies.has_value()) << proxies.error().message;
  // From the proxy: the rightmost address that is not a proxy.
  EXPECT_EQ(proxies->client_address(from("127.0.0.1", {{"x-forwarded-for", "203.0.113.9"}})),
            "203.0.113.9");
  EXPECT_EQ(proxies->client_address(
                from("127.0.0.1", {{"x-forwarded-for", "1.1.1.1, 198.51.100.7, 10.2.3.4"}})),
            "198.51.100.7")
      << "a client-sent first hop is not believed";
  EXPECT_EQ(proxies->client_address(from("10.9.9.9", {{"x-real-ip", "198.51.100.8"}})),
            "198.51.100.8");
  EXPECT_EQ(proxies->client_address(from("::1", {{"x-forwarded-for", "2001:db8::5"}})),
            "2001:db8::5");
  // From anyone else the headers are ignored: no choosing one's own bucket.
  EXPECT_EQ(proxies->client_address(from("198.51.100.1", {{"x-forwarded-for", "1.2.3.4"}})),
            "198.51.100.1");
  EXPECT_EQ(proxies->client_address(from("11.0.0.1", {{"x-real-ip", "1.2.3.4"}})), "11.0.0.1");
  // Garbage in the header stops the walk at the peer.
  EXPECT_EQ(proxies->client_address(from("127.0.0.1", {{"x-forwarded-for", "not-an-address"}})),
            "127.0.0.1");
  // Without trusted proxies nothing is believed.
  TrustedProxies none;
  EXPECT_EQ(none.client_address(from("127.0.0.1", {{"x-forwarded-for", "1.2.3.4"}})), "127.0.0.1");
  EXPECT_TRUE(proxies->contains("10.255.0.1"));
  EXPECT_FALSE(proxies->contains("11.0.0.1"));
  EXPECT_TRUE(proxies->contains("fd12::1"));
  EXPECT_FALSE(proxies->contains("fe80::1"));
  for (const char* bad : {"10.0.0.0/33", "nonsense", "1.2.3.4/x", "::1/129"}) {
    EXPECT_FALSE(TrustedProxies::parse({bad}).has_value()) << bad;
  }
}

// ---- limits

TEST(RateLimiterTest, ChargesPastTheBucketMakeTheClientWait) {
  RateLimiter bytes(6000);  // 100 a second
  const auto t0 = RateLimiter::Clock::now();
  EXPECT_FALSE(bytes.take("a", 1000, t0).has_value());
  bytes.charge("a", 20'000, t0);  // an answer far larger than what was left
  auto wait = bytes.take("a", 1000, t0);
  ASSERT_TRUE(wait.has_value());
  EXPECT_EQ(*wait, 160) << "15,000 in debt plus 1,000 at 100 a second";
  EXPECT_FALSE(bytes.take("b", 1000, t0).has_value()) << "another client";
  EXPECT_FALSE(bytes.take("a", 1000, t0 + std::chrono::seconds(160)).has_value());
}

TEST(LongRequestGateTest, OnePerClientAndATotal) {
  LongRequestGate gate(2);
  auto first = gate.enter("a");
  ASSERT_TRUE(std::holds_alternative<std::unique_ptr<LongRequestGate::Pass>>(first));
  auto again = gate.enter("a");
  ASSERT_TRUE(std::holds_alternative<LongRequestGate::Refusal>(again));
  EXPECT_EQ(std::get<LongRequestGate::Refusal>(again), LongRequestGate::Refusal::kClientBusy);
  auto second = gate.enter("b");
  ASSERT_TRUE(std::holds_alternative<std::unique_ptr<LongRequestGate::Pass>>(second));
  auto third = gate.enter("c");
  ASSERT_TRUE(std::holds_alternative<LongRequestGate::Refusal>(third));
  EXPECT_EQ(std::get<LongRequestGate::Refusal>(third), LongRequestGate::Refusal::kServerBusy);
  first = LongRequestGate::Refusal::kServerBusy;  // releases a's pass
  EXPECT_TRUE(std::holds_alternative<std::unique_ptr<LongRequestGate::Pass>>(gate.enter("c")));
}

// ---- the log

TEST(LogTest, RequestDataCannotForgeALine) {
  const std::string forged = std::string("GET /x\n2026-12-01T00:00:00.000Z error forged\r\t\\") +
                             std::string(1, '\0') + "\x1b[31m";
  for (const std::string format : {"text", "json"}) {
    std::ostringstream out;
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
    spdlog::logger logger("test", sink);
    logger.set_formatter(make_log_formatter(format));
    logger.info("request {} done", forged);
    logger.flush();
    const std::string line = out.str();
    EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1) << format << ": " << line;
    EXPECT_EQ(line.find('\0'), std::string::npos) << format;
    EXPECT_EQ(line.find('\x1b'), std::string::npos) << format;
    EXPECT_EQ(line.find('\r'), std::string::npos) << format;
    if (format == "json") {
      auto parsed = json::parse(line);
      EXPECT_EQ(parsed["msg"], "request " + forged + " done");
    } else {
      EXPECT_NE(line.find("GET /x\\n2026"), std::string::npos) << line;
      EXPECT_NE(line.find("\\x00\\x1b[31m"), std::string::npos) << line;
    }
  }
  EXPECT_EQ(escape_log_text("a\\b\x7f"), "a\\\\b\\x7f");
  EXPECT_EQ(escape_log_text("caf\xc3\xa9"), "caf\xc3\xa9") << "UTF-8 stays as it is";
}

// ---- import parsers

using outline::ImportLimits;
using outline::Outline;
using outline::read_outline;
using outline::walk_outline;

TEST(PlainTextTest, AByteOrderMarkIsSkipped) {
  auto parsed = outline::parse_plain_text("\xEF\xBB\xBF- first\n  - second\n", ImportLimits{});
  ASSERT_TRUE(parsed.has_value()) << parsed.error().message;
  ASSERT_EQ(parsed->nodes.size(), 2u);
  EXPECT_EQ(parsed->nodes[0].text, "first");
  EXPECT_EQ(parsed->nodes[1].parent, 0);
}

TEST(PlainTextTest, NoteLinesThatLookLikeBulletsComeBackAsNotes) {
  Outline tree;
  outline::OutlineNode a;
  a.text = "a bullet";
  a.note = "- not a bullet\n  - nor this\n\\ a backslash\n-\nplain";
  tree.nodes.push_back(a);
  outline::OutlineNode b;
  b.parent = 0;
  b.text = "child";
  b.note = "-x";
  tree.nodes.push_back(b);
  const std::string text = outline::write_plain_text(tree);
  auto again = outline::parse_plain_text(text, ImportLimits{});
  ASSERT_TRUE(again.has_value()) << again.error().message << "\n" << text;
  ASSERT_EQ(again->nodes.size(), 2u) << text;
  EXPECT_EQ(again->nodes[0].note, a.note) << text;
  EXPECT_EQ(again->nodes[1].note, b.note) << text;
  EXPECT_EQ(again->nodes[1].parent, 0);
}

TEST(PlainTextTest, ManyNoteLinesAreKeptInOrder) {
  std::string document = "- bullet\n";
  for (int i = 0; i < 100'000; ++i) document += "  line " + std::to_string(i) + "\n";
  auto parsed = outline::parse_plain_text(document, ImportLimits{});
  ASSERT_TRUE(parsed.has_value());
  ASSERT_EQ(parsed->nodes.size(), 1u);
  const std::string& note = *parsed->nodes[0].note;
  EXPECT_TRUE(note.starts_with("line 0\nline 1\n"));
  EXPECT_TRUE(note.ends_with("\nline 99999"));
  EXPECT_EQ(std::count(note.begin(), note.end(), '\n'), 99'999);
}

TEST(RichTextTest, HostileMarkupDecodesToItsText) {
  // Stray closing tags while many spans are open.
  std::string html;
  for (int i = 0; i < 20'000; ++i) html += "<b>";
  html += "x";
  for (int i = 0; i < 20'000; ++i) html += "</i>";
  auto rich = outline::decode_rich_text(html);
  EXPECT_EQ(rich.text, "x");
  ASSERT_TRUE(rich.facets.is_array());
  ASSERT_EQ(rich.facets.size(), 1u) << "the unclosed bolds merge into one facet";
  // Many '<' without '>' and many '&' without ';' stay text.
  const std::string lts(200'000, '<');
  EXPECT_EQ(outline::decode_rich_text(lts).text, lts);
  const std::string amps(200'000, '&');
  EXPECT_EQ(outline::decode_rich_text(amps).text, amps);
  EXPECT_EQ(outline::decode_rich_text("&amp;&lt;b&gt; &#x41;&#66;&bogus; &").text,
            "&<b> AB&bogus; &");
  // The innermost of equal tags closes first.
  auto nested = outline::decode_rich_text("<b>a<i>b<b>c</b>d</i>e</b>");
  EXPECT_EQ(nested.text, "abcde");
}

// ---- export

Outline chain(std::size_t depth) {
  Outline tree;
  for (std::size_t i = 0; i < depth; ++i) {
    outline::OutlineNode node;
    node.parent = static_cast<std::ptrdiff_t>(i) - 1;
    node.text = "n" + std::to_string(i);
    if (i % 100 == 0) node.note = "a note";
    tree.nodes.push_back(std::move(node));
  }
  return tree;
}

TEST(ExportTest, SizeIsLinearOnADeepChain) {
  const Outline tree = chain(20'000);
  const std::string opml = outline::write_opml(tree, "deep");
  const std::string text = outline::write_plain_text(tree);
  // A line of a node is its markup plus bounded indentation.
  EXPECT_LT(opml.size(), tree.nodes.size() * 200) << "OPML (a start and an end tag a node)";
  EXPECT_LT(text.size(), tree.nodes.size() * 220) << "text";
  // OPML keeps every level even where the indentation stops growing.
  ImportLimits limits;
  limits.max_depth = 30'000;
  auto back = outline::parse_opml(opml, limits);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  ASSERT_EQ(back->nodes.size(), tree.nodes.size());
  for (std::size_t i = 0; i < tree.nodes.size(); i += 997) {
    EXPECT_EQ(back->nodes[i].parent, tree.nodes[i].parent) << i;
    EXPECT_EQ(back->nodes[i].text, tree.nodes[i].text) << i;
  }
  // Plain text keeps the first kMaxTextLevels levels; deeper nodes sit at
  // the last of them.
  auto flat = outline::parse_plain_text(text, limits);
  ASSERT_TRUE(flat.has_value()) << flat.error().message;
  ASSERT_EQ(flat->nodes.size(), tree.nodes.size());
  const auto levels = outline::OutlineWriter::kMaxTextLevels;
  EXPECT_EQ(flat->nodes[levels].parent, static_cast<std::ptrdiff_t>(levels - 1));
  EXPECT_EQ(flat->nodes[levels + 5].parent, static_cast<std::ptrdiff_t>(levels - 1));
}

TEST(ExportTest, TheWriterSendsPiecesAsItGoes) {
  std::vector<std::size_t> pieces;
  outline::OutlineWriter writer(outline::Format::kOpml, "t",
                                [&](std::string_view piece) { pieces.push_back(piece.size()); });
  const Outline tree = chain(5'000);
  for (std::size_t i = 0; i < tree.nodes.size(); ++i)
    writer.node(tree.nodes[i], std::min(i, std::size_t{40}));
  EXPECT_GT(pieces.size(), 2u) << "flushed before the end";
  for (std::size_t size : pieces) EXPECT_LT(size, 200u * 1024);
  writer.finish();
}

// ---- facets

TEST(FacetTest, OnlyValidFacetsAreKept) {
  const std::string text = "h\xc3\xa9llo world";  // é is two bytes (1..3)
  auto facet = [](std::int64_t start, std::int64_t end, json feature) {
    return json{{"index", {{"byteStart", start}, {"byteEnd", end}}},
                {"features", json::array({std::move(feature)})}};
  };
  const json bold = {{"$type", "app.bulleted.node#bold"}};
  const json cases = json::array({
      facet(0, 5, bold),   // kept
      facet(0, 2, bold),   // mid-character
      facet(5, 5, bold),   // empty
      facet(3, 99, bold),  // past the text
      facet(-1, 3, bold),  // negative
      facet(6, 11, {{"$type", "app.bulleted.node#link"}, {"uri", "javascript:alert(1)"}}),
      facet(6, 11, {{"$type", "app.bulleted.node#link"}, {"uri", "HTTPS://example.com/"}}),  // kept
      facet(6, 11, {{"$type", "app.bulleted.node#link"}, {"uri", "mailto:a@example.com"}}),  // kept
      facet(6, 11, {{"$type", "app.bulleted.node#link"}, {"uri", "data:text/html,x"}}),
      facet(0, 1, {{"$type", "app.bulleted.node#highlight"}, {"color", std::string(65, 'r')}}),
      facet(0, 1,
            {{"$type", "app.bulleted.node#highlight"},
             {"color", "red"},
             {"extra", std::string(1000, 'x')}}),  // kept, trimmed
      facet(0, 1, {{"$type", "app.bulleted.node#blink"}}),
      json("not an object"),
  });
  std::vector<std::string> problems;
  const json kept = schema::sanitize_facets(text, cases, &problems);
  ASSERT_TRUE(kept.is_array());
  ASSERT_EQ(kept.size(), 4u) << kept.dump();
  EXPECT_EQ(kept[0], facet(0, 5, bold));
  EXPECT_EQ(kept[1]["features"][0]["uri"], "HTTPS://example.com/");
  EXPECT_EQ(kept[2]["features"][0]["uri"], "mailto:a@example.com");
  EXPECT_EQ(kept[3]["features"][0],
            json({{"$type", "app.bulleted.node#highlight"}, {"color", "red"}}));
  EXPECT_EQ(problems.size(), 9u);
  // Bounded in count and in bytes, whatever arrives.
  json many = json::array();
  for (int i = 0; i < 5'000; ++i) many.push_back(facet(0, 1, bold));
  const json bounded = schema::sanitize_facets(text, many);
  EXPECT_LE(bounded.size(), schema::kMaxFacets);
  EXPECT_LE(bounded.dump().size(), schema::kMaxFacetBytes);
  EXPECT_TRUE(schema::sanitize_facets(text, json::array({json(5)})).is_null());
}

TEST(FacetTest, ARecordFromTheNetworkKeepsItsTextWithoutItsBadFacets) {
  json record = {
      {"$type", "app.bulleted.node"},
      {"text", "click"},
      {"sortKey", "a0"},
      {"createdAt", "2026-12-01T00:00:00.000Z"},
      {"facets", json::array({{{"index", {{"byteStart", 0}, {"byteEnd", 5}}},
                               {"features", json::array({{{"$type", "app.bulleted.node#link"},
                                                          {"uri", "javascript:x"}}})}}})}};
  auto parsed = schema::parse_node_record(record);
  ASSERT_TRUE(parsed.has_value()) << parsed.error();
  EXPECT_EQ(parsed->text, "click");
  EXPECT_TRUE(parsed->facets.is_null());
  EXPECT_EQ(schema::to_json_text(*parsed).find("javascript"), std::string::npos);
}

// ---- against a real index

class IndexAbuseTest : public testing::IndexTest {
 protected:
  std::string create(const NeighbourIntent& intent, const std::string& text) {
    LocalSink sink(clock_);
    Writer writer(locks_, clock_, sink);
    auto made = writer.create(*store_, kDid, intent, NodeFields{text, std::nullopt, std::nullopt});
    EXPECT_TRUE(made.has_value()) << made.error().message;
    return made ? made->rkey : std::string();
  }
  std::vector<std::string> top_texts() {
    auto page = store_->children({.did = kDid, .limit = 1000});
    std::vector<std::string> out;
    for (const auto& row : page->nodes) out.push_back(row.text);
    return out;
  }
  // A chain of `depth` nodes, each the only child of the one before (rkeys
  // c0, c1, ...), written straight to the index.
  void build_chain(std::size_t depth) {
    std::vector<schema::RecordOp> ops;
    for (std::size_t i = 0; i < depth; ++i) {
      testing::NodeSpec spec{.did = kDid, .rkey = "c" + std::to_string(i)};
      if (i > 0) spec.parent_rkey = "c" + std::to_string(i - 1);
      ops.push_back(testing::upsert(spec));
    }
    apply(std::move(ops));
  }

  const std::string kDid = "did:plc:alice";
  GroupLocks locks_;
  ordering::TidClock clock_;
};

TEST_F(IndexAbuseTest, AnIndexPastTheEndMeansLast) {
  create({}, "one");
  create({}, "two");
  NeighbourIntent past;
  past.position = "5";
  create(past, "past the end");
  NeighbourIntent huge;
  huge.position = "9223372036854775807";
  create(huge, "largest index");
  NeighbourIntent larger;
  larger.position = "99999999999999999999999";
  create(larger, "beyond any integer");
  NeighbourIntent exact;
  exact.position = "1";
  create(exact, "second");
  EXPECT_EQ(top_texts(), (std::vector<std::string>{"one", "second", "two", "past the end",
                                                   "largest index", "beyond any integer"}));
}

TEST_F(IndexAbuseTest, AMoveIsRefusedUnlessTheWalkProvesThereIsNoCycle) {
  const std::size_t depth = schema::Store::kMaxAncestors + 10;
  build_chain(depth);
  LocalSink sink(clock_);
  Writer writer(locks_, clock_, sink);
  NeighbourIntent under_bottom;
  under_bottom.parent_rkey = "c" + std::to_string(depth - 1);
  auto moved = writer.move(*store_, kDid, "c0", under_bottom);
  ASSERT_FALSE(moved.has_value()) << "the top of the chain moved under its bottom";
  EXPECT_EQ(moved.error().code, ErrorCode::kWouldCycle);
  EXPECT_EQ(store_->node(kDid, "c0")->group, schema::root_group(kDid)) << "nothing changed";
  // Moving a node under a shallow part of the chain is still fine.
  create({}, "free");
  auto free = store_->children({.did = kDid, .limit = 10})->nodes;
  std::string free_rkey;
  for (const auto& row : free) {
    if (row.text == "free") free_rkey = row.rkey;
  }
  NeighbourIntent under_c5;
  under_c5.parent_rkey = "c5";
  EXPECT_TRUE(writer.move(*store_, kDid, free_rkey, under_c5).has_value());
}

TEST_F(IndexAbuseTest, CheckCountsNodesInCycles) {
  build_chain(50);
  auto clean = store_->integrity_report();
  ASSERT_TRUE(clean.has_value()) << clean.error().message;
  EXPECT_EQ(clean->in_cycles, 0);
  // Records written around the app view: c0 under c49 closes the circle; a
  // node under a missing parent is dangling, not a cycle.
  apply({testing::upsert({.did = kDid, .rkey = "c0", .parent_rkey = "c49", .rev = 2}),
         testing::upsert({.did = kDid, .rkey = "orphan", .parent_rkey = "missing"})});
  auto report = store_->integrity_report();
  ASSERT_TRUE(report.has_value()) << report.error().message;
  EXPECT_EQ(report->in_cycles, 50);
  EXPECT_EQ(report->dangling, 1);
}

TEST_F(IndexAbuseTest, ASubtreeAnswerStaysWithinItsBudget) {
  std::vector<schema::RecordOp> ops;
  for (int i = 0; i < 200; ++i) {
    testing::NodeSpec spec{.did = kDid, .rkey = "n" + std::to_string(1000 + i)};
    spec.text = std::string(3000, 'x');
    ops.push_back(testing::upsert(spec));
  }
  apply(std::move(ops));
  for (std::size_t budget : {std::size_t{4096}, std::size_t{65536}, std::size_t{300'000}}) {
    auto tree = store_->subtree({.did = kDid, .depth = 4, .budget_bytes = budget});
    ASSERT_TRUE(tree.has_value());
    const std::string sent = subtree_view(*tree).dump();
    EXPECT_LE(sent.size(), budget) << "budget " << budget;
    EXPECT_GT(sent.size(), budget / 2) << "budget " << budget << " mostly used";
  }
}

TEST_F(IndexAbuseTest, AnImportDropsInvalidFacetsAndListsThem) {
  Outline tree;
  outline::OutlineNode node;
  node.text = "click me";
  node.facets = json::array({{{"index", {{"byteStart", 0}, {"byteEnd", 5}}},
                              {"features", json::array({{{"$type", "app.bulleted.node#link"},
                                                         {"uri", "javascript:alert(1)"}}})}},
                             {{"index", {{"byteStart", 6}, {"byteEnd", 8}}},
                              {"features", json::array({{{"$type", "app.bulleted.node#bold"}}})}}});
  tree.nodes.push_back(node);
  auto job = plan_import(*store_, locks_, clock_, {kDid, std::nullopt}, tree);
  ASSERT_TRUE(job.has_value()) << job.error().message;
  const json errors = json::parse(job->errors_json);
  ASSERT_EQ(errors.size(), 1u) << errors.dump();
  EXPECT_NE(errors[0].get<std::string>().find("node 1: facet 1 dropped"), std::string::npos)
      << errors.dump();
  LocalSink sink(clock_);
  while (true) {
    auto ran = run_import_batch(*store_, sink, job->id, true);
    ASSERT_TRUE(ran.has_value());
    if (ran->state != schema::ImportState::kRunning) break;
  }
  auto imported = read_outline(*store_, kDid, job->root_rkey, 10);
  ASSERT_TRUE(imported.has_value());
  ASSERT_EQ(imported->nodes.size(), 2u);
  EXPECT_EQ(imported->nodes[1].text, "click me") << "the text is kept";
  ASSERT_TRUE(imported->nodes[1].facets.is_array());
  ASSERT_EQ(imported->nodes[1].facets.size(), 1u);
  EXPECT_EQ(imported->nodes[1].facets[0]["features"][0]["$type"], "app.bulleted.node#bold");
}

TEST_F(IndexAbuseTest, TheExportWalkReadsPagesNotTheOutline) {
  build_chain(3'000);
  std::size_t visited = 0;
  std::size_t deepest = 0;
  auto walked = walk_outline(*store_, kDid, std::nullopt,
                             [&](const outline::OutlineNode&, std::size_t depth) {
                               ++visited;
                               deepest = std::max(deepest, depth);
                               return visited < 2'000;  // the client went away
                             });
  ASSERT_TRUE(walked.has_value());
  EXPECT_EQ(visited, 2'000u) << "stopped when asked";
  EXPECT_EQ(deepest, 1'999u);
}

}  // namespace
}  // namespace bulleted::appview
