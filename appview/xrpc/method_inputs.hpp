// What the XRPC methods read from a request: query parameters checked as
// DIDs and record keys, a procedure's JSON body (flat: JsonBody) with typed
// getters, and the neighbour intent and node fields in it. Errors are
// kInvalidRequest naming the parameter or field.
#pragma once

#include <optional>
#include <string>

#include "appview/http/server.hpp"
#include "appview/write/placement.hpp"
#include "appview/write/writer.hpp"
#include "appview/xrpc/json_body.hpp"
#include "appview/xrpc/xrpc.hpp"
#include "schema/syntax.hpp"

namespace bulleted::appview {

Result<std::string> did_param(const XrpcParams& params, const std::string& name);
Result<std::string> rkey_param(const XrpcParams& params, const std::string& name);
Result<std::optional<std::string>> optional_rkey_param(const XrpcParams& params,
                                                       const std::string& name);

// A procedure's JSON body: an object; unknown fields (a sortKey included) are
// ignored.
class Body {
 public:
  // An application/json body that is one JSON object.
  static Result<Body> parse(const HttpRequest& request) {
    const std::string type = request.header("content-type");
    if (type.rfind("application/json", 0) != 0) {
      return fail(ErrorCode::kInvalidRequest, "the body must be application/json");
    }
    auto parsed = JsonBody::parse(request.body);
    if (!parsed) return std::unexpected(parsed.error());
    Body body;
    body.json_ = std::move(*parsed);
    return body;
  }
  Result<std::optional<std::string>> string(const std::string& name) const {
    const nlohmann::json* it = json_.find(name);
    if (it == nullptr || it->is_null()) return std::optional<std::string>();
    if (!it->is_string()) return fail(ErrorCode::kInvalidRequest, name + " must be a string");
    return std::optional<std::string>(it->get<std::string>());
  }
  // A string member moved out of the body (for large ones: import content).
  Result<std::optional<std::string>> take_string(const std::string& name) {
    const nlohmann::json* it = json_.find(name);
    if (it == nullptr || it->is_null()) return std::optional<std::string>();
    if (!it->is_string()) return fail(ErrorCode::kInvalidRequest, name + " must be a string");
    return json_.take_string(name);
  }
  Result<std::optional<bool>> boolean(const std::string& name) const {
    const nlohmann::json* it = json_.find(name);
    if (it == nullptr || it->is_null()) return std::optional<bool>();
    if (!it->is_boolean()) return fail(ErrorCode::kInvalidRequest, name + " must be a boolean");
    return std::optional<bool>(it->get<bool>());
  }
  Result<std::string> did(const std::string& name) const {
    auto value = string(name);
    if (!value) return std::unexpected(value.error());
    if (!*value) return fail(ErrorCode::kInvalidRequest, "missing required field " + name);
    if (auto did = schema::Did::parse(**value); !did)
      return fail(ErrorCode::kInvalidRequest, name + ": " + did.error());
    return **value;
  }
  Result<std::optional<std::string>> rkey(const std::string& name, bool required = false) const {
    auto value = string(name);
    if (!value) return value;
    if (!*value) {
      if (required) return fail(ErrorCode::kInvalidRequest, "missing required field " + name);
      return value;
    }
    if (auto key = schema::RecordKey::parse(**value); !key) {
      return fail(ErrorCode::kInvalidRequest, name + ": " + key.error());
    }
    return value;
  }
  // "first", "last", or a 0-based index given as a number or a string;
  // absent: last.
  Result<PositionIntent> position() const {
    const nlohmann::json* it = json_.find("position");
    if (it == nullptr || it->is_null()) return PositionIntent::last();
    if (it->is_number_integer() && it->get<std::int64_t>() >= 0) {
      return PositionIntent::at(it->get<std::int64_t>());
    }
    if (it->is_string()) return PositionIntent::parse(it->get_ref<const std::string&>());
    return fail(ErrorCode::kInvalidRequest, std::string(kBadPosition));
  }

 private:
  JsonBody json_;
};

Result<NeighbourIntent> intent_of(const Body& body);
Result<NodeFields> fields_of(const Body& body);

}  // namespace bulleted::appview
