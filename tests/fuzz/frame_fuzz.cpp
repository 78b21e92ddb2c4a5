// libFuzzer target: one websocket message through the whole ingest decode
// path (frame, then the commit's CAR and records). Must never crash, hang or
// leak, whatever the bytes; and the in-place readers of commits and records
// must give the generic decoder's answer (the input is tried as a record
// block too).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "firehose/frame.hpp"
#include "firehose/records.hpp"
#include "firehose/verify.hpp"
#include "tests/support/describe_decoded.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  using bulleted::firehose::DecodePath;
  using bulleted::testing::describe;
  auto event = bulleted::firehose::decode_frame(bytes);
  if (describe(event) != describe(bulleted::firehose::decode_frame(bytes, DecodePath::kGeneric))) {
    std::abort();
  }
  if (describe(bulleted::firehose::parse_record_block(bytes)) !=
      describe(bulleted::firehose::parse_record_block(bytes, DecodePath::kGeneric))) {
    std::abort();
  }
  if (!event) return 0;
  if (auto* commit = std::get_if<bulleted::firehose::CommitEvent>(&*event)) {
    (void)bulleted::firehose::commit_records(*commit);
  }
  if (auto* sync = std::get_if<bulleted::firehose::SyncEvent>(&*event)) {
    (void)bulleted::firehose::read_repo(sync->blocks, sync->did);
    (void)bulleted::firehose::check_sync_proof(*sync);
  }
  return 0;
}
