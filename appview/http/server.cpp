#include "appview/http/server.hpp"

#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <limits>
// clang-format off
#include <utility>  // before asio: its awaitable.hpp uses std::exchange
// clang-format on
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <unordered_map>

#include "appview/http/answers.hpp"
#include "appview/http/client_address.hpp"
#include "appview/http/connection.hpp"
#include "appview/http/work_queue.hpp"

namespace bulleted::appview {

using namespace http_detail;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

std::optional<Error> framing_problem(
    const std::vector<std::pair<std::string, std::string>>& headers) {
  std::optional<std::string> length;
  std::optional<std::string> coding;
  int lengths = 0;
  for (const auto& [raw_name, raw_value] : headers) {
    const std::string name = lower_trimmed(raw_name);
    if (name == "content-length") {
      ++lengths;
      length = lower_trimmed(raw_value);
    } else if (name == "transfer-encoding") {
      coding = coding ? *coding + "," + lower_trimmed(raw_value) : lower_trimmed(raw_value);
    }
  }
  if (coding && length) {
    return Error{ErrorCode::kInvalidRequest,
                 "a request may not carry both Transfer-Encoding and Content-Length"};
  }
  if (coding) {
    if (*coding != "chunked") {
      return Error{ErrorCode::kInvalidRequest, "unsupported Transfer-Encoding \"" + *coding + "\""};
    }
    return Error{ErrorCode::kLengthRequired, "send the body with a Content-Length"};
  }
  if (length) {
    // Repeated headers arrive joined by commas; only one plain number is a length.
    if (lengths > 1 || length->empty() || length->size() > 18 ||
        length->find_first_not_of("0123456789") != std::string::npos) {
      return Error{ErrorCode::kInvalidRequest, "malformed, repeated or conflicting Content-Length"};
    }
  }
  return std::nullopt;
}

struct HttpServer::State : Front, std::enable_shared_from_this<HttpServer::State> {
  HttpServerOptions options;
  HttpHandler handler;
  std::atomic<bool> draining{false};
  std::atomic<std::size_t> in_flight{0};
  std::atomic<std::size_t> answers_out{0};  // answers connections are writing
  std::mutex idle_mutex;
  std::condition_variable idle;
  std::unique_ptr<WorkQueue> requests;
  std::unique_ptr<WorkQueue> operators;
  std::unique_ptr<WorkQueue> streams;
  std::unique_ptr<WorkQueue> searches;
  std::unique_ptr<asio::io_context> io;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::vector<std::thread> io_threads;
  struct Open {
    std::weak_ptr<Connection> connection;
    std::string key;  // its address's key; empty when uncapped
  };
  std::mutex connections_mutex;
  std::unordered_map<Connection*, Open> connections;
  std::unordered_map<std::string, std::size_t> per_address;  // open connections by key
  std::size_t max_connections = 0;
  std::atomic<std::size_t> head_bytes{0};
  std::atomic<std::size_t> refused_address{0};
  std::atomic<std::size_t> refused_total{0};
  std::atomic<std::size_t> refused_large_head_count{0};
  std::mutex search_clients_mutex;
  std::unordered_map<std::string, std::size_t> search_clients;  // searches running or waiting

  HttpResponse refuse(ErrorCode code, std::string message) const {
    return refusal(Error{code, std::move(message)});
  }
  HttpResponse refusal(const Error& error) const override {
    if (options.refusal) return options.refusal(error);
    // Messages may quote the request (a transfer coding): escaped as JSON.
    const ErrorStatus& status = error_status(error.code);
    HttpResponse response;
    response.status = status.status;
    response.body = nlohmann::json{{"error", status.name}, {"message", error.message}}.dump(
        -1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (error.retry_after_seconds > 0) {
      response.headers.emplace_back("Retry-After", std::to_string(error.retry_after_seconds));
    }
    return response;
  }
  void decorate(const HttpRequestHead& head, HttpResponse& response) const override {
    if (options.decorate) options.decorate(head, response);
  }
  std::chrono::seconds read_timeout() const override { return options.read_timeout; }

  void finished() {
    if (--in_flight == 0) {
      std::lock_guard lock(idle_mutex);
      idle.notify_all();
    }
  }
  void abandoned() override { finished(); }
  void answering(bool started) override {
    if (started) {
      ++answers_out;
    } else if (--answers_out == 0) {
      std::lock_guard lock(idle_mutex);
      idle.notify_all();
    }
  }
  void closed(Connection* connection) override {
    std::lock_guard lock(connections_mutex);
    auto found = connections.find(connection);
    if (found == connections.end()) return;
    if (!found->second.key.empty()) {
      auto count = per_address.find(found->second.key);
      if (count != per_address.end() && --count->second == 0) per_address.erase(count);
    }
    connections.erase(found);
  }
  bool take_head_bytes(std::size_t bytes) override {
    std::size_t held = head_bytes.load();
    do {
      if (held + bytes > options.large_head_bytes) return false;
    } while (!head_bytes.compare_exchange_weak(held, held + bytes));
    return true;
  }
  void give_head_bytes(std::size_t bytes) override { head_bytes -= bytes; }
  void refused_large_head() override { ++refused_large_head_count; }

  // Whether a connection from `remote` may be taken up, and whether it is
  // one of the reserve; counted as open when it may.
  enum class Room { kRefusedAddress, kRefusedTotal, kGeneral, kReserve };
  Room make_room(const std::shared_ptr<Connection>& connection, const std::string& remote) {
    const bool capped = !(options.uncapped && options.uncapped(remote));
    std::string key = capped ? canonical_client(remote) : std::string();
    std::lock_guard lock(connections_mutex);
    if (connections.size() >= max_connections) {
      ++refused_total;
      return Room::kRefusedTotal;
    }
    if (capped) {
      auto& mine = per_address[key];
      if (mine >= options.connections_per_address) {
        ++refused_address;
        return Room::kRefusedAddress;
      }
      ++mine;
    }
    const bool reserve =
        connections.size() + std::min(options.reserved_connections, max_connections) >=
        max_connections;
    connections.emplace(connection.get(), Open{connection, std::move(key)});
    return reserve ? Room::kReserve : Room::kGeneral;
  }

  Decision decide(const HttpRequestHead& head, const Fields& fields, const Target& target,
                  std::size_t length, bool body_pending, bool reserve) override {
    Decision decision;
    auto answer = [&](HttpResponse response, bool close) {
      decision.answer = std::move(response);
      decision.close = close;
      return decision;
    };
    if (draining)
      return answer(refuse(ErrorCode::kUnavailable, "the server is shutting down"), true);
    if (auto problem = framing_problem(fields)) return answer(refusal(*problem), true);
    if (target.network_path || target.invalid) {
      return answer(refuse(ErrorCode::kInvalidRequest, target.network_path
                                                           ? "the request target must be a path"
                                                           : "the request target is not a path"),
                    body_pending);
    }
    Admission admission;
    admission.body_limit = options.default_body_limit;
    if (options.admit) {
      try {
        admission = options.admit(head);
      } catch (const std::exception& e) {
        spdlog::error("http: admission failed: {}", e.what());
        admission.refusal = refuse(ErrorCode::kInternal, "the request failed");
      }
    }
    if (admission.refusal) return answer(std::move(*admission.refusal), body_pending);
    if (reserve && admission.lane != Lane::kAtOnce && admission.lane != Lane::kOperators) {
      HttpResponse busy = refuse(ErrorCode::kUnavailable, "the server is at its connection limit");
      busy.headers.emplace_back("Retry-After", "1");
      return answer(std::move(busy), true);
    }
    if (length > admission.body_limit) {
      return answer(
          refuse(ErrorCode::kPayloadTooLarge,
                 "the body is larger than " + std::to_string(admission.body_limit) + " bytes"),
          true);
    }
    // A body is read first: what has one is answered on the operators' thread.
    decision.lane =
        length > 0 && admission.lane == Lane::kAtOnce ? Lane::kOperators : admission.lane;
    decision.body_length = length;
    decision.client = std::move(admission.client);
    ++in_flight;
    return decision;
  }

  // Runs the handler and answers into `reply` (streaming, or handing a held
  // answer to its holder, when asked).
  void serve(const HttpRequest& in, const std::shared_ptr<Reply>& reply, bool at_once) {
    HttpResponse out;
    try {
      out = handler(in);
    } catch (const std::exception& e) {
      spdlog::error("http: handler failed: {}", e.what());
      out = refuse(ErrorCode::kInternal, "the request failed");
    }
    const bool head_only = in.method == "HEAD";
    if (out.hold && !head_only) {
      auto take = out.hold;  // left in `out`: it says the answer is chunked
      reply->answer(std::move(out), false);
      try {
        take(reply);
      } catch (const std::exception& e) {
        spdlog::error("http: a held answer could not be taken up: {}", e.what());
        reply->end(true);
      }
      finished();
      return;
    }
    if (!out.stream || head_only) {
      reply->answer(std::move(out));
      finished();
      return;
    }
    auto produce = std::move(out.stream);
    out.stream = [](ResponseStream&) {};  // still a streamed answer: no body set
    // An answer made on a thread that writes it out must never wait for it.
    const bool waits = out.stream_waits && !at_once;
    reply->answer(std::move(out), waits);
    bool failed = false;
    try {
      produce(*reply);
    } catch (const std::exception& e) {
      spdlog::error("http: a streamed answer failed: {}", e.what());
      failed = true;
    }
    reply->end(failed);
    finished();
  }

  WorkQueue& queue_of(Lane lane) const {
    if (lane == Lane::kOperators) return *operators;
    if (lane == Lane::kStreams) return *streams;
    if (lane == Lane::kSearches) return *searches;
    return *requests;
  }

  std::chrono::steady_clock::time_point now() const {
    return options.clock ? options.clock() : std::chrono::steady_clock::now();
  }

  // A place of `client`'s in the searches' lane, or false when it holds
  // all it may.
  bool enter_searches(const std::string& client) {
    if (client.empty()) return true;
    std::lock_guard lock(search_clients_mutex);
    auto& mine = search_clients[client];
    if (mine >= options.searches_per_client) return false;
    ++mine;
    return true;
  }
  void leave_searches(const std::string& client) {
    if (client.empty()) return;
    std::lock_guard lock(search_clients_mutex);
    auto found = search_clients.find(client);
    if (found != search_clients.end() && --found->second == 0) search_clients.erase(found);
  }

  void hand_on(HttpRequest in, Lane lane, const std::string& client,
               std::shared_ptr<Reply> reply) override {
    if (lane == Lane::kAtOnce) {
      // Here, on the connection's thread: no queue to wait in.
      serve(in, reply, true);
      return;
    }
    const std::string counted = lane == Lane::kSearches ? client : std::string();
    if (!enter_searches(counted)) {
      Error busy{ErrorCode::kRateLimited,
                 "this client's searches are already running or waiting; retry once they are "
                 "answered"};
      busy.retry_after_seconds = 1;
      if (options.overflowed) options.overflowed(lane);
      reply->answer(refusal(busy));
      finished();
      return;
    }
    auto job = [self = shared_from_this(), in = std::move(in), reply, lane, counted,
                queued = now()] {
      if (self->options.waited) {
        self->options.waited(lane, std::chrono::duration<double>(self->now() - queued).count());
      }
      self->serve(in, reply, false);
      self->leave_searches(counted);
    };
    if (!queue_of(lane).push(std::move(job))) {
      leave_searches(counted);
      Error busy{ErrorCode::kUnavailable, "too many requests in progress"};
      if (lane == Lane::kSearches) {
        busy = Error{ErrorCode::kRateLimited,
                     "too many searches are running (limits.maxConcurrentSearches); retry soon"};
        busy.retry_after_seconds = 1;
      }
      if (options.overflowed) options.overflowed(lane);
      reply->answer(refusal(busy));
      finished();
    }
  }

  // Takes connections until the acceptor closes; each is served on a strand
  // of its own.
  static asio::awaitable<void> accept(std::shared_ptr<State> self) {
    asio::steady_timer pause(co_await asio::this_coro::executor);
    while (self->acceptor->is_open()) {
      tcp::socket socket(asio::make_strand(*self->io));
      boost::system::error_code ec;
      co_await self->acceptor->async_accept(socket, asio::redirect_error(asio::use_awaitable, ec));
      if (ec == asio::error::operation_aborted || !self->acceptor->is_open()) break;
      if (ec) {
        // Out of descriptors, or a connection reset before it was taken: a
        // pause, not a spin.
        spdlog::warn("http: accepting a connection failed: {}", ec.message());
        pause.expires_after(std::chrono::milliseconds(50));
        co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        continue;
      }
      socket.set_option(tcp::no_delay(true), ec);
      if (self->options.send_buffer_bytes > 0) {
        socket.set_option(asio::socket_base::send_buffer_size(self->options.send_buffer_bytes), ec);
      }
      auto executor = socket.get_executor();
      std::string remote = peer_address(socket);
      auto connection = std::make_shared<Connection>(self, std::move(socket), remote);
      // Reset at once, unread, when there is no room for it.
      const Room room = self->make_room(connection, remote);
      if (room == Room::kRefusedAddress || room == Room::kRefusedTotal) {
        connection->refuse();
        continue;
      }
      if (room == Room::kReserve) connection->keep_for_operators();
      asio::co_spawn(
          executor, [connection]() -> asio::awaitable<void> { co_await connection->run(); },
          report_failure);
    }
  }

  static void report_failure(const std::exception_ptr& failure) {
    if (!failure) return;
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      spdlog::error("http: a connection failed: {}", e.what());
    } catch (...) {
      spdlog::error("http: a connection failed");
    }
  }

  Result<void> listen() {
    const std::string address = options.bind + ":" + std::to_string(options.port);
    try {
      io = std::make_unique<asio::io_context>(std::max(1, options.io_threads));
      tcp::resolver resolver(*io);
      const auto found = resolver.resolve(options.bind, std::to_string(options.port),
                                          tcp::resolver::passive | tcp::resolver::numeric_service);
      if (found.empty()) return fail(ErrorCode::kUnavailable, "cannot resolve " + address);
      const tcp::endpoint endpoint = found.begin()->endpoint();
      acceptor = std::make_unique<tcp::acceptor>(*io);
      acceptor->open(endpoint.protocol());
      acceptor->set_option(asio::socket_base::reuse_address(true));
      acceptor->bind(endpoint);
      acceptor->listen(asio::socket_base::max_listen_connections);
    } catch (const std::exception& e) {
      acceptor.reset();
      io.reset();
      return fail(ErrorCode::kUnavailable, "cannot listen on " + address + ": " + e.what());
    }
    asio::co_spawn(*io, accept(shared_from_this()), report_failure);
    for (int i = 0; i < std::max(1, options.io_threads); ++i) {
      io_threads.emplace_back([this] {
        // run() returns when stopped; a handler that throws is reported and
        // the thread goes on.
        while (true) {
          try {
            io->run();
            return;
          } catch (const std::exception& e) {
            spdlog::error("http: a connection's handler failed: {}", e.what());
          }
        }
      });
    }
    return {};
  }

  void stop_queues() {
    for (auto* queue : {requests.get(), operators.get(), streams.get(), searches.get()}) {
      if (queue) queue->stop();
    }
  }
};

HttpServer::HttpServer(HttpServerOptions options, HttpHandler handler)
    : state_(std::make_shared<State>()) {
  state_->options = std::move(options);
  state_->handler = std::move(handler);
}

HttpServer::~HttpServer() { stop(std::chrono::milliseconds(0)); }

std::size_t HttpServer::in_flight() const { return state_->in_flight.load(); }

HttpFrontCounters HttpServer::counters() const {
  HttpFrontCounters counters;
  {
    std::lock_guard lock(state_->connections_mutex);
    counters.open = state_->connections.size();
  }
  counters.refused_address = state_->refused_address.load();
  counters.refused_total = state_->refused_total.load();
  counters.refused_large_head = state_->refused_large_head_count.load();
  return counters;
}

namespace {
// Set on the searches' lane's threads.
thread_local bool on_search_lane = false;
}  // namespace

std::chrono::microseconds HttpServer::give_way(std::chrono::microseconds allowance) const {
  using std::chrono::microseconds;
  if (!on_search_lane) return microseconds(0);
  const auto start = std::chrono::steady_clock::now();
  microseconds slept(0);
  while (slept < allowance && state_->requests->size() > 0 && !state_->draining) {
    std::this_thread::sleep_for(std::min(kGiveWayStep, allowance - slept));
    slept = std::chrono::duration_cast<microseconds>(std::chrono::steady_clock::now() - start);
  }
  std::this_thread::yield();
  return slept;
}

std::size_t HttpServer::queued(Lane lane) const {
  return state_->requests ? state_->queue_of(lane).size() : 0;
}

Result<void> HttpServer::start() {
  auto state = state_;
  state->max_connections = state->options.max_connections;
  if (rlimit files{}; state->max_connections == 0) {
    // What the open-files limit leaves for connections.
    state->max_connections = std::numeric_limits<std::size_t>::max();
    if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY) {
      state->max_connections =
          files.rlim_cur > HttpServerOptions::kOtherFiles + state->options.reserved_connections
              ? files.rlim_cur - HttpServerOptions::kOtherFiles
              : state->options.reserved_connections + 1;
    }
  }
  state->requests = std::make_unique<WorkQueue>(state->options.max_queued, state->options.workers);
  state->operators = std::make_unique<WorkQueue>(64, 1);
  state->streams = std::make_unique<WorkQueue>(state->options.max_streams_queued, 1);
  state->searches = std::make_unique<WorkQueue>(state->options.max_searches_queued,
                                                state->options.search_workers);
  state->requests->start();
  state->operators->start();
  state->streams->start();
  // Nice values are per thread on Linux; raising one needs no privilege.
  state->searches->start([nice = state->options.search_nice] {
    on_search_lane = true;
    if (nice > 0 && ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()),
                                  std::min(::getpriority(PRIO_PROCESS, 0) + nice, 19)) != 0) {
      spdlog::warn("http: the searches' lane keeps the process's priority");
    }
  });
  return state->listen();
}

void HttpServer::stop(std::chrono::milliseconds grace) {
  auto state = state_;
  if (!state->io) {
    state->stop_queues();
    return;
  }
  state->draining = true;
  {
    std::unique_lock lock(state->idle_mutex);
    state->idle.wait_for(lock, grace, [&] {
      return state->in_flight.load() == 0 && state->answers_out.load() == 0;
    });
  }
  if (state->in_flight.load() != 0 || state->answers_out.load() != 0) {
    spdlog::warn("http: {} requests in flight and {} answers being written after the grace period",
                 state->in_flight.load(), state->answers_out.load());
  }
  // No new connections; every open one closed, and what its answer would
  // still write dropped (producers and holders see their writes fail).
  asio::post(*state->io, [state] {
    boost::system::error_code ec;
    state->acceptor->close(ec);
  });
  std::vector<std::shared_ptr<Connection>> open;
  {
    std::lock_guard lock(state->connections_mutex);
    for (auto& [raw, entry] : state->connections) {
      if (auto connection = entry.connection.lock()) open.push_back(std::move(connection));
    }
  }
  for (auto& connection : open) connection->shut();
  open.clear();
  state->stop_queues();
  state->io->stop();
  for (auto& thread : state->io_threads) thread.join();
  state->io_threads.clear();
  // The connections' coroutines end with the context, closing their sockets.
  state->acceptor.reset();
  state->io.reset();
}

}  // namespace bulleted::appview
