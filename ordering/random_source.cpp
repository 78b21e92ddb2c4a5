#include "ordering/random_source.hpp"

#include <random>

namespace bulleted::ordering {

EntropySource::EntropySource() : stream_(0) {
  std::random_device device;
  stream_ = Mulberry32::from_seed(device() ^ (device() << 1));
}

}  // namespace bulleted::ordering
