// The reference web outliner's files (appview/web/), built into the binary.
#pragma once

#include <span>
#include <string_view>

namespace bulleted::appview {

struct WebAsset {
  std::string_view path;  // "/index.html", "/app.js", ...
  std::string_view content_type;
  std::string_view bytes;
};

std::span<const WebAsset> web_assets();

}  // namespace bulleted::appview
