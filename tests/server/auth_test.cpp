// The token file and the comparison behind bearer-token authentication (service/server/auth.hpp);
// the end-to-end behaviour is tests/client/secure_server_test.cpp's.
#include "service/server/auth.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace ukes::server {
namespace {

// A token file holding `text`, removed with this object.
struct TokenFile {
  explicit TokenFile(const std::string& text)
      : path(std::filesystem::temp_directory_path() /
             ("ukes_tokens_" + std::to_string(std::hash<std::string>()(text)))) {
    std::ofstream(path) << text;
  }
  ~TokenFile() { std::filesystem::remove(path); }
  std::filesystem::path path;
};

std::string refusal(const std::string& text) {
  const TokenFile file(text);
  try {
    Authenticator auth(file.path.string(), false);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(Auth, TokenFilesAreCheckedLineByLine) {
  EXPECT_EQ(refusal("# who token\n\nalice 0123456789abcdef\n"), "");
  EXPECT_NE(refusal("alice\n").find("line 1: expected `NAME TOKEN`"), std::string::npos);
  EXPECT_NE(refusal("a 0123456789abcdef extra\n").find("line 1"), std::string::npos);
  EXPECT_NE(refusal("# c\nalice short\n").find("line 2: tokens must be at least 16"),
            std::string::npos);
  EXPECT_NE(refusal("a 0123456789abcdef\na 0123456789abcdeX\n").find("line 2: duplicate"),
            std::string::npos);
  EXPECT_NE(refusal("a 0123456789abcdef\nb 0123456789abcdef\n").find("duplicate"),
            std::string::npos);
  EXPECT_NE(refusal("# nothing\n").find("no tokens"), std::string::npos);
  EXPECT_NE(refusal("").find("no tokens"), std::string::npos);
  EXPECT_THROW(Authenticator("/nonexistent/tokens", false), std::runtime_error);
  EXPECT_FALSE(Authenticator().enabled());
  EXPECT_TRUE(Authenticator("", true).enabled());
}

TEST(Auth, ConstantTimeEqualIsEquality) {
  EXPECT_TRUE(constant_time_equal("", ""));
  EXPECT_TRUE(constant_time_equal("secret-token", "secret-token"));
  EXPECT_FALSE(constant_time_equal("secret-token", "secret-tokeX"));
  EXPECT_FALSE(constant_time_equal("secret-token", "secret-token-longer"));
  EXPECT_FALSE(constant_time_equal("secret", ""));
  EXPECT_FALSE(constant_time_equal(std::string("a\0b", 3), std::string("a\0c", 3)));
}

}  // namespace
}  // namespace ukes::server
