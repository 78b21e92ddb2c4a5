// A benchmark's node records: an ordinary bullet under `parent` (an rkey of
// the same repo; nullopt: top level) at `sort_key`, as an op for
// Store::apply.
#pragma once

#include <optional>
#include <string>

#include "schema/store.hpp"
#include "schema/syntax.hpp"

namespace bulleted::bench {

inline schema::RecordOp node_op(const std::string& did, const std::string& rkey,
                                const std::optional<std::string>& parent,
                                const std::string& sort_key,
                                const std::string& rev = "3kaaaaaaaaa22") {
  schema::NodeRecord record;
  record.text = "A bullet of ordinary length, like most notes people keep: " + rkey;
  record.created_at = "2026-11-30T12:00:00.000Z";
  if (parent) record.parent = schema::record_uri(did, schema::kNodeCollection, *parent);
  record.sort_key = sort_key;
  record.sort_key_valid = true;
  schema::RecordOp op;
  op.did = did;
  op.rkey = rkey;
  op.rev = rev;
  op.cid = "bafyreib" + rkey;
  op.record = std::move(record);
  return op;
}

}  // namespace bulleted::bench
