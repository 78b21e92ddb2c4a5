#include "appview/http/reply.hpp"

#include <algorithm>

namespace bulleted::appview::http_detail {

void Reply::wake_locked() {
  if (wake_) wake_();
}

void Reply::answer(HttpResponse response, bool waits) {
  std::lock_guard lock(mutex_);
  if (closed_) return;
  waits_ = waits;
  answer_ = std::move(response);
  wake_locked();
}

bool Reply::write(std::string_view bytes) {
  std::unique_lock lock(mutex_);
  // A streamed answer's producer waits for room; a held answer, or one its
  // request bounds, never does.
  while (waits_ && !closed_ && !ended_ && pending_.size() + sending_ > kMaxWaiting) {
    const std::size_t before = pending_.size() + sending_;
    if (room_.wait_for(lock, stall_) == std::cv_status::timeout &&
        pending_.size() + sending_ >= before) {
      // No progress for the stall time: the client stopped reading.
      aborted_ = ended_ = true;
      pending_.clear();
      wake_locked();
      return false;
    }
  }
  if (closed_ || ended_) return false;
  if (bytes.empty()) return true;
  const bool was_empty = pending_.empty();
  pending_.append(bytes);
  // The connection takes everything there is whenever it looks: it needs
  // waking only when it may have found nothing.
  if (was_empty) wake_locked();
  return true;
}

std::size_t Reply::queued() const {
  std::lock_guard lock(mutex_);
  return closed_ || ended_ ? 0 : pending_.size() + sending_;
}

bool Reply::over() const {
  std::lock_guard lock(mutex_);
  return closed_ || ended_;
}

void Reply::end(bool abort) {
  std::lock_guard lock(mutex_);
  if (closed_ || ended_) return;
  ended_ = true;
  if (abort) {
    aborted_ = true;
    pending_.clear();
  }
  room_.notify_all();
  wake_locked();
}

Reply::Taken Reply::take() {
  std::lock_guard lock(mutex_);
  Taken taken;
  taken.answer = std::move(answer_);
  answer_.reset();
  taken.bytes.swap(pending_);
  sending_ += taken.bytes.size();
  taken.ended = ended_;
  taken.aborted = aborted_ || closed_;
  return taken;
}

void Reply::sent() {
  std::lock_guard lock(mutex_);
  sending_ = 0;
  room_.notify_all();
}

void Reply::sent_some(std::size_t bytes) {
  std::lock_guard lock(mutex_);
  sending_ -= std::min(bytes, sending_);
  room_.notify_all();
}

bool Reply::ended() const {
  std::lock_guard lock(mutex_);
  return ended_ && !aborted_;
}

bool Reply::aborted() const {
  std::lock_guard lock(mutex_);
  return aborted_;
}

void Reply::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
  wake_ = nullptr;
  pending_.clear();
  answer_.reset();
  room_.notify_all();
}

}  // namespace bulleted::appview::http_detail
