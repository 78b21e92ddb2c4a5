#include "appview/xrpc/json_body.hpp"

namespace bulleted::appview {

// The SAX events of one body. Returning false stops the parser.
class JsonBodyReader final : public nlohmann::json_sax<nlohmann::json> {
 public:
  JsonBodyReader(JsonBody& out, std::size_t max_depth) : out_(out), max_depth_(max_depth) {}

  bool null() override { return scalar(nullptr); }
  bool boolean(bool value) override { return scalar(value); }
  bool number_integer(number_integer_t value) override { return scalar(value); }
  bool number_unsigned(number_unsigned_t value) override { return scalar(value); }
  bool number_float(number_float_t value, const string_t&) override { return scalar(value); }
  bool string(string_t& value) override { return scalar(std::move(value)); }
  bool binary(binary_t&) override { return scalar(nullptr); }
  bool start_object(std::size_t) override { return open(nlohmann::json::object()); }
  bool start_array(std::size_t) override { return open(nlohmann::json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& name) override {
    if (depth_ == 1) key_ = std::move(name);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    problem_ = "the body is not valid JSON";
    return false;
  }

  const std::string& problem() const { return problem_; }

 private:
  bool scalar(nlohmann::json value) {
    if (depth_ == 0) return not_an_object();
    if (depth_ == 1) out_.members_.insert_or_assign(key_, std::move(value));
    return true;
  }
  bool open(nlohmann::json kind) {
    if (depth_ == 0 && !kind.is_object()) return not_an_object();
    if (depth_ == 1) out_.members_.insert_or_assign(key_, std::move(kind));
    if (++depth_ > max_depth_) {
      problem_ = "the body is nested deeper than " + std::to_string(max_depth_) + " levels";
      return false;
    }
    return true;
  }
  bool close() {
    --depth_;
    return true;
  }
  bool not_an_object() {
    problem_ = "the body must be a JSON object";
    return false;
  }

  JsonBody& out_;
  std::size_t max_depth_;
  std::size_t depth_ = 0;
  std::string key_;
  std::string problem_;
};

Result<JsonBody> JsonBody::parse(std::string_view text, std::size_t max_depth) {
  JsonBody body;
  JsonBodyReader reader(body, max_depth);
  bool ok = false;
  try {
    ok = nlohmann::json::sax_parse(text, &reader);
  } catch (const nlohmann::json::exception&) {
    ok = false;
  }
  if (!ok) {
    return fail(ErrorCode::kInvalidRequest,
                reader.problem().empty() ? "the body is not valid JSON" : reader.problem());
  }
  return body;
}

const nlohmann::json* JsonBody::find(std::string_view name) const {
  auto it = members_.find(name);
  return it == members_.end() ? nullptr : &it->second;
}

std::optional<std::string> JsonBody::take_string(std::string_view name) {
  auto it = members_.find(name);
  if (it == members_.end() || !it->second.is_string()) return std::nullopt;
  return std::move(*it->second.get_ptr<std::string*>());
}

}  // namespace bulleted::appview
