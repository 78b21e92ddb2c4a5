// Cost growth of the read and write paths: each request of the serving-cost
// table at 1x, 10x and 100x the sizes it could depend on (groups of 1,000 /
// 10,000 / 100,000 siblings; children holding 10 / 100 / 1,000 children),
// in one index, so that what is flat shows flat. Each figure is the median
// (and p90) of the request's work in process: the store's read transaction
// and the answer's JSON (reads), or the whole write path in local mode
// (createNode: group lock, placement, record, CID, transaction).
//
// Usage: cost_growth [--reps N] [--svg FILE] [--only NAME] [--keep] [DB_PATH]
// (--only: the rows whose request starts with NAME; --keep: leave the index)
// Prints a table; with --svg, draws it (one line a request, x the size).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "appview/write/writer.hpp"
#include "appview/xrpc/views.hpp"
#include "bench/node_ops.hpp"
#include "bench/scratch_index.hpp"
#include "ordering/order_key.hpp"
#include "ordering/random_source.hpp"
#include "ordering/tid.hpp"
#include "schema/store.hpp"
#include "schema/syntax.hpp"

namespace {

using namespace bulleted;
using Clock = std::chrono::steady_clock;

const std::string kDid = "did:plc:costgrowth00000000000000";
const std::int64_t kScales[] = {1, 10, 100};

struct Figure {
  double median_us = 0;
  double p90_us = 0;
};

struct Row {
  std::string name;
  std::string sizes;  // what 1x/10x/100x are
  Figure at[3];
};

Figure measure(int reps, const std::function<void(int)>& once) {
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(reps));
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    once(i);
    samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  std::sort(samples.begin(), samples.end());
  return {samples[samples.size() / 2], samples[samples.size() * 9 / 10]};
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "cost_growth: %s\n", what.c_str());
  std::exit(1);
}

template <class T>
T must(Result<T> result, const char* what) {
  if (!result) die(std::string(what) + ": " + result.error().message);
  return std::move(*result);
}

// Adds `count` children under `parent` (nullopt: top level), rkeys
// prefix + number, in batches of 5,000.
void add_children(schema::Store& store, const std::optional<std::string>& parent,
                  const std::string& prefix, std::int64_t count) {
  auto jitter = ordering::Mulberry32::from_seed(static_cast<std::uint32_t>(count));
  auto made =
      ordering::n_between(std::nullopt, std::nullopt, static_cast<std::size_t>(count), jitter);
  if (!made) die("keys");
  const auto& keys = *made;
  schema::ApplyBatch batch;
  for (std::int64_t i = 0; i < count; ++i) {
    char rkey[64];
    std::snprintf(rkey, sizeof rkey, "%s%07lld", prefix.c_str(), static_cast<long long>(i));
    batch.ops.push_back(bench::node_op(kDid, rkey, parent, keys[static_cast<std::size_t>(i)]));
    if (batch.ops.size() == 5000 || i + 1 == count) {
      must(store.apply(batch), "apply");
      batch.ops.clear();
    }
  }
}

std::string rkey_of(const std::string& prefix, std::int64_t i) {
  char rkey[64];
  std::snprintf(rkey, sizeof rkey, "%s%07lld", prefix.c_str(), static_cast<long long>(i));
  return rkey;
}

void write_svg(const std::string& path, const std::vector<Row>& rows) {
  const double width = 900, height = 520, left = 70, right = 330, top = 40, bottom = 60;
  double max_us = 0;
  for (const auto& row : rows)
    for (const auto& f : row.at) max_us = std::max(max_us, f.median_us);
  // A round ceiling for the y axis: 1, 2 or 5 times a power of ten.
  double ceiling = 1;
  for (double decade = 1; ceiling < max_us; decade *= 10) {
    for (double step : {1.0, 2.0, 5.0, 10.0}) {
      ceiling = step * decade;
      if (ceiling >= max_us) break;
    }
  }
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  auto x_of = [&](int i) { return left + plot_w * i / 2.0; };
  auto y_of = [&](double us) { return top + plot_h * (1 - us / ceiling); };
  static const char* kColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  std::ofstream svg(path);
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << left << "\" y=\"22\" font-size=\"15\">Cost of a request against the "
      << "size it could depend on (median, microseconds)</text>\n";
  for (int t = 0; t <= 4; ++t) {
    const double us = ceiling * t / 4;
    svg << "<line x1=\"" << left << "\" x2=\"" << left + plot_w << "\" y1=\"" << y_of(us)
        << "\" y2=\"" << y_of(us) << "\" stroke=\"#ddd\"/>\n"
        << "<text x=\"" << left - 8 << "\" y=\"" << y_of(us) + 4 << "\" text-anchor=\"end\">"
        << static_cast<long long>(us) << "</text>\n";
  }
  const char* labels[] = {"1x", "10x", "100x"};
  for (int i = 0; i < 3; ++i) {
    svg << "<text x=\"" << x_of(i) << "\" y=\"" << top + plot_h + 20 << "\" text-anchor=\"middle\">"
        << labels[i] << "</text>\n";
  }
  svg << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << height - 15
      << "\" text-anchor=\"middle\">size the request could depend on (each line's own sizes at "
         "the right)</text>\n";
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const char* colour = kColours[r % std::size(kColours)];
    svg << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"2\" points=\"";
    for (int i = 0; i < 3; ++i) svg << x_of(i) << "," << y_of(rows[r].at[i].median_us) << " ";
    svg << "\"/>\n";
    for (int i = 0; i < 3; ++i) {
      svg << "<circle cx=\"" << x_of(i) << "\" cy=\"" << y_of(rows[r].at[i].median_us)
          << "\" r=\"3\" fill=\"" << colour << "\"/>\n";
    }
    const double ly = top + 14 + static_cast<double>(r) * 34;
    svg << "<rect x=\"" << width - right + 20 << "\" y=\"" << ly - 9
        << "\" width=\"12\" height=\"12\" fill=\"" << colour << "\"/>\n"
        << "<text x=\"" << width - right + 38 << "\" y=\"" << ly << "\">" << rows[r].name
        << "</text>\n"
        << "<text x=\"" << width - right + 38 << "\" y=\"" << ly + 14 << "\" fill=\"#555\">"
        << rows[r].sizes << "</text>\n";
  }
  svg << "</svg>\n";
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 300;
  bool keep = false;
  std::string only;  // run only the rows whose name starts with this
  std::string svg_path;
  std::string path = "/tmp/bulleted-cost-growth.db";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (arg == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else if (arg == "--keep") {
      keep = true;
    } else if (arg == "--svg" && i + 1 < argc) {
      svg_path = argv[++i];
    } else {
      path = arg;
    }
  }
  bench::remove_index(path);
  auto store = must(schema::Store::open(path), "open");
  const auto built = Clock::now();
  // Groups of 1,000 / 10,000 / 100,000 siblings under g0 / g1 / g2; 100
  // children holding 10 / 100 / 1,000 children each under h0 / h1 / h2; a
  // group of 100 leaves under "leaves"; a subtree of 2,000 under "tree".
  for (int s = 0; s < 3; ++s) {
    const std::string g = "g" + std::to_string(s);
    add_children(*store, std::nullopt, g, 1);
    add_children(*store, g + "0000000", "c" + std::to_string(s), 1000 * kScales[s]);
    const std::string h = "h" + std::to_string(s);
    add_children(*store, std::nullopt, h, 1);
    add_children(*store, h + "0000000", h + "k", 100);
    for (int k = 0; k < 100; ++k) {
      add_children(*store, rkey_of(h + "k", k), h + "k" + std::to_string(k) + "x", 10 * kScales[s]);
    }
  }
  add_children(*store, std::nullopt, "leaves", 1);
  add_children(*store, std::string("leaves0000000"), "leaf", 100);
  add_children(*store, std::nullopt, "tree", 1);
  add_children(*store, std::string("tree0000000"), "tk", 40);
  for (int k = 0; k < 40; ++k)
    add_children(*store, rkey_of("tk", k), "tk" + std::to_string(k) + "x", 49);
  const double build_s = std::chrono::duration<double>(Clock::now() - built).count();
  std::printf("index: %lld nodes, built in %.1f s; %d repetitions a figure\n\n",
              static_cast<long long>(must(store->read().node_count(), "count")), build_s, reps);

  std::string body;
  auto page_json = [&](const std::vector<schema::NodeRow>& rows) {
    body.clear();
    appview::JsonWriter out(body);
    out.begin_object().key("nodes").begin_array();
    for (const auto& row : rows) appview::write_node_view(out, row);
    out.end_array().end_object();
  };
  auto children_page = [&](const std::string& parent) {
    auto page =
        must(store->read().children({.did = kDid, .parent_rkey = parent, .limit = 100}), "page");
    page_json(page.nodes);
  };

  std::vector<Row> rows;
  auto add_row = [&](std::string name, std::string sizes, const std::function<Figure(int)>& at) {
    if (!name.starts_with(only)) return;
    Row row{std::move(name), std::move(sizes), {}};
    for (int s = 0; s < 3; ++s) row.at[s] = at(s);
    rows.push_back(std::move(row));
  };
  add_row("getChildren 100, first page", "group of 1k / 10k / 100k", [&](int s) {
    const std::string parent = "g" + std::to_string(s) + "0000000";
    return measure(reps, [&](int) { children_page(parent); });
  });
  add_row("getChildren 100, each holding C", "C = 10 / 100 / 1,000", [&](int s) {
    const std::string parent = "h" + std::to_string(s) + "0000000";
    return measure(reps, [&](int) { children_page(parent); });
  });
  add_row("getPosition of the first", "group of 1k / 10k / 100k", [&](int s) {
    const std::string rkey = rkey_of("c" + std::to_string(s), 0);
    return measure(reps, [&](int) { must(store->read().position(kDid, rkey), "position"); });
  });
  add_row("getPosition of the middle", "group of 1k / 10k / 100k", [&](int s) {
    const std::string rkey = rkey_of("c" + std::to_string(s), 500 * kScales[s]);
    return measure(reps, [&](int) { must(store->read().position(kDid, rkey), "position"); });
  });
  add_row("getPosition of the last", "group of 1k / 10k / 100k", [&](int s) {
    const std::string rkey = rkey_of("c" + std::to_string(s), 1000 * kScales[s] - 1);
    return measure(reps, [&](int) { must(store->read().position(kDid, rkey), "position"); });
  });
  add_row("getWindow 20/20 at the start", "group of 1k / 10k / 100k", [&](int s) {
    const std::string rkey = rkey_of("c" + std::to_string(s), 0);
    return measure(reps, [&](int) {
      auto window = must(store->read().window(kDid, rkey, 20, 20), "window");
      page_json(window.nodes);
    });
  });
  add_row("getWindow 20/20 at the end", "group of 1k / 10k / 100k", [&](int s) {
    const std::string rkey = rkey_of("c" + std::to_string(s), 1000 * kScales[s] - 1);
    return measure(reps, [&](int) {
      auto window = must(store->read().window(kDid, rkey, 20, 20), "window");
      page_json(window.nodes);
    });
  });

  appview::GroupLocks locks;
  ordering::TidClock clock;
  appview::LocalSink sink(clock);
  appview::Writer writer(locks, clock, sink);
  // Indexes spread over a part of the group (one spot taken again and again
  // would only measure ever longer keys).
  auto create_in = [&](int s, double from, double to) {
    const std::string parent = "g" + std::to_string(s) + "0000000";
    std::uint32_t state = 12345;
    return measure(reps, [&](int i) {
      const auto size = static_cast<double>(1000 * kScales[s] + i);
      state = state * 1664525u + 1013904223u;
      const double at = from + (to - from) * (static_cast<double>(state >> 8) / 16777216.0);
      appview::NeighbourIntent intent{
          .parent_rkey = parent,
          .position = appview::PositionIntent::at(static_cast<std::int64_t>(size * at))};
      must(writer.create(*store, kDid, intent, {.text = "new"}), "create");
    });
  };
  add_row("createNode in the first tenth", "group of 1k / 10k / 100k",
          [&](int s) { return create_in(s, 0.0, 0.1); });
  add_row("createNode in the middle half", "group of 1k / 10k / 100k",
          [&](int s) { return create_in(s, 0.25, 0.75); });
  add_row("createNode in the last tenth", "group of 1k / 10k / 100k",
          [&](int s) { return create_in(s, 0.9, 1.0); });

  std::printf("%-36s %-26s %16s %16s %16s\n", "request (median / p90, us)", "1x / 10x / 100x", "1x",
              "10x", "100x");
  for (const auto& row : rows) {
    std::printf("%-36s %-26s", row.name.c_str(), row.sizes.c_str());
    for (const auto& f : row.at) std::printf(" %8.1f / %5.1f", f.median_us, f.p90_us);
    std::printf("   %.2fx\n", row.at[2].median_us / row.at[0].median_us);
  }

  // The fixed points of the acceptance: a 100-leaf page against the first
  // page of the 100,000 group, and a 2,000-node subtree.
  const Figure leaves = measure(reps, [&](int) { children_page("leaves0000000"); });
  const Figure big = measure(reps, [&](int) { children_page("g20000000"); });
  std::size_t subtree_bytes = 0, subtree_nodes = 0;
  auto read_subtree = [&] {
    return must(store->read().subtree({.did = kDid,
                                       .root_rkey = std::string("tree0000000"),
                                       .depth = 8,
                                       .budget_bytes = 8 * 1024 * 1024}),
                "subtree");
  };
  auto subtree_json = [&](const schema::SubtreeNode& tree) {
    body.clear();
    appview::JsonWriter out(body);
    appview::write_subtree_view(out, tree);
    subtree_bytes = body.size();
  };
  // As getSubtree serves it: each view written as its row is read.
  std::string served;
  const Figure subtree = measure(reps, [&](int) {
    appview::SubtreeAnswer answer;
    auto read = store->read().subtree({.did = kDid,
                                       .root_rkey = std::string("tree0000000"),
                                       .depth = 8,
                                       .budget_bytes = 8 * 1024 * 1024},
                                      answer);
    if (!read) die("subtree: " + read.error().message);
    served = answer.text();
  });
  // The same answer in two steps, rows first (the tree of copied rows), and
  // that split in two: the store's reads, and the JSON.
  const Figure two_steps = measure(reps, [&](int) { subtree_json(read_subtree()); });
  const Figure subtree_read = measure(reps, [&](int) { read_subtree(); });
  const schema::SubtreeNode tree = read_subtree();
  const Figure subtree_write = measure(reps, [&](int) { subtree_json(tree); });
  std::function<std::size_t(const schema::SubtreeNode&)> count =
      [&](const schema::SubtreeNode& node) {
        std::size_t n = node.node ? 1 : 0;
        for (const auto& child : node.children) n += count(child);
        return n;
      };
  subtree_nodes = count(tree);
  if (served != body) die("the served subtree differs from the view of its rows");
  // A page of 100 written as JSON from rows already read.
  auto rows_of_page =
      must(store->read().children(
               {.did = kDid, .parent_rkey = std::string("leaves0000000"), .limit = 100}),
           "page");
  const Figure write_only = measure(reps * 10, [&](int) { page_json(rows_of_page.nodes); });
  std::printf("\npage of 100 leaves: %.1f us; first page of the 100,000 group: %.1f us (%.2fx)\n",
              leaves.median_us, big.median_us, big.median_us / leaves.median_us);
  std::printf("a page of 100 written as JSON from its rows: %.1f us (p90 %.1f), %zu bytes\n",
              write_only.median_us, write_only.p90_us, body.size());
  std::printf("getSubtree of %zu nodes (%zu bytes of JSON), as served: %.1f us (p90 %.1f)\n",
              subtree_nodes, subtree_bytes, subtree.median_us, subtree.p90_us);
  std::printf("  in two steps, rows then JSON: %.1f us (p90 %.1f)\n", two_steps.median_us,
              two_steps.p90_us);
  std::printf(
      "  of which reading its rows: %.1f us (p90 %.1f); writing its JSON: %.1f us (p90 %.1f)\n",
      subtree_read.median_us, subtree_read.p90_us, subtree_write.median_us, subtree_write.p90_us);
  if (!svg_path.empty()) {
    write_svg(svg_path, rows);
    std::printf("plot: %s\n", svg_path.c_str());
  }
  store.reset();
  if (!keep) bench::remove_index(path);
  return 0;
}
