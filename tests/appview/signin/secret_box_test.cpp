// Sealing secrets: a fresh nonce each time; another key or any alteration
// refused.
#include "appview/signin/secret_box.hpp"

#include <gtest/gtest.h>

namespace bulleted::appview {
namespace {

TEST(SecretBoxTest, SealsAndOpens) {
  SecretBox box("a key of at least thirty-two characters");
  const std::string sealed = box.seal("eyJhbGciOiJIUzI1NiJ9.secret");
  EXPECT_EQ(sealed.find("secret"), std::string::npos);
  EXPECT_EQ(box.open(sealed).value(), "eyJhbGciOiJIUzI1NiJ9.secret");
  // A fresh nonce each time: the same secret seals differently.
  EXPECT_NE(box.seal("same"), box.seal("same"));
  EXPECT_EQ(box.open(box.seal("")).value(), "");
}

TEST(SecretBoxTest, RefusesAnotherKeyAndAnyAlteration) {
  SecretBox box("a key of at least thirty-two characters");
  SecretBox other("another key of at least thirty-two chars");
  const std::string sealed = box.seal("token");
  EXPECT_EQ(other.open(sealed).error().code, ErrorCode::kCorrupt);
  for (std::size_t i = 0; i < sealed.size(); ++i) {
    std::string altered = sealed;
    altered[i] = altered[i] == 'A' ? 'B' : 'A';
    auto opened = box.open(altered);
    EXPECT_FALSE(opened.has_value() && *opened == "token") << "altered at " << i;
  }
  EXPECT_FALSE(box.open("").has_value());
  EXPECT_FALSE(box.open("not base64 !").has_value());
}

}  // namespace
}  // namespace bulleted::appview
