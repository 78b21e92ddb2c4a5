// CAR v1 files (a firehose commit's `blocks`, com.atproto.sync.getRepo):
// a DAG-CBOR header {roots, version: 1}, then sections of
// uvarint(length) || CID || block. Bounds-checked; blocks are found by CID,
// never by position.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "firehose/cid.hpp"
#include "schema/error.hpp"

namespace bulleted::firehose {

class CarFile {
 public:
  // Parses `bytes`, which must outlive the CarFile (blocks are views).
  static Result<CarFile> parse(std::string_view bytes);

  const std::vector<Cid>& roots() const { return roots_; }
  std::size_t block_count() const { return blocks_.size(); }
  // The block named by `cid`, checked against its digest; kNotFound when
  // absent, kCorrupt when the bytes do not hash to the CID.
  Result<std::string_view> block(const Cid& cid) const;
  bool contains(const Cid& cid) const { return blocks_.contains(cid.bytes()); }
  // The block named by `cid` as it is, unchecked: for readers that check it
  // themselves or after verify_blocks().
  std::optional<std::string_view> raw_block(const Cid& cid) const;
  // Checks that every block hashes to the CID that names it; kCorrupt names
  // the first that does not (or a CID this reader cannot check).
  Result<void> verify_blocks() const;

 private:
  std::vector<Cid> roots_;
  // CID bytes -> block, both views into the parsed bytes.
  std::unordered_map<std::string_view, std::string_view> blocks_;
};

// A CAR v1 file with one root and `blocks` in the order given (for tests,
// benchmarks and anything that must hand a repo slice on).
std::string write_car(const Cid& root, const std::vector<std::pair<Cid, std::string>>& blocks);

}  // namespace bulleted::firehose
