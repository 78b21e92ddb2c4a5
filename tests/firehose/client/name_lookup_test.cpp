// Name lookups bounded by their caller's deadline: a slow name server (the
// network chooses a handle's or a did:web's) holds neither the caller past
// it nor more than a bounded number of threads.
#include "firehose/client/name_lookup.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <thread>

namespace bulleted::firehose {
namespace {

using std::chrono::steady_clock;

addrinfo stream_hints(int flags = 0) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = flags;
  return hints;
}

// A name server that answers nobody until released, then answers every
// name with 127.0.0.1; one a test (held_lookup<N> asks the Nth).
struct HeldNameServer {
  std::mutex mutex;
  std::condition_variable changed;
  bool released = false;
  int asked = 0;
  void wait_until_asked(int times) {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return asked == times; });
  }
  void release() {
    std::lock_guard lock(mutex);
    released = true;
    changed.notify_all();
  }
};
HeldNameServer g_servers[2];

template <int N>
int held_lookup(const char* /*host*/, const char* port, const addrinfo* hints, addrinfo** found) {
  HeldNameServer& server = g_servers[N];
  {
    std::unique_lock lock(server.mutex);
    ++server.asked;
    server.changed.notify_all();
    server.changed.wait(lock, [&] { return server.released; });
  }
  return getaddrinfo("127.0.0.1", port, hints, found);
}

TEST(NameLookups, AnAddressWrittenOutIsReadAtOnceAndANameThatIsNoneIsRefused) {
  // An address written out is read without a name server (nor a thread).
  NameLookups lookups(0);
  auto found = lookups.look_up("127.0.0.1", "443", stream_hints(AI_NUMERICSERV),
                               steady_clock::now() + std::chrono::seconds(30));
  ASSERT_TRUE(found.has_value()) << found.error().message;
  ASSERT_EQ((*found)->ai_family, AF_INET);
  const auto* address = reinterpret_cast<const sockaddr_in*>((*found)->ai_addr);
  EXPECT_EQ(ntohl(address->sin_addr.s_addr), 0x7f000001u);
  EXPECT_EQ(ntohs(address->sin_port), 443);
  // A name is looked up (here by the system's resolver, asked only for
  // addresses written out: this one is none).
  NameLookups names;
  auto none = names.look_up("not an address", "", stream_hints(AI_NUMERICHOST),
                            steady_clock::now() + std::chrono::seconds(30));
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().code, ErrorCode::kUpstreamFailure);
  EXPECT_EQ(none.error().message, "cannot resolve not an address");
  EXPECT_EQ(names.running(), 0u);
}

TEST(NameLookups, ASlowNameServerHoldsItsCallersOnlyUntilTheirDeadlinesAndTwoThreadsAtMost) {
  NameLookups lookups(2, held_lookup<0>);
  for (int i = 0; i < 2; ++i) {
    auto late = lookups.look_up("slow.example", "", stream_hints(),
                                steady_clock::now() + std::chrono::milliseconds(20));
    ASSERT_FALSE(late.has_value());
    EXPECT_EQ(late.error().code, ErrorCode::kUpstreamFailure);
    EXPECT_EQ(late.error().message, "resolving slow.example: timed out");
  }
  g_servers[0].wait_until_asked(2);
  EXPECT_EQ(lookups.running(), 2u) << "the lookups left behind still run";
  // Both places are taken: a third is refused at once, however far its
  // deadline, and never reaches the name server.
  auto third = lookups.look_up("slow.example", "", stream_hints(),
                               steady_clock::now() + std::chrono::hours(1));
  ASSERT_FALSE(third.has_value());
  EXPECT_NE(third.error().message.find("too many name lookups"), std::string::npos)
      << third.error().message;
  {
    std::lock_guard lock(g_servers[0].mutex);
    EXPECT_EQ(g_servers[0].asked, 2);
  }
  g_servers[0].release();
  // The lookups left behind end and free their answers (the sanitizers'
  // build would see one that is not); their places come back.
  while (lookups.running() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  auto answered = lookups.look_up("slow.example", "", stream_hints(),
                                  steady_clock::now() + std::chrono::hours(1));
  ASSERT_TRUE(answered.has_value()) << answered.error().message;
  EXPECT_EQ((*answered)->ai_family, AF_INET);
}

// Requests naming names on a slow name server take at most their share of
// the places, one client at most its own part of that (lookups left behind
// included); the process's own lookups (the operator's hosts, the
// firehose's) still find a place.
TEST(NameLookups, RequestsKeepToTheirShareAndOneClientToItsPart) {
  NameLookups lookups(8, held_lookup<1>, 4, 2);
  auto soon = [] { return steady_clock::now() + std::chrono::milliseconds(20); };
  auto message = [&](const char* host) {
    auto found = lookups.look_up(host, "", stream_hints(), soon());
    return found ? std::string("found") : found.error().message;
  };
  {
    NameLookups::ForClient a("a");
    EXPECT_EQ(message("one.slow.test"), "resolving one.slow.test: timed out");
    EXPECT_EQ(message("two.slow.test"), "resolving two.slow.test: timed out");
    EXPECT_NE(message("three.slow.test").find("too many name lookups"), std::string::npos)
        << "the client's third, while its two are left behind";
  }
  {
    NameLookups::ForClient b("b");
    EXPECT_EQ(message("four.slow.test"), "resolving four.slow.test: timed out");
    EXPECT_EQ(message("five.slow.test"), "resolving five.slow.test: timed out");
  }
  {
    NameLookups::ForClient c("c");
    EXPECT_NE(message("six.slow.test").find("too many name lookups"), std::string::npos)
        << "the requests' share is taken";
  }
  EXPECT_EQ(lookups.counts().requests, 4u);
  EXPECT_EQ(lookups.counts().refused, 2u);
  EXPECT_EQ(message("plc.operator.test"), "resolving plc.operator.test: timed out")
      << "the process's own lookup found a place (and waited on the name server)";
  EXPECT_EQ(lookups.counts().running, 5u);
  EXPECT_EQ(lookups.counts().requests, 4u);
  g_servers[1].wait_until_asked(5);
  g_servers[1].release();
  while (lookups.running() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  NameLookups::ForClient c("c");
  EXPECT_EQ(message("seven.slow.test"), "found") << "places come back";
}

}  // namespace
}  // namespace bulleted::firehose
