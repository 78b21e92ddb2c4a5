// Building blocks for store tests: records and ops with readable defaults.
#pragma once

#include <optional>
#include <string>

#include "ordering/order_key.hpp"
#include "ordering/tid.hpp"
#include "schema/store.hpp"
#include "schema/syntax.hpp"

namespace bulleted::testing {

// A rev that sorts by `n`.
inline std::string rev(std::uint64_t n) {
  return ordering::Tid::from_parts(1'000'000 + n, 0).str();
}

inline std::string node_uri(const std::string& did, const std::string& rkey) {
  return schema::record_uri(did, schema::kNodeCollection, rkey);
}

struct NodeSpec {
  std::string did = "did:plc:alice";
  std::string rkey;
  std::optional<std::string> parent_rkey;  // same repo
  std::optional<std::string> parent_uri;   // any AT-URI, overrides parent_rkey
  std::optional<std::string> sort_key = "a0";
  std::string text = "text";
  std::uint64_t rev = 1;
};

inline schema::RecordOp upsert(const NodeSpec& spec) {
  schema::NodeRecord record;
  record.text = spec.text;
  record.created_at = "2026-11-30T12:00:00.000Z";
  if (spec.parent_uri) {
    record.parent = spec.parent_uri;
  } else if (spec.parent_rkey) {
    record.parent = node_uri(spec.did, *spec.parent_rkey);
  }
  record.sort_key = spec.sort_key;
  record.sort_key_valid = spec.sort_key && ordering::is_valid_key(*spec.sort_key);
  schema::RecordOp op;
  op.kind = schema::OpKind::kCreate;
  op.did = spec.did;
  op.rkey = spec.rkey;
  op.rev = rev(spec.rev);
  op.cid = "bafy" + spec.rkey + "-" + std::to_string(spec.rev);
  op.record = std::move(record);
  return op;
}

inline schema::RecordOp remove(const std::string& did, const std::string& rkey, std::uint64_t n) {
  schema::RecordOp op;
  op.kind = schema::OpKind::kDelete;
  op.did = did;
  op.rkey = rkey;
  op.rev = rev(n);
  return op;
}

}  // namespace bulleted::testing
