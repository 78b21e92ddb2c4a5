// Everything a frame or record decoded to, as text: two decoders' answers
// compared as strings show where they differ (tests and the frame fuzzer).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "firehose/frame.hpp"
#include "firehose/records.hpp"

namespace bulleted::testing {

inline nlohmann::json link_json(const std::optional<firehose::Cid>& cid) {
  return cid ? nlohmann::json(cid->str()) : nlohmann::json();
}

// Everything decoding produced, as text that shows where two results differ.
inline std::string describe(const Result<firehose::FirehoseEvent>& event) {
  if (!event) return "error: " + event.error().message;
  const auto* commit = std::get_if<firehose::CommitEvent>(&*event);
  if (commit == nullptr) {
    return std::string(firehose::event_type_name(*event)) + " " +
           std::to_string(firehose::event_seq(*event).value_or(-1));
  }
  nlohmann::json ops = nlohmann::json::array();
  for (const firehose::CommitOp& op : commit->ops) {
    ops.push_back({op.action, op.collection, op.rkey, link_json(op.cid), link_json(op.prev)});
  }
  return nlohmann::json{
      {"seq", commit->seq},
      {"repo", commit->repo},
      {"rev", commit->rev},
      {"since", commit->since ? nlohmann::json(*commit->since) : nlohmann::json()},
      {"time", commit->time},
      {"blocks", firehose::Cid::of_dag_cbor(commit->blocks).str()},
      {"commit", link_json(commit->commit)},
      {"prevData", link_json(commit->prev_data)},
      {"tooBig", commit->too_big},
      {"ops", ops}}
      .dump();
}

inline std::string describe(const std::expected<schema::NodeRecord, std::string>& record) {
  if (!record) return "rejected: " + record.error();
  return schema::to_json_text(*record) + (record->sort_key_valid ? " valid key" : " invalid key");
}

}  // namespace bulleted::testing
