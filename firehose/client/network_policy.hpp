// Addresses that come from the network (a DID document's PDS endpoint, a
// relay's redirect, a did:web host) are not trusted: before one is fetched
// it must be https, and its host must not be, or resolve to, a loopback,
// private, link-local, multicast or otherwise unroutable address. The
// operator's own addresses (the firehose, the PLC directory, the handle
// resolver) do not pass through here.
//
// `allow_private` (network.allowPrivateAddresses) lifts both rules, for test
// networks on 127.0.0.1.
//
// The check looks no name up: an address written out is checked here, and
// a name by the HTTP client on the addresses it connects to
// (HttpExchange::public_only), looked up once by the exchange's deadline
// (name_lookup.hpp); a name that resolves to such an address, or changes
// its answer (DNS rebinding), is refused there. Redirects are checked hop
// by hop by the caller.
#pragma once

#include <string>
#include <string_view>

#include "schema/error.hpp"

namespace bulleted::firehose {

// kForbidden-like refusal as kInvalidRequest with the reason.
Result<void> check_network_url(std::string_view url, bool allow_private);

// Whether an IPv4 or IPv6 address (text form) is one the network may not
// send this app view to.
bool is_private_address(std::string_view address);

// "scheme://host[:port]" of an absolute http(s) URL, and the rest (path and
// query, "/" when empty); nullopt-like kInvalidRequest otherwise.
Result<std::pair<std::string, std::string>> split_url(std::string_view url);

}  // namespace bulleted::firehose
