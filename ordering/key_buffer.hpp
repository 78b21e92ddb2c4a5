// A key under construction (internal to ordering/): the buffer generation
// writes into, kept apart from the generation rules in order_key.cpp.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "ordering/key_block.hpp"
#include "ordering/order_key.hpp"

namespace bulleted::ordering::detail {

// The longest key copied out of, or built in, a string as the two head words
// (its terminating zero included): 15 bytes, the inline buffer of a
// libstdc++ string, so that such keys are never allocated.
constexpr std::size_t kHeadKey = kBlockBytes - 1;

// A key under construction, in its own buffer or in one the caller lends.
//
// Generation never writes more than one byte past the longer neighbour (the
// origin "a0" standing in for an absent one), so a lent buffer one byte
// longer than that neighbour is enough, given at least the kBlockBytes of the
// head words; the own buffer takes kMaxKeyBytes + 1, and within_cap rejects
// that last byte.
//
// The first kBlockBytes bytes, where nearly every key ends, are written only
// as whole 8-byte words, zero past the key. A load that spans several
// narrower stores stalls until they reach the cache (no store forwarding);
// whole words let the copy out and the caller's next reads of the key each
// find one store to read from.
class KeyBuffer {
 public:
  KeyBuffer() : data_(storage_), capacity_(sizeof storage_) { store_head({}); }
  KeyBuffer(char* lent, std::size_t capacity) : data_(lent), capacity_(capacity) {
    assert(capacity_ >= kBlockBytes);
    store_head({});
  }
  KeyBuffer(const KeyBuffer&) = delete;
  KeyBuffer& operator=(const KeyBuffer&) = delete;

  std::size_t size() const { return size_; }
  char operator[](std::size_t i) const { return data_[i]; }
  std::string_view view() const { return {data_, size_}; }

  void set(std::size_t i, char c) {
    assert(i < capacity_);
    if (i >= kBlockBytes) {
      data_[i] = c;
      return;
    }
    char* at = data_ + (i & ~std::size_t{7});
    std::uint64_t word;
    std::memcpy(&word, at, sizeof word);
    const unsigned shift = 8 * static_cast<unsigned>(i & 7);
    if constexpr (std::endian::native == std::endian::little) {
      word = (word & ~(std::uint64_t{0xFF} << shift)) | std::uint64_t{static_cast<unsigned char>(c)}
                                                            << shift;
    } else {
      word = (word & ~(std::uint64_t{0xFF} << (56 - shift))) |
             std::uint64_t{static_cast<unsigned char>(c)} << (56 - shift);
    }
    std::memcpy(at, &word, sizeof word);
  }
  void assign(std::string_view s) {
    assert(s.size() <= capacity_);
    if (s.size() <= kBlockBytes) {
      store_head(load_block(s));
    } else {
      std::memcpy(data_, s.data(), s.size());
    }
    size_ = s.size();
  }
  void append(std::string_view s) {
    for (char c : s) push_back(c);
  }
  void push_back(char c) {
    set(size_, c);
    ++size_;
  }
  void pop_back() {
    --size_;
    set(size_, '\0');
  }

  // Copies the key into `out`, a string without a key yet.
  void copy_to(std::string& out) const {
    if (size_ <= kHeadKey) {
      // Two whole words, zeros past the key included.
      out.resize_and_overwrite(kHeadKey, [this](char* p, std::size_t) {
        std::memcpy(p, data_, 8);
        std::memcpy(p + 8, data_ + 8, 8);
        return size_;
      });
    } else {
      out.assign(data_, size_);
    }
  }

 private:
  void store_head(const Block& head) { store_block(data_, head); }

  char storage_[kMaxKeyBytes + 16];
  char* data_;
  [[maybe_unused]] std::size_t capacity_;  // read by the asserts only
  std::size_t size_ = 0;
};

}  // namespace bulleted::ordering::detail
