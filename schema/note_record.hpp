// The app.bulleted.note record: a node's note, a record of its own at the
// node's record key (at://<did>/app.bulleted.note/<rkey> supplements
// at://<did>/app.bulleted.node/<rkey>). Parsed, validated and written like
// the node record (schema/node_record.hpp): reading is lenient within the
// app view's caps, and its `subject` must name the node at its own address.
#pragma once

#include <expected>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "schema/node_record.hpp"

namespace bulleted::schema {

struct NoteRecord {
  std::string subject;  // at://<did>/app.bulleted.node/<rkey>, as written
  std::string text;
  std::string created_at;
  nlohmann::json facets;  // null when absent; kept for export
};

// The subject a note at `did`/`rkey` must name.
std::string note_subject(std::string_view did, std::string_view rkey);

// Parses and validates the note found at `did`/`rkey`: text (within
// kMaxTextBytes and kMaxTextGraphemes, like any text the index keeps),
// createdAt, and a subject naming the node at the same address (anything
// else makes the record invalid: it is counted, never attached).
std::expected<NoteRecord, std::string> parse_note_record(const RecordFields& fields,
                                                         std::string_view did,
                                                         std::string_view rkey);
std::expected<NoteRecord, std::string> parse_note_record(const nlohmann::json& json,
                                                         std::string_view did,
                                                         std::string_view rkey);

// A note for the node at `did`/`rkey`, as this app view writes it.
NoteRecord make_note(std::string_view did, std::string_view rkey, std::string text,
                     std::string created_at);

// The record's JSON form, with $type, for storage and for writing to a PDS.
nlohmann::json to_json(const NoteRecord& note);
std::string to_json_text(const NoteRecord& note);

}  // namespace bulleted::schema
