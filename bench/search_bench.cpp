// Search in process (Reader::search, ancestors and highlights included,
// without JSON) over one outline of MAIN bullets (default 1,000,000) in one
// repo, in an index that also holds OTHERS bullets (default 3,000,000) in
// REPOS other repos (default 1,000). Texts are drawn with a Zipf
// distribution from a word list (Debian's wamerican), with notes, tags,
// completed bullets and some CJK text; the outline has the depth and
// fan-out of a real account and one group of 100,000 siblings.
//
// Prints: the time to write the index; the index's size on disk against
// the texts' bytes; for each query and sort, p50, p99 and the slowest of
// REPS runs (default 200: a p99 of fewer is the slowest run), the results
// and whether the page was cut by its budget; then the floor of any answer
// from the index, measured as FlexSearch is (the first 25 ids). With
// --export FILE it also writes the main outline's texts (one JSON array per
// line: id, text, note) and the queries, for bench/js/flexsearch_bench.mjs.
//
// Usage: search_bench [--main N] [--others N] [--repos N] [--reps N]
//                     [--db PATH] [--reuse] [--export FILE] [--words FILE]
//                     [--only NAME-PART] [--sort relevance|outline|recent]
//                     [--outline]
// --outline times app.bulleted.getOutline's walk (depth 5, limit 100) on the
// main outline instead of the searches: from its top level and zoomed into
// bullets drawn at random, --reps of each, with the percentiles.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "bench/scratch_index.hpp"
#include "schema/search_index.hpp"
#include "schema/search_query.hpp"
#include "schema/sqlite.hpp"
#include "schema/store.hpp"
#include "schema/syntax.hpp"
#include "tests/support/store_internals.hpp"

namespace {

using namespace bulleted;
using Clock = std::chrono::steady_clock;

// The process's resident memory, in MB.
double resident_mb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("VmRSS:")) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Options {
  long main = 1'000'000;
  long others = 3'000'000;
  long repos = 1'000;
  int reps = 200;
  std::string db = "/tmp/bulleted-search-bench.db";
  bool reuse = false;
  std::string exported;
  std::string words = "/usr/share/dict/words";
  std::string only;  // run only the queries whose name contains this
  std::string sort;  // and only this sort
  bool outline = false;
};

// Words ranked by a fixed shuffle, drawn with Zipf's law (s = 1).
class Words {
 public:
  explicit Words(const std::string& path) {
    std::ifstream in(path);
    std::string word;
    while (std::getline(in, word)) {
      if (word.size() < 2 || word.size() > 14) continue;
      if (!std::all_of(word.begin(), word.end(), [](char c) { return c >= 'a' && c <= 'z'; }))
        continue;
      list_.push_back(word);
    }
    if (list_.empty()) {
      std::fprintf(stderr, "no words in %s (apt-get install wamerican)\n", path.c_str());
      std::exit(1);
    }
    std::mt19937 shuffle(7);
    std::shuffle(list_.begin(), list_.end(), shuffle);
    cumulative_.reserve(list_.size());
    double total = 0;
    for (std::size_t r = 0; r < list_.size(); ++r)
      cumulative_.push_back(total += 1.0 / double(r + 1));
  }
  const std::string& draw(std::mt19937& random) const {
    const double at = std::uniform_real_distribution<double>(0, cumulative_.back())(random);
    const auto it = std::lower_bound(cumulative_.begin(), cumulative_.end(), at);
    return list_[static_cast<std::size_t>(it - cumulative_.begin())];
  }
  std::size_t size() const { return list_.size(); }

 private:
  std::vector<std::string> list_;
  std::vector<double> cumulative_;
};

const char* const kCjk[] = {"東", "京", "日", "本", "語", "会", "議", "資", "料", "の",
                            "を", "に", "タ", "ワ", "ー", "한", "국", "어", "学", "校"};
const char* const kTags[] = {"#work",  "#home", "#idea",   "#todo",  "#read",    "#project",
                             "@alice", "@bob",  "#urgent", "#later", "#someday", "#errand"};

struct Generator {
  const Words& words;
  std::mt19937 random;
  std::map<std::string, long>* frequency = nullptr;  // of words, per bullet (main repo)

  std::string sentence(int low, int high) {
    const int n = std::uniform_int_distribution<int>(low, high)(random);
    std::string out;
    std::set<std::string> seen;
    for (int i = 0; i < n; ++i) {
      const std::string& w = words.draw(random);
      if (!out.empty()) out += ' ';
      out += w;
      seen.insert(w);
    }
    if (frequency) {
      for (const auto& w : seen) ++(*frequency)[w];
    }
    return out;
  }
  schema::RecordOp op(const std::string& did, const std::string& rkey,
                      const std::optional<std::string>& parent) {
    schema::NodeRecord record;
    std::uniform_real_distribution<double> p(0, 1);
    record.text = sentence(3, 12);
    if (p(random) < 0.02) {
      std::string cjk;
      const int n = std::uniform_int_distribution<int>(3, 10)(random);
      for (int i = 0; i < n; ++i) cjk += kCjk[random() % std::size(kCjk)];
      record.text = cjk + " " + record.text;
    }
    if (p(random) < 0.08) {
      // Tags: the first ones far more often (rank r with weight 1/r).
      const double at = p(random) * 3.1;
      std::size_t r = 0;
      for (double sum = 1; sum < at && r + 1 < std::size(kTags); sum += 1.0 / double(r + 2)) ++r;
      record.text += std::string(" ") + kTags[r];
    }
    if (p(random) < 0.2) {
      if (frequency) {
        auto* keep = frequency;
        frequency = nullptr;
        record.note = sentence(5, 20);
        frequency = keep;
      } else {
        record.note = sentence(5, 20);
      }
    }
    record.completed = p(random) < 0.1;
    record.created_at = "2026-11-30T12:00:00.000Z";
    if (parent) record.parent = schema::record_uri(did, schema::kNodeCollection, *parent);
    record.sort_key = "a0";
    record.sort_key_valid = true;
    schema::RecordOp op;
    op.did = did;
    op.rkey = rkey;
    op.rev = "3kaaaaaaaaa22";
    op.cid = "bafyreib" + rkey;
    op.record = std::move(record);
    return op;
  }
};

std::string rkey_of(long n) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "n%09ld", n);
  return buf;
}

// One outline of `count` bullets: a folder of 100,000 siblings (when the
// outline is large enough), a 1,000-bullet project (20 of 50), and the
// rest a tree of at most eight levels, most bullets two to five deep, each
// written under one of the bullets written last at the level above (as an
// account grows: lists under recent headings).
void write_outline(schema::Store& store, Generator& gen, const std::string& did, long count,
                   std::vector<std::string>* roots) {
  schema::ApplyBatch batch;
  auto push = [&](schema::RecordOp op) {
    batch.ops.push_back(std::move(op));
    if (batch.ops.size() >= 20'000) {
      if (!store.apply(batch)) std::exit(1);
      batch.ops.clear();
    }
  };
  long n = 0;
  if (count >= 200'000) {
    const std::string inbox = rkey_of(n++);
    push(gen.op(did, inbox, std::nullopt));
    for (long i = 0; i < 100'000; ++i) push(gen.op(did, rkey_of(n++), inbox));
  }
  if (count >= 5'000) {
    const std::string project = rkey_of(n++);
    if (roots) roots->push_back(project);
    push(gen.op(did, project, std::nullopt));
    for (int a = 0; a < 20; ++a) {
      const std::string part = rkey_of(n++);
      push(gen.op(did, part, project));
      for (int b = 0; b < 49; ++b) push(gen.op(did, rkey_of(n++), part));
    }
  }
  // recent[d]: bullets written last at depth d (0: the top level).
  std::vector<std::vector<std::string>> recent(8);
  const double depth_weights[] = {1, 6, 10, 9, 6, 3, 1.5, 0.5};
  std::discrete_distribution<int> depth_of(std::begin(depth_weights), std::end(depth_weights));
  while (n < count) {
    const std::string rkey = rkey_of(n++);
    int depth = depth_of(gen.random);
    while (depth > 0 && recent[static_cast<std::size_t>(depth - 1)].empty()) --depth;
    std::optional<std::string> parent;
    if (depth > 0) {
      const auto& above = recent[static_cast<std::size_t>(depth - 1)];
      parent = above[gen.random() % above.size()];
    }
    push(gen.op(did, rkey, parent));
    auto& level = recent[static_cast<std::size_t>(depth)];
    if (level.size() < 16) {
      level.push_back(rkey);
    } else {
      level[gen.random() % level.size()] = rkey;
    }
  }
  if (!batch.ops.empty() && !store.apply(batch)) std::exit(1);
}

struct Query {
  std::string name;
  std::string q;
  std::optional<std::string> root;
};

// The floor of any answer from FTS5, measured as FlexSearch is: the first
// 25 ids of the query's own tokens (a last word as the whole word, not
// named as a prefix; the letter prefixes as FTS5's prefix query), one read
// transaction and one statement, nothing read from the rows. Prints p50,
// p99 and the slowest of `reps` runs, in microseconds, after one warm-up.
void index_floor(schema::Database& db, const std::string& did, const std::vector<Query>& queries,
                 const std::vector<std::string>& names, const std::string& only, int reps) {
  auto code = schema::find_repo_code(db, did);
  if (!code || !*code) std::exit(1);
  for (const auto& query : queries) {
    if (std::find(names.begin(), names.end(), query.name) == names.end() ||
        query.name.find(only) == std::string::npos)
      continue;
    auto parsed = schema::parse_search_query(query.q);
    if (!parsed) std::exit(1);
    schema::PrefixTokens named;  // a word's own token; the prefix row keeps FTS5's prefix query
    if (!query.name.ends_with("letter prefix")) {
      for (auto& token : schema::prefix_tokens(*parsed, **code)) named[token] = {token};
    }
    const auto expression = schema::fts_expression(*parsed, **code, nullptr, &named);
    if (!expression) std::exit(1);
    std::vector<double> us;
    std::size_t ids = 0;
    for (int r = -1; r < reps; ++r) {
      const auto t0 = Clock::now();
      auto tx = schema::Transaction::begin(db, schema::Transaction::Kind::kRead);
      auto stmt = db.prepare("SELECT rowid FROM search_fts WHERE search_fts MATCH ?1 LIMIT 25");
      if (!tx || !stmt) std::exit(1);
      (*stmt)->bind_view(1, *expression);
      ids = 0;
      while (true) {
        auto row = (*stmt)->step();
        if (!row) std::exit(1);
        if (!*row) break;
        ++ids;
      }
      (*stmt)->reset();
      if (!tx->commit()) std::exit(1);
      if (r >= 0) us.push_back(since(t0) * 1e6);
    }
    std::sort(us.begin(), us.end());
    const auto at = [&](double q) {
      return us[std::min(us.size() - 1, static_cast<std::size_t>(q * us.size()))];
    };
    std::printf(
        "index alone (first 25 ids): %-30s p50 %.1f us  p99 %.1f us  max %.1f us  (%zu ids)\n",
        query.name.c_str(), at(0.5), at(0.99), us.back(), ids);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--main")
      o.main = std::stol(next());
    else if (a == "--others")
      o.others = std::stol(next());
    else if (a == "--repos")
      o.repos = std::stol(next());
    else if (a == "--reps")
      o.reps = std::stoi(next());
    else if (a == "--db")
      o.db = next();
    else if (a == "--reuse")
      o.reuse = true;
    else if (a == "--export")
      o.exported = next();
    else if (a == "--words")
      o.words = next();
    else if (a == "--only")
      o.only = next();
    else if (a == "--sort")
      o.sort = next();
    else if (a == "--outline")
      o.outline = true;
  }
  const Words words(o.words);
  const std::string main_did = "did:plc:searchbenchmain0000000";
  std::map<std::string, long> frequency;
  std::vector<std::string> roots;
  if (!o.reuse) {
    bench::remove_index(o.db);
    auto store = schema::Store::open(o.db);
    if (!store) return 1;
    const auto t0 = Clock::now();
    Generator gen{words, std::mt19937(1), &frequency};
    write_outline(**store, gen, main_did, o.main, &roots);
    const double main_seconds = since(t0);
    gen.frequency = nullptr;
    const auto t1 = Clock::now();
    for (long r = 0; r < o.repos; ++r) {
      char did[64];
      std::snprintf(did, sizeof did, "did:plc:searchbenchother%06ld", r);
      write_outline(**store, gen, did, o.others / std::max(1L, o.repos), nullptr);
    }
    std::printf("index written: %ld bullets in %.1f s, %ld in %ld other repos in %.1f s\n", o.main,
                main_seconds, o.others, o.repos, since(t1));
    nlohmann::json meta = {{"roots", roots}, {"frequency", frequency}};
    std::ofstream(o.db + ".meta.json") << meta.dump();
  } else {
    auto meta = nlohmann::json::parse(std::ifstream(o.db + ".meta.json"));
    roots = meta["roots"].get<std::vector<std::string>>();
    frequency = meta["frequency"].get<std::map<std::string, long>>();
  }
  auto opened = schema::Store::open(o.db);
  if (!opened) return 1;
  schema::Store& store = **opened;
  auto& db = testing::database_of(store);
  // Size on disk: the index's own tables against the texts they index.
  auto bytes = [&](const char* sql) {
    auto v = schema::query_value<std::int64_t>(db, sql);
    return v && *v ? **v : -1;
  };
  const auto index_bytes = bytes(
      "SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'search%' OR name = "
      "'sqlite_autoindex_search_codes_1'");
  const auto text_bytes = bytes(
      "SELECT sum(length(CAST(text AS BLOB)) + coalesce(length(CAST(note AS BLOB)), 0)) FROM "
      "nodes");
  const auto node_bytes = bytes("SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'nodes%'");
  std::printf(
      "index on disk: %.1f MB for %.1f MB of text and notes (%.0f%%); the node rows take %.1f MB\n",
      index_bytes / 1e6, text_bytes / 1e6, 100.0 * double(index_bytes) / double(text_bytes),
      node_bytes / 1e6);

  if (o.outline) {
    // Bullets to zoom into: drawn from the main outline's, each with
    // children (a zoom into a leaf reads nothing).
    std::vector<std::string> zooms;
    {
      auto stmt = db.prepare(
          "SELECT rkey FROM nodes WHERE did = ?1 AND rowid % 997 = 0 AND EXISTS (SELECT 1"
          " FROM group_counts g WHERE g.grp = 'at://' || nodes.did || '/app.bulleted.node/' ||"
          " nodes.rkey AND g.n > 0) LIMIT 2000");
      if (!stmt) return 1;
      (*stmt)->bind(1, main_did);
      while (true) {
        auto row = (*stmt)->step();
        if (!row || !*row) break;
        zooms.push_back((*stmt)->text(0));
      }
    }
    std::mt19937 pick(7);
    for (const bool zoomed : {false, true}) {
      if (zoomed && zooms.empty()) continue;
      std::vector<double> ms;
      std::size_t rows = 0;
      for (int rep = 0; rep < o.reps; ++rep) {
        schema::OutlineQuery query{.did = main_did, .depth = 5, .limit = 100};
        if (zoomed) query.root_rkey = zooms[pick() % zooms.size()];
        const auto start = Clock::now();
        auto page = store.read().outline(query);
        ms.push_back(since(start) * 1000);
        if (!page) return 1;
        rows += page->nodes.size();
      }
      std::sort(ms.begin(), ms.end());
      auto at = [&](double q) { return ms[std::min(ms.size() - 1, std::size_t(q * ms.size()))]; };
      std::printf(
          "getOutline's walk, depth 5, limit 100, %s: %d walks, %.1f rows each, p50 %.3f ms,"
          " p99 %.3f ms, max %.3f ms\n",
          zoomed ? "zoomed into a bullet with children" : "the top level", o.reps,
          double(rows) / o.reps, at(0.5), at(0.99), ms.back());
    }
    return 0;
  }

  // The queries: words picked by how many bullets of the main outline hold them.
  auto word_near = [&](long want) {
    std::string best;
    long gap = -1;
    for (const auto& [w, n] : frequency) {
      const long g = std::labs(n - want);
      if (gap < 0 || g < gap) gap = g, best = w;
    }
    return best;
  };
  const std::string rare = word_near(8);
  const std::string common = word_near(100'000);
  const std::string and_a = word_near(20'000), and_b = word_near(15'000);
  const std::string mid = word_near(40'000), mid2 = word_near(30'000);
  const std::vector<Query> queries = {
      {"rare word", rare, std::nullopt},
      {"common word (~100k bullets)", common, std::nullopt},
      {"two-word AND", and_a + " " + and_b, std::nullopt},
      {"phrase", "\"" + mid + " " + mid2 + "\"", std::nullopt},
      {"tag", "#project", std::nullopt},
      {"two-letter prefix", common.substr(0, 2), std::nullopt},
      {"one-letter prefix", common.substr(0, 1), std::nullopt},
      {"rare word and a one-letter prefix", rare + " " + common.substr(0, 1), std::nullopt},
      {"common word in a 1,000-bullet subtree", common,
       roots.empty() ? std::nullopt : std::optional(roots[0])},
      // The folder is the outline's first bullet (write_outline).
      {"common word in the 100,000-sibling folder", common,
       o.main >= 200'000 ? std::optional(rkey_of(0)) : std::nullopt},
  };
  if (!o.exported.empty()) {
    std::ofstream out(o.exported);
    nlohmann::json header = nlohmann::json::object();
    for (const auto& q : queries) header[q.name] = q.q;
    out << header.dump() << "\n";
    auto stmt = db.prepare("SELECT rowid, text, coalesce(note, '') FROM nodes WHERE did = ?1");
    if (!stmt) return 1;
    (*stmt)->bind(1, main_did);
    while (true) {
      auto row = (*stmt)->step();
      if (!row || !*row) break;
      out << nlohmann::json::array({(*stmt)->integer(0), (*stmt)->text(1), (*stmt)->text(2)}).dump()
          << "\n";
    }
  }
  auto request_of = [&](const Query& query, schema::SearchSort sort) {
    schema::SearchRequest request;
    request.did = main_did;
    request.q = query.q;
    auto parsed = schema::parse_search_query(query.q);
    if (!parsed) {
      std::fprintf(stderr, "%s: %s\n", query.name.c_str(), parsed.error().message.c_str());
      std::exit(1);
    }
    request.query = std::move(*parsed);
    request.root_rkey = query.root;
    request.sort = sort;
    request.now_ms = 1'800'000'000'000;
    return request;
  };
  constexpr schema::SearchSort kSorts[] = {
      schema::SearchSort::kRelevance, schema::SearchSort::kOutline, schema::SearchSort::kRecent};
  const double rss_opened = resident_mb();
  // Warm-up: every query once (the page cache fills as it would in a
  // server that has been answering for a while).
  for (const auto& query : queries) {
    for (const auto sort : kSorts) {
      if (auto page = store.read().search(request_of(query, sort)); !page) {
        std::fprintf(stderr, "%s: %s\n", query.name.c_str(), page.error().message.c_str());
        return 1;
      }
    }
  }
  const double rss_before = resident_mb();
  std::printf("%-40s %-9s %9s %9s %9s %8s %10s %s\n", "query", "sort", "p50 ms", "p99 ms", "max ms",
              "results", "rows", "budget-cut");
  for (const auto& query : queries) {
    if (query.name.find(o.only) == std::string::npos) continue;
    for (const auto sort : kSorts) {
      if (!o.sort.empty() && o.sort != schema::to_string(sort)) continue;
      const schema::SearchRequest request = request_of(query, sort);
      std::vector<double> ms;
      std::size_t results = 0;
      bool cut = false;
      std::size_t rows = 0;
      for (int r = 0; r < o.reps; ++r) {
        const auto t0 = Clock::now();
        auto page = store.read().search(request);
        ms.push_back(since(t0) * 1000);
        if (!page) {
          std::fprintf(stderr, "%s: %s\n", query.name.c_str(), page.error().message.c_str());
          return 1;
        }
        results = page->results.size();
        cut = page->budget_cut;
        rows = page->rows_examined;
      }
      std::sort(ms.begin(), ms.end());
      const auto at = [&](double q) {
        return ms[std::min(ms.size() - 1, static_cast<std::size_t>(q * ms.size()))];
      };
      std::printf("%-40s %-9s %9.2f %9.2f %9.2f %8zu %10zu %s\n", query.name.c_str(),
                  std::string(schema::to_string(sort)).c_str(), at(0.5), at(0.99), ms.back(),
                  results, rows, cut ? "yes" : "no");
    }
  }
  const double rss_after = resident_mb();
  std::printf(
      "resident memory: %.0f MB opened, %.0f MB after a warm-up run of every query, %.0f MB after "
      "the measured runs: %+.0f MB after warm-up (one connection's page cache is at most 32 MB)\n",
      rss_opened, rss_before, rss_after, rss_after - rss_before);
  index_floor(db, main_did, queries,
              {"rare word", "common word (~100k bullets)", "two-word AND", "two-letter prefix",
               "one-letter prefix"},
              o.only, o.reps);
  std::printf("queries: rare=%s common=%s (%ld bullets) and=%s+%s phrase=%s %s\n", rare.c_str(),
              common.c_str(), frequency[common], and_a.c_str(), and_b.c_str(), mid.c_str(),
              mid2.c_str());
  return 0;
}
