// The import parsers on hostile inputs of doubling size, up to the import
// size limit: each shape once made a parser quadratic. Prints, per shape and
// size, the median of three parses and its ratio to the size before (2.0
// means linear). Usage: outline_parse_bench [MAX_MB] (default 52.4, the
// 50 MiB import limit)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "appview/outline/outline.hpp"

using namespace bulleted::appview::outline;

namespace {

// An OPML document whose single node's text attribute holds `repeat`
// copies of `piece` (after `prefix`), about `bytes` long.
std::string opml_with(std::string_view prefix, std::string_view piece, std::size_t bytes) {
  std::string out = "<opml><body><outline text=\"";
  out += prefix;
  while (out.size() < bytes) out += piece;
  out += "\"/></body></opml>";
  return out;
}

struct Shape {
  const char* name;
  Format format;
  std::function<std::string(std::size_t)> make;
};

double median_seconds(const Shape& shape, const std::string& document) {
  ImportLimits limits;
  limits.max_bytes = document.size() + 1;
  limits.max_nodes = 100'000'000;  // the size is what is measured here
  std::vector<double> runs;
  for (int i = 0; i < 3; ++i) {
    const auto started = std::chrono::steady_clock::now();
    auto parsed = parse_outline(shape.format, document, limits);
    runs.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    if (!parsed && parsed.error().code != bulleted::ErrorCode::kInvalidRequest) {
      std::fprintf(stderr, "%s: %s\n", shape.name, parsed.error().message.c_str());
    }
  }
  std::sort(runs.begin(), runs.end());
  return runs[1];
}

}  // namespace

int main(int argc, char** argv) {
  // Default: up to the import limit of 50 MiB (52.4 MB).
  const double max_mb = argc > 1 ? std::atof(argv[1]) : 52.4;
  const std::vector<Shape> shapes = {
      {"note lines (text)", Format::kText,
       [](std::size_t bytes) {
         std::string out = "- one bullet\n";
         while (out.size() < bytes) out += "  a note line\n";
         return out;
       }},
      {"stray closing tags", Format::kOpml,
       [](std::size_t bytes) {
         std::string open;  // 30,000 bold spans left open, then stray closes
         for (int i = 0; i < 30'000; ++i) open += "&lt;b&gt;";
         return opml_with(open, "&lt;/i&gt;", bytes);
       }},
      {"many '<' (&lt;)", Format::kOpml,
       [](std::size_t bytes) { return opml_with("", "&lt;", bytes); }},
      {"many '&' (&amp;)", Format::kOpml,
       [](std::size_t bytes) { return opml_with("", "&amp;amp", bytes); }},
      {"ordinary bullets", Format::kOpml,
       [](std::size_t bytes) {
         std::string out = "<opml><body>";
         while (out.size() < bytes) {
           out += "<outline text=\"a bullet with &lt;b&gt;bold&lt;/b&gt; text\" _note=\"n\">";
           out += "<outline text=\"a child\"/></outline>";
         }
         return out + "</body></opml>";
       }},
  };
  std::printf("%-22s %10s %10s %10s %8s\n", "shape", "MB", "seconds", "MB/s", "x prev");
  for (const auto& shape : shapes) {
    double previous = 0;
    for (double mb = 0.4; mb <= max_mb + 1e-9; mb *= 2) {
      const std::string document = shape.make(static_cast<std::size_t>(mb * 1e6));
      const double seconds = median_seconds(shape, document);
      const double size_mb = static_cast<double>(document.size()) / 1e6;
      std::printf("%-22s %10.1f %10.4f %10.1f %8s\n", shape.name, size_mb, seconds,
                  size_mb / seconds,
                  previous > 0 ? std::to_string(seconds / previous).substr(0, 4).c_str() : "-");
      previous = seconds;
    }
  }
  return 0;
}
