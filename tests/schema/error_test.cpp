// The one error table against its vector file: every code once, in order,
// with the status and XRPC name frontends see.
#include "schema/error.hpp"

#include <gtest/gtest.h>

#include <set>

#include "tests/support/vector_file.hpp"

namespace bulleted {
namespace {

TEST(ErrorTableTest, MatchesTheVectorFile) {
  const auto lines =
      testing::read_vector_file(std::string(BULLETED_SOURCE_DIR) + "/tests/schema/error_codes.txt");
  const auto table = error_table();
  ASSERT_EQ(lines.size(), table.size()) << "one line per code";
  std::set<std::string_view> ids;
  for (std::size_t i = 0; i < table.size(); ++i) {
    const auto& line = lines[i];
    ASSERT_EQ(line.fields.size(), 3u) << "line " << line.line_number;
    EXPECT_EQ(table[i].id, line.fields[0]) << "line " << line.line_number;
    EXPECT_EQ(table[i].status, std::stoi(line.fields[1])) << line.fields[0];
    EXPECT_EQ(table[i].name, line.fields[2]) << line.fields[0];
    EXPECT_EQ(&error_status(table[i].code), &table[i]) << line.fields[0];
    EXPECT_TRUE(ids.insert(table[i].id).second) << "a code twice: " << table[i].id;
    EXPECT_GE(table[i].status, 400);
    EXPECT_LT(table[i].status, 600);
  }
}

}  // namespace
}  // namespace bulleted
