#include "firehose/frame.hpp"

#include "firehose/dag_cbor.hpp"
#include "ordering/tid.hpp"
#include "schema/syntax.hpp"

namespace bulleted::firehose {
namespace {

Error corrupt(std::string message) { return Error{ErrorCode::kCorrupt, std::move(message)}; }

// Typed field access on a body map; each returns a reason on mismatch.
class Fields {
 public:
  explicit Fields(const DagValue& body) : body_(body) {}

  Result<std::string> text(std::string_view key) const {
    const DagValue* v = body_.find(key);
    if (v == nullptr || v->as_text() == nullptr) return missing(key, "text");
    return *v->as_text();
  }
  Result<std::optional<std::string>> optional_text(std::string_view key) const {
    const DagValue* v = body_.find(key);
    if (v == nullptr || v->is_null()) return std::optional<std::string>();
    if (v->as_text() == nullptr) return missing(key, "text");
    return std::optional<std::string>(*v->as_text());
  }
  Result<std::int64_t> integer(std::string_view key) const {
    const DagValue* v = body_.find(key);
    if (v == nullptr || v->as_integer() == nullptr) return missing(key, "an integer");
    return *v->as_integer();
  }
  Result<bool> boolean(std::string_view key) const {
    const DagValue* v = body_.find(key);
    if (v == nullptr || v->as_bool() == nullptr) return missing(key, "a boolean");
    return *v->as_bool();
  }
  Result<std::optional<Cid>> optional_cid(std::string_view key) const {
    const DagValue* v = body_.find(key);
    if (v == nullptr || v->is_null()) return std::optional<Cid>();
    if (v->as_cid() == nullptr) return missing(key, "a CID");
    return std::optional<Cid>(*v->as_cid());
  }
  Result<std::string> did(std::string_view key) const {
    auto value = text(key);
    if (!value) return value;
    if (!schema::Did::parse(*value))
      return std::unexpected(corrupt(std::string(key) + " is not a DID"));
    return value;
  }
  Result<std::int64_t> seq() const {
    auto value = integer("seq");
    if (value && *value < 0) return std::unexpected(corrupt("seq is negative"));
    return value;
  }

 private:
  static std::unexpected<Error> missing(std::string_view key, std::string_view what) {
    return std::unexpected(corrupt(std::string(key) + " is missing or not " + std::string(what)));
  }
  const DagValue& body_;
};

Result<std::string> rev_field(const Fields& fields, std::string_view key) {
  auto rev = fields.text(key);
  if (!rev) return rev;
  if (!ordering::Tid::parse(*rev))
    return std::unexpected(corrupt(std::string(key) + " is not a TID"));
  return rev;
}

#define TRY_ASSIGN(target, expr)                           \
  do {                                                     \
    auto result_ = (expr);                                 \
    if (!result_) return std::unexpected(result_.error()); \
    target = std::move(*result_);                          \
  } while (false)

// Moves a byte field out of the body (CAR slices are large: no copy).
Result<std::string> take_bytes(DagValue& body, std::string_view key) {
  if (auto* map = std::get_if<DagMap>(&body.value)) {
    for (auto& [k, v] : *map) {
      if (k != key) continue;
      if (auto* bytes = std::get_if<DagBytes>(&v.value)) return std::move(bytes->data);
    }
  }
  return std::unexpected(corrupt(std::string(key) + " is missing or not bytes"));
}

Result<FirehoseEvent> decode_commit(DagValue& body) {
  const Fields f(body);
  CommitEvent e;
  TRY_ASSIGN(e.seq, f.seq());
  TRY_ASSIGN(e.repo, f.did("repo"));
  TRY_ASSIGN(e.rev, rev_field(f, "rev"));
  TRY_ASSIGN(e.time, f.text("time"));
  TRY_ASSIGN(e.blocks, take_bytes(body, "blocks"));
  TRY_ASSIGN(e.commit, f.optional_cid("commit"));
  TRY_ASSIGN(e.prev_data, f.optional_cid("prevData"));
  if (const DagValue* since = body.find("since"); since != nullptr && !since->is_null()) {
    TRY_ASSIGN(e.since, rev_field(f, "since"));
  }
  if (const DagValue* too_big = body.find("tooBig"); too_big != nullptr && too_big->as_bool()) {
    e.too_big = *too_big->as_bool();
  }
  const DagValue* ops = body.find("ops");
  if (ops == nullptr || ops->as_array() == nullptr)
    return std::unexpected(corrupt("ops is missing"));
  for (const auto& item : *ops->as_array()) {
    const Fields op(item);
    CommitOp out;
    TRY_ASSIGN(out.action, op.text("action"));
    if (out.action != "create" && out.action != "update" && out.action != "delete") {
      return std::unexpected(corrupt("unknown op action " + out.action));
    }
    std::string path;
    TRY_ASSIGN(path, op.text("path"));
    const std::size_t slash = path.find('/');
    if (slash == std::string::npos) return std::unexpected(corrupt("op path has no '/'"));
    out.collection = path.substr(0, slash);
    out.rkey = path.substr(slash + 1);
    TRY_ASSIGN(out.cid, op.optional_cid("cid"));
    TRY_ASSIGN(out.prev, op.optional_cid("prev"));
    e.ops.push_back(std::move(out));
  }
  return e;
}

Result<FirehoseEvent> decode_body(std::string_view type, DagValue& body) {
  const Fields f(body);
  if (type == "#commit") return decode_commit(body);
  if (type == "#sync") {
    SyncEvent e;
    TRY_ASSIGN(e.seq, f.seq());
    TRY_ASSIGN(e.did, f.did("did"));
    TRY_ASSIGN(e.rev, rev_field(f, "rev"));
    TRY_ASSIGN(e.time, f.text("time"));
    TRY_ASSIGN(e.blocks, take_bytes(body, "blocks"));
    return e;
  }
  if (type == "#identity") {
    IdentityEvent e;
    TRY_ASSIGN(e.seq, f.seq());
    TRY_ASSIGN(e.did, f.did("did"));
    TRY_ASSIGN(e.time, f.text("time"));
    TRY_ASSIGN(e.handle, f.optional_text("handle"));
    return e;
  }
  if (type == "#account") {
    AccountEvent e;
    TRY_ASSIGN(e.seq, f.seq());
    TRY_ASSIGN(e.did, f.did("did"));
    TRY_ASSIGN(e.time, f.text("time"));
    TRY_ASSIGN(e.active, f.boolean("active"));
    TRY_ASSIGN(e.status, f.optional_text("status"));
    return e;
  }
  if (type == "#info") {
    InfoEvent e;
    TRY_ASSIGN(e.name, f.text("name"));
    TRY_ASSIGN(e.message, f.optional_text("message"));
    return e;
  }
  return UnknownEvent{std::string(type)};
}

#undef TRY_ASSIGN

}  // namespace

std::string_view event_type_name(const FirehoseEvent& event) {
  static constexpr std::string_view kNames[] = {"commit", "sync",  "identity", "account",
                                                "info",   "error", "unknown"};
  return kNames[event.index()];
}

std::optional<std::int64_t> event_seq(const FirehoseEvent& event) {
  return std::visit(
      [](const auto& e) -> std::optional<std::int64_t> {
        if constexpr (requires { e.seq; }) {
          return e.seq;
        } else {
          return std::nullopt;
        }
      },
      event);
}

std::optional<std::string> event_time(const FirehoseEvent& event) {
  return std::visit(
      [](const auto& e) -> std::optional<std::string> {
        if constexpr (requires { e.time; }) {
          return e.time;
        } else {
          return std::nullopt;
        }
      },
      event);
}

Result<FirehoseEvent> decode_frame(std::string_view bytes) {
  std::size_t header_length = 0;
  auto header = decode_dag_cbor_prefix(bytes, header_length);
  if (!header) return std::unexpected(corrupt("frame header: " + header.error().message));
  auto body = decode_dag_cbor(bytes.substr(header_length));
  if (!body) return std::unexpected(corrupt("frame body: " + body.error().message));
  if (body->as_map() == nullptr) return std::unexpected(corrupt("frame body is not a map"));
  const DagValue* op = header->find("op");
  if (op == nullptr || op->as_integer() == nullptr)
    return std::unexpected(corrupt("frame header has no op"));
  if (*op->as_integer() == -1) {
    ErrorEvent e;
    const Fields f(*body);
    auto error = f.text("error");
    if (!error) return std::unexpected(error.error());
    e.error = *error;
    if (auto message = f.optional_text("message")) e.message = *message;
    return e;
  }
  if (*op->as_integer() != 1)
    return std::unexpected(corrupt("frame header op is neither 1 nor -1"));
  const DagValue* type = header->find("t");
  if (type == nullptr || type->as_text() == nullptr)
    return std::unexpected(corrupt("frame header has no t"));
  return decode_body(*type->as_text(), *body);
}

}  // namespace bulleted::firehose
