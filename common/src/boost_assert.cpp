// Boost's assertion handler (BOOST_ENABLE_ASSERT_DEBUG_HANDLER, set for the whole tree in CMakeLists.txt):
// in builds with assertions, a failed BOOST_ASSERT reports where and aborts, exactly as assert() would;
// builds without them (NDEBUG: release) compile Boost's assertions out as before.
//
// One assertion is known to be wrong and is let through: `n >= 5` in Boost.Beast's
// basic_parser::parse_chunk_header (Boost 1.74, Debian 12's). A chunked body whose first chunk is the last
// one
// ("0\r\n" then its trailer or final CRLF) that arrives a few bytes at a time reaches that line with 4 bytes,
// a valid state: the code after it asks for more bytes, and Beast removed the over-strict assertion upstream
// (boostorg/beast pull request 2861, Boost 1.86). Without this a debug build of the admin or the executor
// aborted on such a request from any peer (found by the fuzz target fuzz_http_request).
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace boost {

namespace {

bool KnownWrong(std::string_view expr, std::string_view file) {
  return expr == "n >= 5" && file.ends_with("boost/beast/http/impl/basic_parser.ipp");
}

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): the name Boost declares
void assertion_failed(char const* expr, char const* function, char const* file, long line) {
  if (KnownWrong(expr, file)) return;
  std::fprintf(stderr, "%s:%ld: %s: Assertion `%s' failed.\n", file, line, function, expr);
  std::abort();
}

// NOLINTNEXTLINE(readability-identifier-naming): the name Boost declares
void assertion_failed_msg(char const* expr, char const* msg, char const* function, char const* file,
                          long line) {
  std::fprintf(stderr, "%s:%ld: %s: Assertion `%s' failed: %s\n", file, line, function, expr, msg);
  std::abort();
}

}  // namespace boost
