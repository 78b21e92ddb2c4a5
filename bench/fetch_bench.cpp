// The outbound XRPC client against a host on loopback: a large answer
// (a getRepo-sized CAR) fetched again and again, and many small answers
// (a DID document's size), each on a kept connection. Prints one JSON line
// per row: MB/s and milliseconds per call for the large, calls/s and the
// p50 / p99 of a call in microseconds for the small, and the process's
// peak resident memory at the end.
// Usage: fetch_bench [LARGE_MIB] [LARGE_CALLS] [SMALL_CALLS]  (default 64 20 5000)
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "firehose/client/xrpc_client.hpp"
#include "tests/support/loopback_port.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// Answers every request of every connection with /large or /small's body,
// keeping each connection open until the client closes it.
class Host {
 public:
  explicit Host(std::size_t large_bytes) : large_(large_bytes, 'x'), small_(2048, 'y') {
    fd_ = bulleted::testing::bound_loopback_socket(port_, 16);
    thread_ = std::thread([this] { serve(); });
  }
  ~Host() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
    for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
    for (auto& connection : connections_) connection.join();
    for (int fd : fds_) ::close(fd);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  // One thread a connection: a client may open another while it keeps one.
  void serve() {
    while (true) {
      const int client = ::accept(fd_, nullptr, nullptr);
      if (client < 0) return;
      const int one = 1;
      ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      fds_.push_back(client);
      connections_.emplace_back([this, client] { answer(client); });
    }
  }
  void answer(int client) {
    std::string pending;
    char buffer[8192];
    while (true) {
      std::size_t end = pending.find("\r\n\r\n");
      while (end == std::string::npos) {
        const ssize_t n = ::recv(client, buffer, sizeof buffer, 0);
        if (n <= 0) break;
        pending.append(buffer, static_cast<std::size_t>(n));
        end = pending.find("\r\n\r\n");
      }
      if (end == std::string::npos) break;
      const std::string& body = pending.starts_with("GET /large") ? large_ : small_;
      pending.erase(0, end + 4);
      std::string head =
          "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: " +
          std::to_string(body.size()) + "\r\n\r\n";
      if (&body == &small_) head += body;  // one send: head and a small body together
      if (!put(client, head) || (&body != &small_ && !put(client, body))) break;
    }
  }
  static bool put(int fd, const std::string& bytes) {
    std::size_t at = 0;
    while (at < bytes.size()) {
      const ssize_t n = ::send(fd, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
      if (n <= 0) return false;
      at += static_cast<std::size_t>(n);
    }
    return true;
  }

  std::string large_;
  std::string small_;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  // Touched by thread_ only, until it ends.
  std::vector<int> fds_;
  std::vector<std::thread> connections_;
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 64;
  const int large_calls = argc > 2 ? std::atoi(argv[2]) : 20;
  const int small_calls = argc > 3 ? std::atoi(argv[3]) : 5000;
  Host host(mib << 20);
  auto client =
      bulleted::firehose::make_http_xrpc_client(std::chrono::seconds(60), (mib << 20) + 1024);
  auto call = [&](const char* path, std::size_t expected) {
    auto reply = client->call({.base_url = host.url(), .path = path});
    if (!reply || reply->status != 200 || reply->body.size() != expected) {
      std::fprintf(stderr, "a call failed: %s\n",
                   reply ? "wrong answer" : reply.error().message.c_str());
      std::exit(1);
    }
  };
  call("/large", mib << 20);  // warm: the connection made, the pages touched
  auto start = Clock::now();
  for (int i = 0; i < large_calls; ++i) call("/large", mib << 20);
  const double large_seconds = seconds_since(start);
  std::printf(
      "{\"benchmark\":\"large\",\"mib\":%zu,\"calls\":%d,\"mbPerSecond\":%.1f,\"msPerCall\":%.2f}"
      "\n",
      mib, large_calls, static_cast<double>(mib << 20) * large_calls / large_seconds / 1e6,
      large_seconds * 1e3 / large_calls);
  std::vector<double> micros;
  micros.reserve(static_cast<std::size_t>(small_calls));
  start = Clock::now();
  for (int i = 0; i < small_calls; ++i) {
    const auto one = Clock::now();
    call("/small", 2048);
    micros.push_back(seconds_since(one) * 1e6);
  }
  const double small_seconds = seconds_since(start);
  std::sort(micros.begin(), micros.end());
  const auto at = [&](double q) {
    return micros[std::min(micros.size() - 1, static_cast<std::size_t>(q * micros.size()))];
  };
  std::printf(
      "{\"benchmark\":\"small\",\"bytes\":2048,\"calls\":%d,\"callsPerSecond\":%.0f,"
      "\"p50Micros\":%.1f,\"p99Micros\":%.1f}\n",
      small_calls, small_calls / small_seconds, at(0.5), at(0.99));
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("{\"benchmark\":\"memory\",\"peakRssMb\":%.1f}\n", usage.ru_maxrss / 1024.0);
  return 0;
}
