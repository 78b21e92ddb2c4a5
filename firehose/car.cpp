#include "firehose/car.hpp"

#include "firehose/dag_cbor.hpp"

namespace bulleted::firehose {
namespace {

Error corrupt(std::string message) {
  return Error{ErrorCode::kCorrupt, "CAR: " + std::move(message)};
}

}  // namespace

Result<CarFile> CarFile::parse(std::string_view bytes) {
  std::size_t pos = 0;
  auto header_length = read_uvarint(bytes, pos);
  if (!header_length) return std::unexpected(corrupt(header_length.error().message));
  if (*header_length == 0 || *header_length > bytes.size() - pos) {
    return std::unexpected(corrupt("header length past the end"));
  }
  auto header = decode_dag_cbor(bytes.substr(pos, *header_length));
  if (!header) return std::unexpected(corrupt("header: " + header.error().message));
  pos += *header_length;
  const DagValue* version = header->find("version");
  if (version == nullptr || version->as_integer() == nullptr || *version->as_integer() != 1) {
    return std::unexpected(corrupt("only version 1 is read"));
  }
  CarFile car;
  const DagValue* roots = header->find("roots");
  if (roots == nullptr || roots->as_array() == nullptr) return std::unexpected(corrupt("no roots"));
  for (const auto& root : *roots->as_array()) {
    if (root.as_cid() == nullptr) return std::unexpected(corrupt("a root is not a CID"));
    car.roots_.push_back(*root.as_cid());
  }
  while (pos < bytes.size()) {
    auto section_length = read_uvarint(bytes, pos);
    if (!section_length) return std::unexpected(corrupt(section_length.error().message));
    if (*section_length == 0 || *section_length > bytes.size() - pos) {
      return std::unexpected(corrupt("section runs past the end"));
    }
    const std::string_view section = bytes.substr(pos, *section_length);
    std::size_t cid_length = 0;
    auto cid = Cid::read_prefix(section, cid_length);
    if (!cid) return std::unexpected(corrupt("section CID: " + cid.error().message));
    car.blocks_.emplace(section.substr(0, cid_length), section.substr(cid_length));
    pos += *section_length;
  }
  return car;
}

std::string write_car(const Cid& root, const std::vector<std::pair<Cid, std::string>>& blocks) {
  const std::string header = encode_dag_cbor(DagValue{DagMap{
      {"roots", DagValue{DagArray{DagValue{root}}}}, {"version", DagValue{std::int64_t{1}}}}});
  std::string out;
  write_uvarint(out, header.size());
  out += header;
  for (const auto& [cid, block] : blocks) {
    write_uvarint(out, cid.bytes().size() + block.size());
    out += cid.bytes();
    out += block;
  }
  return out;
}

Result<std::string_view> CarFile::block(const Cid& cid) const {
  auto it = blocks_.find(cid.bytes());
  if (it == blocks_.end())
    return std::unexpected(Error{ErrorCode::kNotFound, "CAR has no block " + cid.str()});
  if (!cid.matches(it->second)) {
    return std::unexpected(corrupt("block " + cid.str() + " does not match its digest"));
  }
  return it->second;
}

}  // namespace bulleted::firehose

namespace bulleted::firehose {

std::optional<std::string_view> CarFile::raw_block(const Cid& cid) const {
  auto it = blocks_.find(cid.bytes());
  if (it == blocks_.end()) return std::nullopt;
  return it->second;
}

Result<void> CarFile::verify_blocks() const {
  for (const auto& [cid_bytes, block] : blocks_) {
    auto cid = Cid::from_bytes(cid_bytes);
    if (!cid || !cid->matches(block)) {
      return std::unexpected(
          corrupt("block " + (cid ? cid->str() : std::string("?")) + " does not match its digest"));
    }
  }
  return {};
}

}  // namespace bulleted::firehose
