// The ceiling of the HTTP front on this machine: the same HttpServer (its
// connections, worker pool) answering every request with a fixed JSON body
// (2 KB unless BYTES says) and no work. Runs until SIGINT/SIGTERM.
// Usage: http_ceiling PORT [BYTES]
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "appview/http/server.hpp"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  const std::size_t bytes = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 2000;
  std::string body = "{\"nodes\":[";
  while (body.size() < bytes) body += "{\"text\":\"a bullet of ordinary length\"},";
  body += "{}]}";
  bulleted::appview::HttpServerOptions options;
  options.port = std::atoi(argv[1]);
  bulleted::appview::HttpServer server(options, [&body](const bulleted::appview::HttpRequest&) {
    return bulleted::appview::HttpResponse{200, "application/json", body, {}};
  });
  if (!server.start()) return 1;
  int received = 0;
  sigwait(&signals, &received);
  server.stop(std::chrono::seconds(1));
  return 0;
}
