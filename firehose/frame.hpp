// com.atproto.sync.subscribeRepos frames: two concatenated DAG-CBOR items,
// a header {op, t} then a body. Decoding checks every field the app view
// relies on (DIDs, revs, paths); a commit's CAR is kept as bytes and read
// only when the commit carries an app.bulleted.node op.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "firehose/cid.hpp"
#include "schema/error.hpp"

namespace bulleted::firehose {

struct CommitOp {
  std::string action;  // create, update, delete
  std::string collection;
  std::string rkey;
  std::optional<Cid> cid;
  std::optional<Cid> prev;
};

struct CommitRecords;  // firehose/records.hpp

struct CommitEvent {
  std::int64_t seq = 0;
  std::string repo;
  std::string rev;
  std::optional<std::string> since;
  std::string time;
  std::vector<CommitOp> ops;
  std::string blocks;  // a CAR v1 file
  std::optional<Cid> commit;
  std::optional<Cid> prev_data;
  bool too_big = false;
  // The app.bulleted.node ops read from `blocks` ahead of indexing
  // (predecode_records, on the socket's thread); `blocks` is emptied then.
  std::shared_ptr<Result<CommitRecords>> records;
};

struct SyncEvent {
  std::int64_t seq = 0;
  std::string did;
  std::string rev;
  std::string time;
  std::string blocks;
};

struct IdentityEvent {
  std::int64_t seq = 0;
  std::string did;
  std::string time;
  std::optional<std::string> handle;
};

struct AccountEvent {
  std::int64_t seq = 0;
  std::string did;
  std::string time;
  bool active = true;
  std::optional<std::string> status;
};

struct InfoEvent {
  std::string name;
  std::optional<std::string> message;
};

struct ErrorEvent {
  std::string error;
  std::optional<std::string> message;
};

// A message type this consumer does not know: skipped.
struct UnknownEvent {
  std::string type;
};

using FirehoseEvent = std::variant<CommitEvent, SyncEvent, IdentityEvent, AccountEvent, InfoEvent,
                                   ErrorEvent, UnknownEvent>;

// The stable name of an event's type for metrics: "commit", "sync", ...
std::string_view event_type_name(const FirehoseEvent& event);
// The event's seq, when it has one.
std::optional<std::int64_t> event_seq(const FirehoseEvent& event);
// The event's time, when it has one.
std::optional<std::string> event_time(const FirehoseEvent& event);

// How a frame or a record block is read. kBest reads the common case (a
// #commit frame, a record that is a plain map) in place, straight into its
// fields, and leaves everything else, and anything that is not as it should
// be, to the generic decoder (a DagValue tree), whose answer or reason then
// stands. kGeneric and kInPlace force one way, so that tests can hold the two
// to each other; kInPlace fails with kCorrupt "not read in place" where it
// would have handed over.
enum class DecodePath { kBest, kGeneric, kInPlace };

// Decodes one websocket message. Errors are kCorrupt with a reason.
Result<FirehoseEvent> decode_frame(std::string_view bytes, DecodePath path = DecodePath::kBest);

}  // namespace bulleted::firehose
