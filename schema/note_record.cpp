#include "schema/note_record.hpp"

#include "schema/json_text.hpp"
#include "schema/syntax.hpp"

namespace bulleted::schema {

std::string note_subject(std::string_view did, std::string_view rkey) {
  return record_uri(did, kNodeCollection, rkey);
}

std::expected<NoteRecord, std::string> parse_note_record(const RecordFields& fields,
                                                         std::string_view did,
                                                         std::string_view rkey) {
  using Kind = RecordField::Kind;
  if (!fields.is_object()) return std::unexpected("a record is an object");
  if (const RecordField type = fields.get("$type"); type.kind != Kind::kAbsent) {
    if (type.kind != Kind::kString || type.text != kNoteCollection) {
      return std::unexpected("$type is not app.bulleted.note");
    }
  }
  NoteRecord note;
  const RecordField subject = fields.get("subject");
  if (subject.kind != Kind::kString) return std::unexpected("subject is required");
  // The node at the note's own address, and nothing else: a note names no
  // other node, in this repo or another.
  if (subject.text != note_subject(did, rkey)) {
    return std::unexpected("subject does not name the node at the note's own address");
  }
  note.subject = std::string(subject.text);
  const RecordField text = fields.get("text");
  if (text.kind != Kind::kString) return std::unexpected(std::string(kTextRequired));
  if (auto reason = text_field_error("text", text.text)) return std::unexpected(*reason);
  note.text = std::string(text.text);
  const RecordField created = fields.get("createdAt");
  if (created.kind != Kind::kString) return std::unexpected("createdAt is required");
  if (auto when = Datetime::parse(created.text); !when) {
    return std::unexpected("createdAt: " + when.error());
  }
  note.created_at = std::string(created.text);
  if (fields.get("facets").kind == Kind::kArray) {
    note.facets = sanitize_facets(note.text, fields.facets_json());
  }
  return note;
}

std::expected<NoteRecord, std::string> parse_note_record(const nlohmann::json& json,
                                                         std::string_view did,
                                                         std::string_view rkey) {
  return parse_note_record(JsonRecordFields(json), did, rkey);
}

NoteRecord make_note(std::string_view did, std::string_view rkey, std::string text,
                     std::string created_at) {
  return NoteRecord{note_subject(did, rkey), std::move(text), std::move(created_at), nullptr};
}

nlohmann::json to_json(const NoteRecord& note) {
  nlohmann::json json = {{"$type", kNoteCollection},
                         {"subject", note.subject},
                         {"text", note.text},
                         {"createdAt", note.created_at}};
  if (note.facets.is_array()) json["facets"] = note.facets;
  return json;
}

std::string to_json_text(const NoteRecord& note) { return to_json(note).dump(); }

}  // namespace bulleted::schema
