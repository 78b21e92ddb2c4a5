#include <algorithm>
#include <cstdint>
#include <map>

#include "appview/outline/outline.hpp"
#include "schema/node_record.hpp"

namespace bulleted::appview::outline {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxColor = 64;

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::size_t decode_entity_named(std::string_view name, std::size_t used, std::string& out);

// An entity at html[i] ('&'): appends its character and returns the bytes it
// used, or 0 when it is not a known entity (the '&' is then plain text).
std::size_t decode_entity(std::string_view html, std::size_t i, std::string& out) {
  // An entity is short: look no further than its longest form, so that many
  // '&' without ';' cost no more than their number.
  constexpr std::size_t kLongest = 12;
  const std::size_t semicolon = html.substr(i + 1, kLongest).find(';');
  if (semicolon == std::string_view::npos) return 0;
  return decode_entity_named(html.substr(i + 1, semicolon), semicolon + 2, out);
}

std::size_t decode_entity_named(std::string_view name, std::size_t used, std::string& out) {
  if (name.empty()) return 0;
  if (name[0] == '#') {
    std::uint32_t cp = 0;
    const bool hex = name.size() > 1 && (name[1] == 'x' || name[1] == 'X');
    const std::string_view digits = name.substr(hex ? 2 : 1);
    if (digits.empty()) return 0;
    for (char c : digits) {
      int d = -1;
      if (c >= '0' && c <= '9') d = c - '0';
      if (hex && c >= 'a' && c <= 'f') d = c - 'a' + 10;
      if (hex && c >= 'A' && c <= 'F') d = c - 'A' + 10;
      if (d < 0) return 0;
      cp = cp * (hex ? 16 : 10) + static_cast<std::uint32_t>(d);
      if (cp > 0x10FFFF) return 0;
    }
    append_utf8(out, cp);
    return used;
  }
  static const std::map<std::string_view, std::uint32_t> kNamed = {
      {"amp", '&'},       {"lt", '<'},       {"gt", '>'},       {"quot", '"'},
      {"apos", '\''},     {"nbsp", 0xA0},    {"ndash", 0x2013}, {"mdash", 0x2014},
      {"hellip", 0x2026}, {"lsquo", 0x2018}, {"rsquo", 0x2019}, {"ldquo", 0x201C},
      {"rdquo", 0x201D},  {"copy", 0xA9}};
  auto it = kNamed.find(name);
  if (it == kNamed.end()) return 0;
  append_utf8(out, it->second);
  return used;
}

std::string decode_entities(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '&') {
      if (std::size_t used = decode_entity(text, i, out)) {
        i += used;
        continue;
      }
    }
    out.push_back(text[i++]);
  }
  return out;
}

struct Tag {
  bool closing = false;
  std::string name;                               // lower case
  std::map<std::string, std::string> attributes;  // names in lower case
};

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-'; }

// Parses the tag between '<' and '>' (exclusive); nullopt when it is no tag.
std::optional<Tag> parse_tag(std::string_view body) {
  Tag tag;
  std::size_t i = 0;
  if (i < body.size() && body[i] == '/') {
    tag.closing = true;
    ++i;
  }
  const std::size_t name_start = i;
  while (i < body.size() && is_name_char(body[i])) ++i;
  if (i == name_start || !std::isalpha(static_cast<unsigned char>(body[name_start]))) {
    return std::nullopt;
  }
  tag.name = lower(body.substr(name_start, i - name_start));
  while (i < body.size()) {
    while (i < body.size() && (std::isspace(static_cast<unsigned char>(body[i])) || body[i] == '/'))
      ++i;
    const std::size_t attr_start = i;
    while (i < body.size() && body[i] != '=' && body[i] != '>' &&
           !std::isspace(static_cast<unsigned char>(body[i])))
      ++i;
    if (i == attr_start) break;
    const std::string name = lower(body.substr(attr_start, i - attr_start));
    std::string value;
    if (i < body.size() && body[i] == '=') {
      ++i;
      if (i < body.size() && (body[i] == '"' || body[i] == '\'')) {
        const char quote = body[i++];
        const std::size_t end = body.find(quote, i);
        const std::size_t stop = end == std::string_view::npos ? body.size() : end;
        value = decode_entities(body.substr(i, stop - i));
        i = end == std::string_view::npos ? body.size() : end + 1;
      } else {
        const std::size_t start = i;
        while (i < body.size() && !std::isspace(static_cast<unsigned char>(body[i]))) ++i;
        value = decode_entities(body.substr(start, i - start));
      }
    }
    tag.attributes[name] = value;
  }
  return tag;
}

json feature(std::string_view name) {
  if (name == "link") return json{{"$type", schema::kLinkFeature}};
  return json{{"$type", std::string(schema::kFormatPrefix) + std::string(name)}};
}

std::string two_digits(const std::string& value) { return value.size() == 1 ? "0" + value : value; }

// The feature an opening tag starts, or null (unknown tags still pair up).
json feature_of(const Tag& tag) {
  const std::string& n = tag.name;
  if (n == "b" || n == "strong") return feature("bold");
  if (n == "i" || n == "em") return feature("italic");
  if (n == "u") return feature("underline");
  if (n == "s" || n == "strike" || n == "del") return feature("strikethrough");
  if (n == "code") return feature("code");
  auto attribute = [&](const char* name) {
    auto it = tag.attributes.find(name);
    return it == tag.attributes.end() ? std::string() : it->second;
  };
  if (n == "a") {
    const std::string href = attribute("href");
    if (href.empty()) return nullptr;
    json f = feature("link");
    f["uri"] = href;
    return f;
  }
  if (n == "mark" || n == "span") {
    std::string color;
    bool colored = false;
    std::string classes = attribute("class");
    std::size_t pos = 0;
    while (pos < classes.size()) {
      const std::size_t end = std::min(classes.find(' ', pos), classes.size());
      const std::string token = classes.substr(pos, end - pos);
      if (token == "colored") {
        colored = true;
      } else if (!token.empty()) {
        color += (color.empty() ? "" : " ") + token;
      }
      pos = end + 1;
    }
    if (!colored && n == "span") return nullptr;
    if (color.empty()) color = "yellow";
    if (color.size() > kMaxColor) return nullptr;
    json f = feature("highlight");
    f["color"] = color;
    return f;
  }
  if (n == "time") {
    std::string start = attribute("start");
    if (const std::string year = attribute("startyear"); !year.empty()) {
      start = year + "-" + two_digits(attribute("startmonth")) + "-" +
              two_digits(attribute("startday"));
      if (const std::string hour = attribute("starthour"); !hour.empty()) {
        start += "T" + two_digits(hour) + ":" + two_digits(attribute("startminute"));
      }
    }
    if (start.empty() || start.size() > 64) return nullptr;
    json f = feature("date");
    f["start"] = start;
    return f;
  }
  return nullptr;
}

bool is_void(const std::string& name) {
  return name == "br" || name == "img" || name == "hr" || name == "wbr" || name == "input" ||
         name == "meta";
}

struct OpenSpan {
  std::string tag;
  json feature;
  std::size_t start;
};

void close_span(const OpenSpan& span, std::size_t end, json& facets) {
  if (span.feature.is_null() || end <= span.start) return;
  facets.push_back({{"index", {{"byteStart", span.start}, {"byteEnd", end}}},
                    {"features", json::array({span.feature})}});
}

bool char_boundary(std::string_view text, std::size_t at) {
  return at == 0 || at >= text.size() || (static_cast<unsigned char>(text[at]) & 0xC0) != 0x80;
}

// The HTML tag pair of one feature, or nullopt for an unknown one.
std::optional<std::pair<std::string, std::string>> tags_of(const json& f) {
  if (!f.is_object() || !f.contains("$type") || !f["$type"].is_string()) return std::nullopt;
  const std::string name(schema::style_of(f["$type"].get<std::string>()));
  if (name.empty()) return std::nullopt;
  auto simple = [](const char* tag) {
    return std::pair{std::string("<") + tag + ">", std::string("</") + tag + ">"};
  };
  if (name == "bold") return simple("b");
  if (name == "italic") return simple("i");
  if (name == "underline") return simple("u");
  if (name == "strikethrough") return simple("s");
  if (name == "code") return simple("code");
  if (name == "link" && f.contains("uri") && f["uri"].is_string()) {
    return std::pair{
        "<a href=\"" + escape_markup(f["uri"].get<std::string>(), {.quotes = true}) + "\">",
        std::string("</a>")};
  }
  if (name == "highlight" && f.contains("color") && f["color"].is_string()) {
    return std::pair{"<mark class=\"colored " +
                         escape_markup(f["color"].get<std::string>(), {.quotes = true}) + "\">",
                     std::string("</mark>")};
  }
  if (name == "date" && f.contains("start") && f["start"].is_string()) {
    const std::string start = f["start"];
    // YYYY-MM-DD[THH:MM] as WorkFlowy writes it; anything else as written.
    if (start.size() >= 10 && start[4] == '-' && start[7] == '-') {
      auto number = [](const std::string& s) { return std::to_string(std::atoi(s.c_str())); };
      std::string open = "<time startYear=\"" + start.substr(0, 4) + "\" startMonth=\"" +
                         number(start.substr(5, 2)) + "\" startDay=\"" +
                         number(start.substr(8, 2)) + "\"";
      if (start.size() >= 16 && start[10] == 'T') {
        open += " startHour=\"" + number(start.substr(11, 2)) + "\" startMinute=\"" +
                number(start.substr(14, 2)) + "\"";
      }
      return std::pair{open + ">", std::string("</time>")};
    }
    return std::pair{"<time start=\"" + escape_markup(start, {.quotes = true}) + "\">",
                     std::string("</time>")};
  }
  return std::nullopt;
}

// One facet per feature, touching or overlapping ranges of the same feature
// merged, ordered by start (then by feature): the same formatting always has
// the same facets, however its tags were nested.
json normalize_facets(json facets) {
  struct Range {
    std::string key;  // the feature, serialized
    std::size_t start, end;
    json feature;
  };
  std::vector<Range> ranges;
  for (const auto& facet : facets) {
    for (const auto& f : facet["features"]) {
      ranges.push_back({f.dump(), facet["index"]["byteStart"].get<std::size_t>(),
                        facet["index"]["byteEnd"].get<std::size_t>(), f});
    }
  }
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) {
    return a.key != b.key ? a.key < b.key : a.start < b.start;
  });
  std::vector<Range> merged;
  for (auto& range : ranges) {
    if (!merged.empty() && merged.back().key == range.key && range.start <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, range.end);
    } else {
      merged.push_back(std::move(range));
    }
  }
  std::stable_sort(merged.begin(), merged.end(), [](const Range& a, const Range& b) {
    return a.start != b.start ? a.start < b.start : a.key < b.key;
  });
  json out = json::array();
  for (const auto& range : merged) {
    out.push_back({{"index", {{"byteStart", range.start}, {"byteEnd", range.end}}},
                   {"features", json::array({range.feature})}});
  }
  return out;
}

}  // namespace

RichText decode_rich_text(std::string_view html) {
  if (html.find_first_of("<&") == std::string_view::npos) return {std::string(html), nullptr};
  RichText out;
  json facets = json::array();
  // Spans in the order they opened; a closed one is marked, not erased.
  std::vector<OpenSpan> spans;
  std::vector<bool> closed;
  // The open spans of each tag name, innermost last: a closing tag finds its
  // span at once, whatever else is open.
  std::map<std::string, std::vector<std::size_t>> open_by_tag;
  // The next '>' at or after a position: searched again only once passed,
  // so many '<' without '>' cost one scan in all.
  std::size_t next_gt = 0;
  bool gt_known = false;
  for (std::size_t i = 0; i < html.size();) {
    const char c = html[i];
    if (c == '&') {
      if (std::size_t used = decode_entity(html, i, out.text)) {
        i += used;
        continue;
      }
    } else if (c == '<') {
      if (!gt_known || (next_gt != std::string_view::npos && next_gt <= i)) {
        next_gt = html.find('>', i + 1);
        gt_known = true;
      }
      const std::size_t gt = next_gt;
      if (gt != std::string_view::npos) {
        if (auto tag = parse_tag(html.substr(i + 1, gt - i - 1))) {
          i = gt + 1;
          if (tag->closing) {
            // The innermost open span of that tag; a stray close is ignored.
            auto it = open_by_tag.find(tag->name);
            if (it != open_by_tag.end() && !it->second.empty()) {
              const std::size_t index = it->second.back();
              it->second.pop_back();
              close_span(spans[index], out.text.size(), facets);
              closed[index] = true;
            }
          } else if (tag->name == "br") {
            out.text.push_back('\n');
          } else if (!is_void(tag->name)) {
            open_by_tag[tag->name].push_back(spans.size());
            spans.push_back({tag->name, feature_of(*tag), out.text.size()});
            closed.push_back(false);
          }
          continue;
        }
      }
    }
    out.text.push_back(c);
    ++i;
  }
  // Unclosed tags end with the text.
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (!closed[i]) close_span(spans[i], out.text.size(), facets);
  }
  if (!facets.empty()) out.facets = normalize_facets(std::move(facets));
  return out;
}

std::string encode_rich_text(std::string_view text, const nlohmann::json& facets) {
  struct Item {
    std::size_t start, end;
    std::string open, close;
  };
  std::vector<Item> items;
  if (facets.is_array()) {
    for (const auto& facet : facets) {
      if (!facet.is_object() || !facet.contains("index") || !facet.contains("features")) continue;
      const json& index = facet["index"];
      if (!index.is_object() || !index.contains("byteStart") || !index.contains("byteEnd") ||
          !index["byteStart"].is_number_unsigned() || !index["byteEnd"].is_number_unsigned()) {
        continue;
      }
      const auto start = index["byteStart"].get<std::size_t>();
      const auto end = index["byteEnd"].get<std::size_t>();
      if (start >= end || end > text.size() || !char_boundary(text, start) ||
          !char_boundary(text, end) || !facet["features"].is_array()) {
        continue;
      }
      for (const auto& f : facet["features"]) {
        if (auto tags = tags_of(f)) items.push_back({start, end, tags->first, tags->second});
      }
    }
  }
  if (items.empty()) return escape_markup(text, {});
  // Outer spans first: earlier start, then later end.
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    return a.start != b.start ? a.start < b.start : a.end > b.end;
  });
  std::vector<std::size_t> bounds{0, text.size()};
  for (const auto& item : items) {
    bounds.push_back(item.start);
    bounds.push_back(item.end);
  }
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  std::string out;
  std::vector<std::size_t> stack;  // indexes of open items, outermost first
  std::size_t next = 0;            // next item to open
  for (std::size_t b = 0; b < bounds.size(); ++b) {
    const std::size_t at = bounds[b];
    // Close what ends here; anything opened inside it closes and reopens.
    std::size_t lowest = stack.size();
    for (std::size_t s = 0; s < stack.size(); ++s) {
      if (items[stack[s]].end == at) {
        lowest = s;
        break;
      }
    }
    std::vector<std::size_t> reopen;
    while (stack.size() > lowest) {
      out += items[stack.back()].close;
      if (items[stack.back()].end != at) reopen.push_back(stack.back());
      stack.pop_back();
    }
    for (auto it = reopen.rbegin(); it != reopen.rend(); ++it) {
      out += items[*it].open;
      stack.push_back(*it);
    }
    while (next < items.size() && items[next].start == at) {
      out += items[next].open;
      stack.push_back(next++);
    }
    if (b + 1 < bounds.size()) out += escape_markup(text.substr(at, bounds[b + 1] - at), {});
  }
  return out;
}

}  // namespace bulleted::appview::outline
