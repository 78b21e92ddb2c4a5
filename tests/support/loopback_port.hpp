// Loopback sockets for tests: a listening one on a port of the system's
// choosing, and a port that was free a moment ago.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace bulleted::testing {

// A socket bound to 127.0.0.1 on a free port (written to `port`), listening
// with `backlog` when it is above 0.
inline int bound_loopback_socket(int& port, int backlog = 0) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  port = ntohs(address.sin_port);
  if (backlog > 0) ::listen(fd, backlog);
  return fd;
}

// A port that was free a moment ago: bound, read back and closed. Nothing
// listens on it until a test does (a connection to it is refused).
inline int free_loopback_port() {
  int port = 0;
  ::close(bound_loopback_socket(port));
  return port;
}

}  // namespace bulleted::testing
