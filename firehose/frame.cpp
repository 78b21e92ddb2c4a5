#include "firehose/frame.hpp"

#include "firehose/cbor_reader.hpp"
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

// A commit op's map read in place; false as read_commit.
bool read_commit_op(CborReader& reader, const CborItem& map, CommitOp& op) {
  if (map.kind != CborKind::kMap) return false;
  bool has_action = false;
  bool has_path = false;
  std::string_view previous;
  for (std::size_t i = 0; i < map.size; ++i) {
    std::string_view key;
    CborItem value;
    if (!read_map_entry(reader, i, previous, key, value) || key.starts_with('$')) return false;
    if (text_is(key, "action")) {
      if (value.kind != CborKind::kText ||
          (!text_is(value.data, "create") && !text_is(value.data, "update") &&
           !text_is(value.data, "delete"))) {
        return false;
      }
      op.action = value.data;
      has_action = true;
    } else if (text_is(key, "path")) {
      const std::size_t slash = value.data.find('/');
      if (value.kind != CborKind::kText || slash == std::string_view::npos) return false;
      op.collection = value.data.substr(0, slash);
      op.rkey = value.data.substr(slash + 1);
      has_path = true;
    } else if (text_is(key, "cid") || text_is(key, "prev")) {
      if (value.kind == CborKind::kLink) {
        (text_is(key, "cid") ? op.cid : op.prev) = reader.link();
      } else if (value.kind != CborKind::kNull) {
        return false;
      }
    } else if (!read_dag_value(reader, value, 3)) {  // inside the body, ops and this op
      return false;
    }
  }
  return has_action && has_path;
}

// A #commit body read in place, without building its map: the common case,
// taken only when every field is as a well-formed commit has it. Anything
// else (a missing or mistyped field, a broken rule, a key starting with '$')
// returns false and the generic decoder gives the event or the reason.
bool read_commit(std::string_view body, CommitEvent& e) {
  CborReader reader(body);
  CborItem map;
  if (!reader.next(map) || map.kind != CborKind::kMap) return false;
  unsigned required = 0;  // one bit each: seq, repo, rev, time, blocks, ops
  std::string_view previous;
  for (std::size_t i = 0; i < map.size; ++i) {
    std::string_view key;
    CborItem value;
    if (!read_map_entry(reader, i, previous, key, value) || key.starts_with('$')) return false;
    const bool text = value.kind == CborKind::kText;
    if (text_is(key, "seq")) {
      if (value.kind != CborKind::kInteger || value.integer < 0) return false;
      e.seq = value.integer;
      required |= 1;
    } else if (text_is(key, "repo")) {
      if (!text || !schema::Did::parse(value.data)) return false;
      e.repo = value.data;
      required |= 2;
    } else if (text_is(key, "rev") || text_is(key, "since")) {
      if (text_is(key, "since") && value.kind == CborKind::kNull) continue;
      if (!text || !ordering::Tid::parse(value.data)) return false;
      (text_is(key, "rev") ? e.rev : e.since.emplace()) = value.data;
      required |= text_is(key, "rev") ? 4 : 0;
    } else if (text_is(key, "time")) {
      if (!text) return false;
      e.time = value.data;
      required |= 8;
    } else if (text_is(key, "blocks")) {
      if (value.kind != CborKind::kBytes) return false;
      e.blocks = value.data;
      required |= 16;
    } else if (text_is(key, "commit") || text_is(key, "prevData")) {
      if (value.kind == CborKind::kLink) {
        (text_is(key, "commit") ? e.commit : e.prev_data) = reader.link();
      } else if (value.kind != CborKind::kNull) {
        return false;
      }
    } else if (text_is(key, "tooBig") && value.kind == CborKind::kBool) {
      e.too_big = value.integer != 0;
    } else if (text_is(key, "ops")) {
      if (value.kind != CborKind::kArray) return false;
      e.ops.resize(value.size);
      for (CommitOp& op : e.ops) {
        CborItem item;
        if (!reader.next(item) || !read_commit_op(reader, item, op)) return false;
      }
      required |= 32;
    } else if (!read_dag_value(reader, value, 1)) {
      return false;
    }
  }
  return required == 63 && reader.at_end();
}

// A frame header {t, op} read in place; `length` receives its size. False
// for anything else, left to the generic decoder.
bool read_frame_header(std::string_view bytes, std::int64_t& op, std::string_view& type,
                       std::size_t& length) {
  CborReader reader(bytes);
  CborItem map;
  if (!reader.next(map) || map.kind != CborKind::kMap || map.size != 2) return false;
  std::string_view first;
  std::string_view key;
  CborItem value;
  if (!read_map_key(reader, nullptr, first) || !text_is(first, "t") || !reader.next(value) ||
      value.kind != CborKind::kText) {
    return false;
  }
  type = value.data;
  if (!read_map_key(reader, &first, key) || !text_is(key, "op") || !reader.next(value) ||
      value.kind != CborKind::kInteger) {
    return false;
  }
  op = value.integer;
  length = reader.pos();
  return true;
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

Result<FirehoseEvent> decode_frame(std::string_view bytes, DecodePath path) {
  std::size_t header_length = 0;
  // The common case first: a #commit read in place. Anything else, and any
  // commit that is not as it should be, goes the generic way below.
  std::int64_t op_number = 0;
  std::string_view type_name;
  if (path != DecodePath::kGeneric &&
      read_frame_header(bytes, op_number, type_name, header_length) && op_number == 1 &&
      type_name == "#commit") {
    if (CommitEvent e; read_commit(bytes.substr(header_length), e)) return e;
  }
  if (path == DecodePath::kInPlace) return std::unexpected(corrupt("not read in place"));
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
