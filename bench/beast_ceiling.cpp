// The ceiling of another HTTP front on this machine, for comparison with
// http_ceiling (cpprestsdk): Boost.Beast over Boost.Asio, asynchronous,
// keep-alive, THREADS threads on one io_context, answering every request
// with the same fixed JSON body as http_ceiling and no work. Measurement
// only: the app view does not use it. Runs until SIGINT/SIGTERM.
// Usage: beast_ceiling PORT [BYTES] [THREADS]
// clang-format off
#include <utility>  // before Boost 1.74's Asio, which uses std::exchange without it
// clang-format on
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, const std::string& body) : stream_(std::move(socket)), body_(body) {}

  void read() {
    request_ = {};
    http::async_read(stream_, buffer_, request_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       if (!ec) self->answer();
                     });
  }

 private:
  void answer() {
    auto response =
        std::make_shared<http::response<http::string_body>>(http::status::ok, request_.version());
    response->set(http::field::content_type, "application/json");
    response->keep_alive(request_.keep_alive());
    response->body() = body_;
    response->prepare_payload();
    http::async_write(stream_, *response,
                      [self = shared_from_this(), response](beast::error_code ec, std::size_t) {
                        if (!ec && response->keep_alive()) self->read();
                      });
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  const std::string& body_;
};

void accept(tcp::acceptor& acceptor, const std::string& body) {
  acceptor.async_accept([&acceptor, &body](beast::error_code ec, tcp::socket socket) {
    if (!ec) {
      socket.set_option(tcp::no_delay(true));
      std::make_shared<Session>(std::move(socket), body)->read();
    }
    accept(acceptor, body);
  });
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const auto port = static_cast<unsigned short>(std::atoi(argv[1]));
  const std::size_t bytes = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 2000;
  const int threads = argc > 3 ? std::atoi(argv[3]) : 2;
  // The same body as http_ceiling's.
  std::string body = "{\"nodes\":[";
  while (body.size() < bytes) body += "{\"text\":\"a bullet of ordinary length\"},";
  body += "{}]}";
  asio::io_context context(threads);
  tcp::acceptor acceptor(context, {asio::ip::make_address("127.0.0.1"), port});
  accept(acceptor, body);
  asio::signal_set signals(context, SIGINT, SIGTERM);
  signals.async_wait([&](beast::error_code, int) { context.stop(); });
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back([&] { context.run(); });
  context.run();
  for (auto& thread : pool) thread.join();
  return 0;
}
