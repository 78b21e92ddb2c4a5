#include "appview/http/answers.hpp"

namespace bulleted::appview::http_detail {
namespace {

// A body that fails when read: what a HEAD answer carries so that cpprest
// sends its headers as they are (the GET's Content-Length, or chunked for a
// streamed answer, instead of the "Content-Length: 0" it writes for an answer
// without a body) and then, finding nothing to send, closes the connection.
void set_unreadable_body(http_response& response, const std::string& content_type) {
  concurrency::streams::producer_consumer_buffer<std::uint8_t> buffer;
  // Set while the buffer is open (set_body refuses a failed stream), failed
  // right after: cpprest reads it only once the headers are out.
  response.set_body(concurrency::streams::istream(buffer), content_type);
  try {
    buffer.close(std::ios_base::out, std::make_exception_ptr(BodyRefused())).get();
  } catch (...) {
  }
}

}  // namespace

std::string lower_trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  std::string out(text);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

PendingReplies& pending_replies() {
  static PendingReplies replies;
  return replies;
}

// Replies once and observes the reply task (an unobserved failure would kill
// the process). `sent`, when given, learns whether the reply went out.
void send(http_request request, http_response response, std::function<void(bool)> sent) {
  pending_replies().add();
  try {
    request.reply(response).then([sent](pplx::task<void> reply) {
      bool ok = true;
      try {
        reply.get();
      } catch (...) {
        ok = false;
      }
      if (sent) sent(ok);
      pending_replies().done();
    });
  } catch (...) {
    pending_replies().done();
    if (sent) sent(false);
  }
}

// Takes the answer's body: a large one (a subtree, an export page) is moved
// into cpprest's buffer, not copied.
http_response to_cpprest(HttpResponse out, bool head_only, bool close) {
  http_response response(static_cast<status_code>(out.status));
  for (const auto& [name, value] : out.headers) response.headers().add(name, value);
  // No answer is ever read as another type than it says it is.
  if (!response.headers().has("X-Content-Type-Options")) {
    response.headers().add("X-Content-Type-Options", "nosniff");
  }
  if (close) response.headers().add("Connection", "close");
  const bool chunked = out.stream || out.hold;
  if (head_only) {
    if (chunked) {
      response.headers().add("Transfer-Encoding", "chunked");
    } else {
      response.headers().add("Content-Length", std::to_string(out.body.size()));
    }
    set_unreadable_body(response, out.content_type);
  } else if (!chunked && out.status != 204) {
    response.set_body(std::move(out.body), out.content_type);
  }
  return response;
}

// Closes the request's body stream with an error: cpprest then drains the
// rest of the body from the socket without keeping any of it (a plain
// close() makes a pool thread spin). It sends a response only once the body
// has arrived or failed, and never sooner: ending the request early (as was
// once done for clients that sent Expect: 100-continue) lets the connection
// close under cpprest's own body reader while it starts its next read, and
// a client that keeps sending crashed the process that way. A client that
// waits for "100 Continue" (which cpprest cannot send) sends its body after
// its own wait (curl: one second) and then hears the refusal. nginx in
// front answers Expect itself and refuses over-limit bodies.
void refuse_body(http_request& request) {
  try {
    request.body().streambuf().close(std::ios_base::in, std::make_exception_ptr(BodyRefused()));
  } catch (...) {
  }
}

}  // namespace bulleted::appview::http_detail
