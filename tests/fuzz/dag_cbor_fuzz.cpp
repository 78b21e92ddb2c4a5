// libFuzzer target: strict DAG-CBOR decoding. Whatever decodes must be
// canonical: encoding it again gives back exactly the input bytes, and (for
// a map, what records and blocks are) its JSON form converts back to the
// same value.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "firehose/dag_cbor.hpp"

using namespace bulleted::firehose;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto value = decode_dag_cbor(bytes);
  if (!value) return 0;
  if (encode_dag_cbor(*value) != bytes) std::abort();  // only canonical forms decode
  if (value->as_map() == nullptr) return 0;  // JSON documents of the data model are objects
  auto again = from_json(to_json(*value));
  if (!again || encode_dag_cbor(*again) != bytes) std::abort();
  return 0;
}
