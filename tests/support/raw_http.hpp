// A raw HTTP/1.1 client over a loopback socket, for tests of the HTTP front:
// it sends exactly the bytes it is given and reads what comes back; and what
// the process holds meanwhile.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>
#include <string_view>

#include "appview/http/server.hpp"

namespace bulleted::testing {

using appview::HttpResponse;

// A connection that sends raw bytes and reads what comes back.
class Client {
 public:
  explicit Client(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    timeval timeout{20, 0};  // a reply that never comes fails the test
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  }
  ~Client() { ::close(fd_); }
  bool connected() const { return connected_; }
  int fd() const { return fd_; }
  // Everything until the server closes the connection (or 20 s pass).
  std::string until_closed() {
    std::string out;
    char buffer[65536];
    ssize_t n;
    while ((n = ::recv(fd_, buffer, sizeof buffer, 0)) > 0)
      out.append(buffer, static_cast<std::size_t>(n));
    closed_ = n == 0 || (n < 0 && errno == ECONNRESET);
    return out;
  }
  // The last read found the connection closed (or reset) by the server
  // (not timed out).
  bool closed() const { return closed_; }
  void send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }
  // Reads until the headers and `Content-Length` bytes (or the chunked body's
  // end, or the connection's end) have arrived.
  std::string response() {
    std::string out;
    char buffer[65536];
    while (true) {
      const std::size_t end = out.find("\r\n\r\n");
      if (end != std::string::npos) {
        const std::string head = out.substr(0, end);
        const std::size_t length = head.find("Content-Length: ");
        if (head.find("Transfer-Encoding: chunked") != std::string::npos) {
          if (out.ends_with("\r\n0\r\n\r\n")) return out;
        } else if (length != std::string::npos) {
          const std::size_t want = std::stoul(head.substr(length + 16));
          if (out.size() >= end + 4 + want) return out;
        }
      }
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      closed_ = n == 0 || (n < 0 && errno == ECONNRESET);
      if (n <= 0) return out;
      out.append(buffer, static_cast<std::size_t>(n));
    }
  }

 private:
  int fd_;
  bool connected_ = false;
  bool closed_ = false;
};

inline std::string status_line(const std::string& response) {
  return response.substr(0, response.find("\r\n"));
}

// The body of a chunked response, decoded.
inline std::string dechunk(const std::string& response) {
  std::size_t pos = response.find("\r\n\r\n") + 4;
  std::string body;
  while (pos < response.size()) {
    const std::size_t line_end = response.find("\r\n", pos);
    const std::size_t size = std::stoul(response.substr(pos, line_end - pos), nullptr, 16);
    if (size == 0) break;
    body += response.substr(line_end + 2, size);
    pos = line_end + 2 + size + 2;
  }
  return body;
}

inline HttpResponse plain(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.content_type = "text/plain";
  response.body = std::move(body);
  return response;
}

// A size the kernel reports for this process (/proc/self/status, e.g.
// "VmRSS", "VmSize"), in MiB; -1 when it is not there.
inline double process_status_mib(std::string_view field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  const std::string prefix = std::string(field) + ":";
  while (std::getline(status, line)) {
    if (line.starts_with(prefix)) return std::stod(line.substr(prefix.size())) / 1024;
  }
  return -1;
}

}  // namespace bulleted::testing
