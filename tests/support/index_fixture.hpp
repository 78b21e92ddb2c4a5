// A test against a real index: a fresh SQLite file in a temporary folder,
// opened as the Store, and apply() for ops written straight to it.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "schema/store.hpp"
#include "tests/support/temp_dir.hpp"

namespace bulleted::testing {

class IndexTest : public ::testing::Test {
 protected:
  void SetUp() override { reopen("index.db"); }
  // A fresh index in another file of the same folder.
  void reopen(const std::string& name) {
    store_.reset();
    auto opened = schema::Store::open(dir_.file(name));
    ASSERT_TRUE(opened.has_value()) << opened.error().message;
    store_ = std::move(*opened);
  }
  void apply(std::vector<schema::RecordOp> ops) {
    schema::ApplyBatch batch;
    batch.ops = std::move(ops);
    auto outcome = store_->apply(batch);
    ASSERT_TRUE(outcome.has_value()) << outcome.error().message;
  }

  TempDir dir_;
  std::unique_ptr<schema::Store> store_;
};

}  // namespace bulleted::testing
