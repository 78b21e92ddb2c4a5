// The outbound HTTP exchange against hosts on loopback: connections kept
// and taken again, a kept one the host had closed, interim answers, a host
// that never answers and one that trickles, what cannot be sent, and HTTPS
// with certificates made here (one trusted and naming the host, one naming
// another, one not trusted).
#include "firehose/client/http_exchange.hpp"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <thread>

#include "tests/support/loopback_port.hpp"

namespace bulleted::firehose {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

const std::string kAnswer =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";

// A plain host: for each connection it accepts, it reads that many requests
// and answers each with kAnswer (after `interim`, when given), then closes
// it (or holds it open, never answering, when the count is negative; or
// answering as slowly as it may, with kTrickle; or, with kAnswerThenHangUp,
// answering one request, then reading the next and closing unanswered).
class ScriptedHost {
 public:
  static constexpr int kTrickle = -2;
  static constexpr int kAnswerThenHangUp = -3;
  explicit ScriptedHost(std::vector<int> answers_per_connection, std::string interim = "")
      : script_(std::move(answers_per_connection)), interim_(std::move(interim)) {
    fd_ = testing::bound_loopback_socket(port_, 8);
    thread_ = std::thread([this] { serve(); });
  }
  ~ScriptedHost() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int requests() const { return requests_.load(); }

 private:
  void serve() {
    for (int answers : script_) {
      const int client = ::accept(fd_, nullptr, nullptr);
      if (client < 0) return;
      if (answers == kTrickle) {  // the answer a byte at a time, every 20 ms
        for (std::size_t i = 0; i < kAnswer.size() && !stop_; ++i) {
          if (::send(client, &kAnswer[i], 1, MSG_NOSIGNAL) != 1) break;
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
      }
      std::string pending;
      // Reads a request's head (the tests send no body) and counts it.
      auto read_request = [&] {
        char buffer[4096];
        while (pending.find("\r\n\r\n") == std::string::npos) {
          const ssize_t n = ::recv(client, buffer, sizeof buffer, 0);
          if (n <= 0) return false;
          pending.append(buffer, static_cast<std::size_t>(n));
        }
        pending.erase(0, pending.find("\r\n\r\n") + 4);
        ++requests_;
        return true;
      };
      const std::string answer = interim_ + kAnswer;
      if (answers == kAnswerThenHangUp) {
        if (read_request()) ::send(client, answer.data(), answer.size(), MSG_NOSIGNAL);
        read_request();
      } else if (answers < 0) {
        while (!stop_) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      for (int i = 0; i < answers && read_request(); ++i) {
        ::send(client, answer.data(), answer.size(), MSG_NOSIGNAL);
      }
      ::close(client);
    }
  }

  std::vector<int> script_;
  std::string interim_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0};
  std::thread thread_;
};

std::string pem_of(X509* certificate) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, certificate);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<std::size_t>(size));
  BIO_free(bio);
  return pem;
}

// A self-signed certificate for `names` (a subjectAltName value) and its key.
struct Certificate {
  std::string pem;
  std::string key_pem;
};

Certificate make_certificate(const std::string& names) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* certificate = X509_new();
  X509_set_version(certificate, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(certificate), 1);
  X509_gmtime_adj(X509_getm_notBefore(certificate), -60);
  X509_gmtime_adj(X509_getm_notAfter(certificate), 3600);
  X509_set_pubkey(certificate, key);
  X509_NAME* name = X509_get_subject_name(certificate);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("bulleted test"), -1, -1, 0);
  X509_set_issuer_name(certificate, name);
  X509V3_CTX context;
  X509V3_set_ctx(&context, certificate, certificate, nullptr, nullptr, 0);
  X509_EXTENSION* alt = X509V3_EXT_conf_nid(nullptr, &context, NID_subject_alt_name, names.c_str());
  X509_add_ext(certificate, alt, -1);
  X509_EXTENSION_free(alt);
  X509_sign(certificate, key, EVP_sha256());
  Certificate made{pem_of(certificate), ""};
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  made.key_pem.assign(data, static_cast<std::size_t>(size));
  BIO_free(bio);
  X509_free(certificate);
  EVP_PKEY_free(key);
  return made;
}

// An HTTPS host on 127.0.0.1 that answers one request with kAnswer.
class TlsHost {
 public:
  explicit TlsHost(const Certificate& certificate)
      : tls_(asio::ssl::context::tls_server),
        acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    tls_.use_certificate(asio::buffer(certificate.pem), asio::ssl::context::pem);
    tls_.use_private_key(asio::buffer(certificate.key_pem), asio::ssl::context::pem);
    thread_ = std::thread([this] {
      boost::system::error_code ec;
      tcp::socket socket(io_);
      acceptor_.accept(socket, ec);
      if (ec) return;
      asio::ssl::stream<tcp::socket> stream(std::move(socket), tls_);
      stream.handshake(asio::ssl::stream_base::server, ec);
      if (ec) return;
      std::string request;
      asio::read_until(stream, asio::dynamic_buffer(request), "\r\n\r\n", ec);
      if (ec) return;
      answered_ = true;
      asio::write(stream, asio::buffer(kAnswer), ec);
      stream.shutdown(ec);
    });
  }
  ~TlsHost() {
    boost::system::error_code ec;
    acceptor_.close(ec);
    thread_.join();
  }
  int port() const { return acceptor_.local_endpoint().port(); }
  bool answered() const { return answered_.load(); }

 private:
  asio::io_context io_;
  asio::ssl::context tls_;
  tcp::acceptor acceptor_;
  std::atomic<bool> answered_{false};
  std::thread thread_;
};

HttpLimits limits(std::optional<std::string> trust = std::nullopt) {
  return {.timeout = std::chrono::seconds(3), .max_body_bytes = 1024, .extra_trust_pem = trust};
}

TEST(HttpExchangeTest, AConnectionIsKeptAndTakenAgain) {
  ScriptedHost host({2});  // one connection, two answers on it
  HttpConnections connections(limits());
  for (int i = 0; i < 2; ++i) {
    auto answer = connections.exchange(host.url(), {.target = "/x"});
    ASSERT_TRUE(answer.has_value()) << i << ": " << answer.error().message;
    EXPECT_EQ(answer->status, 200);
    EXPECT_EQ(answer->body, "{}");
    EXPECT_EQ(answer->headers["content-type"], "application/json");
  }
  EXPECT_EQ(host.requests(), 2);
}

TEST(HttpExchangeTest, AKeptConnectionTheHostClosedIsReplacedUnseen) {
  ScriptedHost host({1, 1});  // closes the first connection after its answer
  HttpConnections connections(limits());
  ASSERT_TRUE(connections.exchange(host.url(), {.target = "/a"}).has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto second = connections.exchange(host.url(), {.target = "/b"});
  ASSERT_TRUE(second.has_value()) << second.error().message;
  EXPECT_EQ(host.requests(), 2);
}

// A POST on a kept connection the host closed while idle goes out on a new
// one: the closed one is seen before anything is sent on it.
TEST(HttpExchangeTest, APostGoesOutOnANewConnectionWhenTheKeptOneWasClosed) {
  ScriptedHost host({1, 1});  // closes the first connection after its answer
  HttpConnections connections(limits());
  ASSERT_TRUE(connections.exchange(host.url(), {.method = "POST", .target = "/a"}).has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto second = connections.exchange(host.url(), {.method = "POST", .target = "/b"});
  ASSERT_TRUE(second.has_value()) << second.error().message;
  EXPECT_EQ(host.requests(), 2);
}

// A host that read a request on a kept connection and closed it unanswered
// may have carried it out: a GET is asked again on a new connection, a POST
// is a failure, never sent twice.
TEST(HttpExchangeTest, APostTheHostReadButNeverAnsweredIsNotSentAgain) {
  for (const std::string method : {"GET", "POST"}) {
    ScriptedHost host({ScriptedHost::kAnswerThenHangUp, 1});
    HttpConnections connections(limits());
    ASSERT_TRUE(connections.exchange(host.url(), {.method = method, .target = "/a"}).has_value());
    auto second = connections.exchange(host.url(), {.method = method, .target = "/b"});
    if (method == "GET") {
      ASSERT_TRUE(second.has_value()) << second.error().message;
      EXPECT_EQ(host.requests(), 3);
    } else {
      ASSERT_FALSE(second.has_value());
      EXPECT_EQ(second.error().code, ErrorCode::kUpstreamFailure);
      EXPECT_EQ(host.requests(), 2);
    }
  }
}

// The network's host is checked on the addresses the connection is made
// to: one resolving to loopback, by a literal or by a name (what a
// rebinding name answers when it is connected to), is refused before a
// byte is sent, and no connection kept for the operator's own use of the
// same host carries it.
TEST(HttpExchangeTest, TheNetworksHostIsRefusedWhenItResolvesToLoopback) {
  ScriptedHost host({2});
  HttpConnections connections(limits());
  ASSERT_TRUE(connections.exchange(host.url(), {.target = "/own"}).has_value());  // kept
  std::string by_name = host.url();
  by_name.replace(by_name.find("127.0.0.1"), 9, "localhost");
  for (const std::string& url : {host.url(), by_name}) {
    for (const std::string method : {"GET", "POST"}) {
      auto refused =
          connections.exchange(url, {.method = method, .target = "/x", .public_only = true});
      ASSERT_FALSE(refused.has_value()) << url;
      EXPECT_EQ(refused.error().code, ErrorCode::kInvalidRequest) << url;
    }
  }
  EXPECT_EQ(host.requests(), 1);
  ASSERT_TRUE(connections.exchange(host.url(), {.target = "/own"}).has_value());
  EXPECT_EQ(host.requests(), 2);
}

// Interim answers (1xx) are passed over: each call gets its own answer,
// the kept connection holding nothing of an earlier one.
TEST(HttpExchangeTest, InterimAnswersArePassedOver) {
  ScriptedHost host({2}, "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n");
  HttpConnections connections(limits());
  for (int i = 0; i < 2; ++i) {
    auto answer = connections.exchange(host.url(), {.target = "/x"});
    ASSERT_TRUE(answer.has_value()) << i << ": " << answer.error().message;
    EXPECT_EQ(answer->status, 200);
    EXPECT_EQ(answer->body, "{}");
  }
}

TEST(HttpExchangeTest, AHostThatNeverAnswersTimesOut) {
  ScriptedHost host({-1});
  HttpConnections connections({.timeout = std::chrono::milliseconds(300)});
  auto answer = connections.exchange(host.url(), {.target = "/x"});
  ASSERT_FALSE(answer.has_value());
  EXPECT_EQ(answer.error().code, ErrorCode::kUpstreamFailure);
  EXPECT_NE(answer.error().message.find("timed out"), std::string::npos) << answer.error().message;
}

// The deadline is the whole exchange's: a host that keeps sending, a byte
// at a time, is cut off at it all the same.
TEST(HttpExchangeTest, AHostThatTricklesItsAnswerTimesOut) {
  ScriptedHost host({ScriptedHost::kTrickle});
  HttpConnections connections({.timeout = std::chrono::milliseconds(300)});
  auto answer = connections.exchange(host.url(), {.target = "/x"});
  ASSERT_FALSE(answer.has_value());
  EXPECT_NE(answer.error().message.find("timed out"), std::string::npos) << answer.error().message;
}

TEST(HttpExchangeTest, ALineBreakInTheTargetOrAHeaderIsNeverSent) {
  ScriptedHost host({1});
  HttpConnections connections(limits());
  auto target =
      connections.exchange(host.url(), {.target = "/x HTTP/1.1\r\nX-Evil: 1\r\n\r\nGET /"});
  ASSERT_FALSE(target.has_value());
  EXPECT_EQ(target.error().code, ErrorCode::kInvalidRequest);
  auto header =
      connections.exchange(host.url(), {.target = "/x", .headers = {{"X-A", "1\r\nX-Evil: 1"}}});
  ASSERT_FALSE(header.has_value());
  EXPECT_EQ(header.error().code, ErrorCode::kInvalidRequest);
  EXPECT_EQ(host.requests(), 0);
}

TEST(HttpExchangeTest, ABadOriginIsAFailureNotACrash) {
  HttpConnections connections(limits());
  for (const char* origin : {"ftp://x", "http://", "http://a@b", "http://[::1", "http://x:port"}) {
    auto answer = connections.exchange(origin, {.target = "/x"});
    ASSERT_FALSE(answer.has_value()) << origin;
    EXPECT_EQ(answer.error().code, ErrorCode::kUpstreamFailure) << origin;
  }
}

TEST(HttpExchangeTest, HttpsWithATrustedCertificateNamingTheHost) {
  const Certificate certificate = make_certificate("DNS:localhost,IP:127.0.0.1");
  TlsHost host(certificate);
  HttpConnections connections(limits(certificate.pem));
  auto answer =
      connections.exchange("https://127.0.0.1:" + std::to_string(host.port()), {.target = "/x"});
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  EXPECT_EQ(answer->body, "{}");
}

TEST(HttpExchangeTest, HttpsWithACertificateForAnotherNameIsRefused) {
  const Certificate certificate = make_certificate("DNS:elsewhere.example");
  TlsHost host(certificate);
  HttpConnections connections(limits(certificate.pem));
  auto answer =
      connections.exchange("https://127.0.0.1:" + std::to_string(host.port()), {.target = "/x"});
  ASSERT_FALSE(answer.has_value());
  EXPECT_EQ(answer.error().code, ErrorCode::kUpstreamFailure);
  EXPECT_FALSE(host.answered());
}

TEST(HttpExchangeTest, HttpsWithAnUntrustedCertificateIsRefused) {
  const Certificate certificate = make_certificate("DNS:localhost,IP:127.0.0.1");
  TlsHost host(certificate);
  HttpConnections connections(limits());
  auto answer =
      connections.exchange("https://127.0.0.1:" + std::to_string(host.port()), {.target = "/x"});
  ASSERT_FALSE(answer.has_value());
  EXPECT_EQ(answer.error().code, ErrorCode::kUpstreamFailure);
  EXPECT_FALSE(host.answered());
}

}  // namespace
}  // namespace bulleted::firehose
