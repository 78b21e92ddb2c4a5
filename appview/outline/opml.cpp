#include <expat.h>

#include <cstring>
#include <memory>

#include "appview/outline/outline.hpp"

namespace bulleted::appview::outline {
namespace {

struct Parse {
  XML_Parser parser = nullptr;
  const ImportLimits* limits = nullptr;
  Outline outline;
  // Indexes of the open <outline> elements, innermost last.
  std::vector<std::ptrdiff_t> open;
  bool in_body = false;
  std::optional<Error> error;  // why the handlers stopped the parser

  void stop(ErrorCode code, std::string message) {
    if (!error) error = Error{code, std::move(message)};
    XML_StopParser(parser, XML_FALSE);
  }
};

const char* attribute(const XML_Char** attributes, const char* name) {
  for (std::size_t i = 0; attributes[i] != nullptr; i += 2) {
    if (std::strcmp(attributes[i], name) == 0) return attributes[i + 1];
  }
  return nullptr;
}

bool is_true(const char* value) { return value != nullptr && std::strcmp(value, "true") == 0; }

void XMLCALL on_start(void* data, const XML_Char* name, const XML_Char** attributes) {
  auto& p = *static_cast<Parse*>(data);
  if (p.error) return;
  if (std::strcmp(name, "body") == 0 && p.open.empty()) {
    p.in_body = true;
    return;
  }
  // Other elements (<head> and what it holds, unknown ones) are ignored.
  if (std::strcmp(name, "outline") != 0 || !p.in_body) return;
  if (p.open.size() >= p.limits->max_depth) {
    p.stop(ErrorCode::kPayloadTooLarge, "the outline is nested deeper than the limit of " +
                                            std::to_string(p.limits->max_depth) + " levels");
    return;
  }
  if (p.outline.nodes.size() >= p.limits->max_nodes) {
    p.stop(ErrorCode::kPayloadTooLarge,
           "the outline has more nodes than the limit of " + std::to_string(p.limits->max_nodes));
    return;
  }
  OutlineNode node;
  node.parent = p.open.empty() ? -1 : p.open.back();
  // WorkFlowy writes text; Dynalist and others may write only title.
  const char* text = attribute(attributes, "text");
  if (text == nullptr) text = attribute(attributes, "title");
  RichText rich = decode_rich_text(text == nullptr ? "" : text);
  node.text = std::move(rich.text);
  node.facets = std::move(rich.facets);
  if (const char* note = attribute(attributes, "_note"); note != nullptr && *note != '\0') {
    node.note = decode_rich_text(note).text;
  }
  node.completed =
      is_true(attribute(attributes, "_complete")) || is_true(attribute(attributes, "complete"));
  p.open.push_back(static_cast<std::ptrdiff_t>(p.outline.nodes.size()));
  p.outline.nodes.push_back(std::move(node));
}

void XMLCALL on_end(void* data, const XML_Char* name) {
  auto& p = *static_cast<Parse*>(data);
  if (p.error) return;
  if (std::strcmp(name, "outline") == 0 && p.in_body && !p.open.empty()) {
    p.open.pop_back();
  } else if (std::strcmp(name, "body") == 0) {
    p.in_body = false;
  }
}

// No DTDs: they are where entity bombs and external entities live.
void XMLCALL on_doctype(void* data, const XML_Char*, const XML_Char*, const XML_Char*, int) {
  static_cast<Parse*>(data)->stop(ErrorCode::kInvalidRequest,
                                  "document type declarations (DTDs) are not allowed");
}

void XMLCALL on_entity_declaration(void* data, const XML_Char* name, int, const XML_Char*, int,
                                   const XML_Char*, const XML_Char*, const XML_Char*,
                                   const XML_Char*) {
  static_cast<Parse*>(data)->stop(
      ErrorCode::kInvalidRequest,
      std::string("entity declarations are not allowed (") + name + ")");
}

int XMLCALL on_external_entity(XML_Parser, const XML_Char*, const XML_Char*, const XML_Char*,
                               const XML_Char*) {
  return XML_STATUS_ERROR;  // never fetched
}

}  // namespace

Result<Outline> parse_opml(std::string_view document, const ImportLimits& limits) {
  if (document.size() > limits.max_bytes) {
    return fail(ErrorCode::kPayloadTooLarge, "the document is larger than the limit of " +
                                                 std::to_string(limits.max_bytes) + " bytes");
  }
  std::unique_ptr<std::remove_pointer_t<XML_Parser>, decltype(&XML_ParserFree)> parser(
      XML_ParserCreate("UTF-8"), &XML_ParserFree);
  if (!parser) return fail(ErrorCode::kInternal, "no memory for an XML parser");
  Parse p;
  p.parser = parser.get();
  p.limits = &limits;
  XML_SetUserData(parser.get(), &p);
  XML_SetElementHandler(parser.get(), on_start, on_end);
  XML_SetStartDoctypeDeclHandler(parser.get(), on_doctype);
  XML_SetEntityDeclHandler(parser.get(), on_entity_declaration);
  XML_SetExternalEntityRefHandler(parser.get(), on_external_entity);
  XML_SetParamEntityParsing(parser.get(), XML_PARAM_ENTITY_PARSING_NEVER);
  // Fed in slices: expat takes an int length
  // (maxImportBytes is at most 1 GiB, so one slice holds it: expat then
  // never rescans a long attribute split across slices).
  constexpr std::size_t kSlice = std::size_t{1} << 30;
  std::size_t offset = 0;
  do {
    const std::size_t n = std::min(kSlice, document.size() - offset);
    const bool last = offset + n == document.size();
    if (XML_Parse(parser.get(), document.data() + offset, static_cast<int>(n), last) ==
        XML_STATUS_ERROR) {
      if (p.error) return std::unexpected(*p.error);
      return fail(ErrorCode::kInvalidRequest,
                  std::string("malformed XML at line ") +
                      std::to_string(XML_GetCurrentLineNumber(parser.get())) + ", column " +
                      std::to_string(XML_GetCurrentColumnNumber(parser.get()) + 1) + ": " +
                      XML_ErrorString(XML_GetErrorCode(parser.get())));
    }
    offset += n;
  } while (offset < document.size());
  if (p.error) return std::unexpected(*p.error);
  if (p.outline.nodes.empty()) {
    return fail(ErrorCode::kInvalidRequest, "the document has no <outline> inside <body>");
  }
  return std::move(p.outline);
}

}  // namespace bulleted::appview::outline
