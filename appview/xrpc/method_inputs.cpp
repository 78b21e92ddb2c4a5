#include "appview/xrpc/method_inputs.hpp"

#include "schema/node_record.hpp"
#include "schema/syntax.hpp"

namespace bulleted::appview {

Result<std::string> did_param(const XrpcParams& params, const std::string& name) {
  auto value = params.required(name);
  if (!value) return value;
  if (auto did = schema::Did::parse(*value); !did)
    return fail(ErrorCode::kInvalidRequest, name + ": " + did.error());
  return value;
}

Result<std::string> rkey_param(const XrpcParams& params, const std::string& name) {
  auto value = params.required(name);
  if (!value) return value;
  if (auto key = schema::RecordKey::parse(*value); !key)
    return fail(ErrorCode::kInvalidRequest, name + ": " + key.error());
  return value;
}

Result<std::optional<std::string>> optional_rkey_param(const XrpcParams& params,
                                                       const std::string& name) {
  auto value = params.text(name);
  if (!value || value->empty()) return std::optional<std::string>();
  if (auto key = schema::RecordKey::parse(*value); !key)
    return fail(ErrorCode::kInvalidRequest, name + ": " + key.error());
  return value;
}

Result<NeighbourIntent> intent_of(const Body& body) {
  NeighbourIntent intent;
  auto parent = body.rkey("parentRkey");
  if (!parent) return std::unexpected(parent.error());
  auto after = body.rkey("afterRkey");
  if (!after) return std::unexpected(after.error());
  auto before = body.rkey("beforeRkey");
  if (!before) return std::unexpected(before.error());
  auto position = body.position();
  if (!position) return std::unexpected(position.error());
  intent.parent_rkey = *parent;
  intent.after_rkey = *after;
  intent.before_rkey = *before;
  intent.position = *position;
  return intent;
}

Result<NodeFields> fields_of(const Body& body) {
  NodeFields fields;
  auto text = body.string("text");
  if (!text) return std::unexpected(text.error());
  auto note = body.string("note");
  if (!note) return std::unexpected(note.error());
  auto completed = body.boolean("completed");
  if (!completed) return std::unexpected(completed.error());
  fields.text = *text;
  fields.note = *note;
  fields.completed = *completed;
  for (auto [name, into] : {std::pair{"layout", &fields.layout}, {"display", &fields.display}}) {
    auto value = body.string(name);
    if (!value) return std::unexpected(value.error());
    if (*value &&
        ((*value)->size() > schema::kMaxOpenValueBytes || !schema::is_valid_utf8(**value))) {
      return fail(ErrorCode::kInvalidRequest, std::string(name) + " is longer than " +
                                                  std::to_string(schema::kMaxOpenValueBytes) +
                                                  " bytes or not UTF-8");
    }
    *into = std::move(*value);
  }
  return fields;
}

}  // namespace bulleted::appview
