// The HTTP server's framing decisions (common/src/net/http_framing.hpp) on whole requests, without
// sockets: the head limits, the route, and the body rule of each route whatever the body's framing.
#include "net/http_framing.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>

namespace {

using namespace cronwheel::net;
using namespace cronwheel::net::detail;
using ::testing::HasSubstr;

const HttpServerSettings kSettings{
    .payload_max_bytes = 1000, .header_max_bytes = 512, .header_max_fields = 8};

std::vector<RouteEntry> Routes() {
  std::vector<RouteEntry> routes;
  const auto add = [&](std::string method, const std::string& pattern, RouteOptions options) {
    routes.push_back({.method = std::move(method),
                      .pattern_text = pattern,
                      .pattern = std::regex(pattern),
                      .handler = [](const Request&, Response&) {},
                      .options = std::move(options)});
  };
  add("GET", "/jobs/([^/]+)", {});
  add("POST", "/jobs", {.body_max_bytes = 100, .body_required = true});
  add("POST", "/jobs/([^/]+)/start", {});
  add("DELETE", "/jobs/([^/]+)", {});
  return routes;
}

// What the server would answer: the refusal's status, or 0 when the request reaches its handler (then
// `body` holds what the handler gets).
struct Outcome {
  int status = 0;
  std::string message;
  std::string body;
};

Outcome Serve(const std::string& bytes) {
  static const auto routes = Routes();
  // As the server reads a head: up to its closing empty line, then parsed at once.
  const auto scan = ScanHead(bytes);
  RequestParser parser;
  ConfigureParser(parser, kSettings);
  boost::system::error_code ec;
  std::size_t used =
      parser.put(boost::asio::buffer(bytes.data(), scan.end > 0 ? scan.end : bytes.size()), ec);
  if (ec && ec != boost::beast::http::error::need_more) {
    const auto r = ParseFailure(ec, kSettings, kSettings.payload_max_bytes);
    return {r.status, r.message, ""};
  }
  if (!parser.is_header_done()) return {-1, "incomplete head", ""};
  Request req;
  if (auto r = FillRequest(parser.get(), kSettings, req)) return {r->status, r->message, ""};
  if (auto r = CheckMessageFraming(req, scan.obs_fold)) return {r->status, r->message, ""};
  auto match = FindRoute(routes, req);
  if (match.route == nullptr) return {match.refusal.status, match.refusal.message, ""};
  const auto length = parser.content_length();
  if (auto r = CheckBodyFraming(*match.route, req, length ? std::optional(*length) : std::nullopt,
                                parser.chunked(), kSettings)) {
    return {r->status, r->message, ""};
  }
  parser.body_limit(BodyLimit(*match.route, req, kSettings));
  while (!parser.is_done()) {
    const auto n = parser.put(boost::asio::buffer(bytes.data() + used, bytes.size() - used), ec);
    used += n;
    if (ec == boost::beast::http::error::need_more && used == bytes.size())
      return {-1, "incomplete body", ""};
    if (ec && ec != boost::beast::http::error::need_more) {
      const auto r = ParseFailure(ec, kSettings, BodyLimit(*match.route, req, kSettings));
      return {r.status, r.message, ""};
    }
  }
  return {0, "", parser.get().body()};
}

std::string Chunked(std::size_t bytes) {
  std::string out;
  for (std::size_t sent = 0; sent < bytes; sent += 10) {
    out += "a\r\n" + std::string(10, 'x') + "\r\n";
  }
  return out + "0\r\n\r\n";
}

TEST(HttpFraming, EachRequestIsServedOrRefusedWithTheStatusItsFramingDeserves) {
  struct Case {
    const char* name;
    std::string bytes;
    int status;
    const char* says;
  };
  const std::vector<Case> cases = {
      {"a GET", "GET /jobs/7 HTTP/1.1\r\nHost: a\r\n\r\n", 0, ""},
      {"a POST with its body", "POST /jobs HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}", 0, ""},
      {"a chunked POST within the limit",
       "POST /jobs HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" + Chunked(100), 0, ""},
      {"a chunked POST over the route's limit (100)",
       "POST /jobs HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" + Chunked(110), 413, "100 bytes"},
      {"a chunked POST over the server's limit (1000) on a route without its own",
       "POST /jobs/1/start HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" + Chunked(1010), 413,
       "1000 bytes"},
      {"a Content-Length over the route's limit, refused before the body",
       "POST /jobs HTTP/1.1\r\nContent-Length: 101\r\n\r\n", 413, "100 bytes"},
      {"a Content-Length of 99999999999",
       "POST /jobs/1/start HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n", 413, "1000 bytes"},
      {"a POST that needs a body sent without a length", "POST /jobs HTTP/1.1\r\nHost: a\r\n\r\n", 411,
       "Content-Length"},
      {"an action sent without a length (an empty body)", "POST /jobs/1/start HTTP/1.1\r\nHost: a\r\n\r\n", 0,
       ""},
      {"a GET with a body", "GET /jobs/1 HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", 400, "has no body"},
      {"a GET with a chunked body", "GET /jobs/1 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
       400, "has no body"},
      {"a head over header_max_bytes",
       "GET /jobs/1 HTTP/1.1\r\nX-Long: " + std::string(600, 'h') + "\r\n\r\n", 431, "512 bytes"},
      {"a target over header_max_bytes", "GET /" + std::string(600, 'u') + " HTTP/1.1\r\n\r\n", 431, "512"},
      {"more fields than header_max_fields",
       [] {
         std::string s = "GET /jobs/1 HTTP/1.1\r\n";
         for (int i = 0; i < 9; ++i)
           s += "X-" + std::to_string(i) + ": v\r\n";
         return s + "\r\n";
       }(),
       431, "more than 8 header fields"},
      {"two different Content-Lengths",
       "POST /jobs HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", 400, "Content-Length"},
      {"a negative Content-Length", "POST /jobs HTTP/1.1\r\nContent-Length: -5\r\n\r\n", 400,
       "Content-Length"},
      {"a Transfer-Encoding that is not chunked", "POST /jobs HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
       400, "Transfer-Encoding"},
      {"chunked and a Content-Length (smuggling)",
       "POST /jobs HTTP/1.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400,
       "Transfer-Encoding"},
      {"a broken chunk", "POST /jobs HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
       400, "chunked"},
      {"HTTP/9.9", "GET /jobs/1 HTTP/9.9\r\n\r\n", 400, "version"},
      {"garbage", "GARBAGE\r\n\r\n", 400, ""},
      {"a NUL in a header", std::string("GET /jobs/1 HTTP/1.1\r\nX-Nul: a\0b\r\n\r\n", 34), 400, "header"},
      {"an absolute target", "GET http://evil/jobs/1 HTTP/1.1\r\n\r\n", 400, "starting with '/'"},
      {"no route", "GET /nothing HTTP/1.1\r\n\r\n", 404, "no such resource"},
      {"a method the path does not take", "PUT /jobs/1 HTTP/1.1\r\nContent-Length: 0\r\n\r\n", 405, "PUT"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto out = Serve(c.bytes);
    EXPECT_EQ(out.status, c.status) << out.message;
    EXPECT_THAT(out.message, HasSubstr(c.says));
  }
}

TEST(HttpFraming, TheRequestCarriesItsDecodedPathQueryAndHeadersCaseInsensitively) {
  RequestParser parser;
  ConfigureParser(parser, kSettings);
  const std::string bytes =
      "GET /jobs/a%20b?x=1&y=two%20words&x=3&flag HTTP/1.0\r\nX-Thing: v\r\nx-thing: w\r\n\r\n";
  boost::system::error_code ec;
  parser.put(boost::asio::buffer(bytes), ec);
  ASSERT_FALSE(ec) << ec.message();
  Request req;
  ASSERT_FALSE(FillRequest(parser.get(), kSettings, req));
  EXPECT_EQ(req.path, "/jobs/a b");
  EXPECT_EQ(req.version, "HTTP/1.0");
  EXPECT_EQ(req.get_param_value("x"), "1");
  EXPECT_EQ(req.get_param_value("x", 1), "3");
  EXPECT_EQ(req.get_param_value("y"), "two words");
  EXPECT_TRUE(req.has_param("flag"));
  EXPECT_EQ(req.get_header_value_count("X-THING"), 2u);
  EXPECT_EQ(req.get_header_value("x-thing", 1), "w");
  const auto routes = Routes();
  const auto match = FindRoute(routes, req);
  ASSERT_NE(match.route, nullptr);
  EXPECT_EQ(req.matches[1].str(), "a b");
}

TEST(HttpFraming, AHeadRoutedAsAGetAndA405NamesTheMethodsThePathTakes) {
  const auto routes = Routes();
  Request head;
  head.method = "HEAD";
  head.path = "/jobs/1";
  EXPECT_NE(FindRoute(routes, head).route, nullptr);
  Request patch;
  patch.method = "PATCH";
  patch.path = "/jobs/1";
  const auto match = FindRoute(routes, patch);
  EXPECT_EQ(match.route, nullptr);
  EXPECT_EQ(match.refusal.status, 405);
  EXPECT_EQ(match.allow, "GET, DELETE");
}

TEST(HttpMessage, AResponseHeaderWithALineBreakIsNotSet) {
  Response res;
  res.set_header("X-Ok", "fine");
  res.set_header("X-Split", "a\r\nSet-Cookie: stolen=1");
  EXPECT_EQ(res.get_header_value("x-ok"), "fine");
  EXPECT_FALSE(res.has_header("X-Split"));
  res.set_header("X-Ok", "again");
  EXPECT_EQ(res.headers.count("X-OK"), 1u) << "set_header replaces";
}

TEST(HttpMessage, PercentDecodingLeavesWhatIsNotAnEscapeAsItIs) {
  EXPECT_EQ(PercentDecode("/a%2Fb%zz%4"), "/a/b%zz%4");
  EXPECT_EQ(PercentDecode("a+b"), "a+b");
  EXPECT_EQ(PercentDecode("a+b", true), "a b");
}

TEST(HttpMessage, PercentEncodingKeepsOnlyUnreservedCharactersAndRoundTrips) {
  EXPECT_EQ(PercentEncode("a-Z.0_~"), "a-Z.0_~");
  EXPECT_EQ(PercentEncode("a b/c?d=e&f+g%"), "a%20b%2Fc%3Fd%3De%26f%2Bg%25");
  EXPECT_EQ(PercentEncode("\xE4\xB8\xAD<b>"), "%E4%B8%AD%3Cb%3E");
  const std::string any = "x y/\n#%+&=\xFF";
  EXPECT_EQ(PercentDecode(PercentEncode(any)), any);
}

}  // namespace

// A request arriving a few bytes at a time is parsed as the server's read loop does it: the bytes received
// and not yet consumed are handed to the parser again with the next ones. An empty chunked body ("0\r\n" then
// the final CRLF, or a trailer) so received once hit an assertion of Boost.Beast 1.74 that a debug build
// aborted on (common/src/boost_assert.cpp); every split of it now parses to the end.
TEST(HttpFraming, AnEmptyChunkedBodyArrivingAFewBytesAtATimeIsParsedWhateverTheSplit) {
  const std::string head = "POST /jobs/1/start HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (const std::string body : {"0\r\n\r\n", "0\r\nX-Trailer: a\r\n\r\n", "2\r\n{}\r\n0\r\n\r\n"}) {
    for (std::size_t piece = 1; piece <= 4; ++piece) {
      SCOPED_TRACE(::testing::PrintToString(body) + " in pieces of " + std::to_string(piece));
      const std::string bytes = head + body;
      RequestParser parser;
      ConfigureParser(parser, kSettings);
      std::string held;
      std::size_t next = 0;
      boost::system::error_code ec;
      while (!parser.is_done() && next < bytes.size()) {
        const auto take = std::min(piece, bytes.size() - next);
        held.append(bytes, next, take);
        next += take;
        held.erase(0, parser.put(boost::asio::buffer(held), ec));
        ASSERT_TRUE(!ec || ec == boost::beast::http::error::need_more) << ec.message();
      }
      EXPECT_TRUE(parser.is_done());
      EXPECT_EQ(parser.get().body(), body.starts_with("2") ? "{}" : "");
    }
  }
}

// Security review 2, N6: only a single `Transfer-Encoding: chunked` frames a body; every other way of saying
// it is refused with 400 before a byte of the body is read (RFC 9112 §6.3), and so is a folded header line
// (RFC 9112 §5.2), which Beast would otherwise join into the field before it.
TEST(HttpFraming, N6_OnlyASingleChunkedTransferEncodingIsAcceptedAndAFoldedLineIsRefused) {
  const std::string post = "POST /jobs HTTP/1.1\r\nHost: a\r\n";
  const std::string body = Chunked(20);
  struct Case {
    const char* name;
    std::string head;  // the fields after the request line and Host
    int status;
    const char* says;
  };
  const std::vector<Case> cases = {
      {"chunked", "Transfer-Encoding: chunked\r\n", 0, ""},
      {"CHUNKED, in capitals", "Transfer-Encoding: CHUNKED\r\n", 0, ""},
      {"chunked with spaces and a tab around it", "Transfer-Encoding:  \tchunked \t\r\n", 0, ""},
      {"gzip, chunked", "Transfer-Encoding: gzip, chunked\r\n", 400, "'gzip, chunked'"},
      {"chunked, chunked", "Transfer-Encoding: chunked, chunked\r\n", 400, "only 'chunked', alone"},
      {"identity, chunked", "Transfer-Encoding: identity, chunked\r\n", 400, "only 'chunked', alone"},
      {"gzip then chunked in two fields", "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n", 400,
       "2 Transfer-Encoding fields"},
      {"chunked then gzip in two fields", "Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n", 400,
       "Transfer-Encoding"},
      {"an empty Transfer-Encoding then chunked", "Transfer-Encoding: \r\nTransfer-Encoding: chunked\r\n",
       400, "2 Transfer-Encoding fields"},
      {"a folded Transfer-Encoding", "Transfer-Encoding: gzip,\r\n chunked\r\n", 400, "folding"},
      {"a Transfer-Encoding folded from an empty first line", "Transfer-Encoding:\r\n\tchunked\r\n", 400,
       "folding"},
      {"a folded field of another name", "X-Note: a\r\n b\r\nTransfer-Encoding: chunked\r\n", 400, "folding"},
      {"chunked and a Content-Length", "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", 400,
       "Content-Length"},
      {"a Content-Length and chunked", "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", 400,
       "Content-Length"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::string request = post;
    request += c.head;
    request += "\r\n";
    request += body;
    const auto out = Serve(request);
    EXPECT_EQ(out.status, c.status) << out.message;
    EXPECT_THAT(out.message, HasSubstr(c.says));
    if (c.status == 0) {
      EXPECT_EQ(out.body, std::string(20, 'x'));
    }
  }
  // On a route that takes no body, and on one that does not exist, the framing is refused first.
  EXPECT_EQ(Serve("GET /nothing HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n").status, 400);
  EXPECT_EQ(Serve("GET /jobs/1 HTTP/1.1\r\nX-A: 1\r\n  2\r\n\r\n").status, 400);
}

TEST(HttpFraming, N6_TheRefusalOfAFramingEndsTheConnection) {
  Request req;
  req.headers.emplace("Transfer-Encoding", "gzip, chunked");
  const auto refusal = CheckMessageFraming(req, false);
  ASSERT_TRUE(refusal);
  EXPECT_TRUE(refusal->close) << "the bytes after the head are not a body the server can find the end of";
  Request plain;
  EXPECT_FALSE(CheckMessageFraming(plain, false));
  const auto folded = CheckMessageFraming(plain, true);
  ASSERT_TRUE(folded);
  EXPECT_EQ(folded->status, 400);
  EXPECT_TRUE(folded->close);
}

// ScanHead finds the end of a head and any folded line however the bytes are split across reads, and never
// looks past the head (a body may begin with a space).
TEST(HttpFraming, N6_AHeadIsScannedTheSameWhateverPiecesItArrivesIn) {
  const std::string folded = "GET /jobs/1 HTTP/1.1\r\nX-A: 1\r\n 2\r\n\r\n";
  const std::string plain = "POST /jobs HTTP/1.1\r\nContent-Length: 3\r\n\r\n \tx";
  for (std::size_t piece = 1; piece <= 5; ++piece) {
    for (const auto& [bytes, fold, end] :
         {std::tuple{folded, true, folded.size()}, std::tuple{plain, false, plain.size() - 3}}) {
      SCOPED_TRACE(::testing::PrintToString(bytes) + " in pieces of " + std::to_string(piece));
      HeadScan scan;
      for (std::size_t have = 0; scan.end == 0 && have < bytes.size();) {
        have = std::min(bytes.size(), have + piece);
        scan = ScanHead(std::string_view(bytes).substr(0, have), scan);
      }
      EXPECT_EQ(scan.end, end);
      EXPECT_EQ(scan.obs_fold, fold);
    }
  }
  EXPECT_EQ(ScanHead("GET / HTTP/1.1\r\nHost: a\r\n").end, 0u) << "not yet whole";
}
