#pragma once
// The pure part of cronwheel's HTTP server (cronwheel/net/http_server.hpp): what it decides from bytes
// and heads, without sockets, so the fuzz target (fuzz/net/) drives exactly what the server runs.
//  * where a request's head ends in the bytes received, and whether a line of it is folded;
//  * a Beast request parser set to the server's limits;
//  * the status and message for a parse failure;
//  * a Request built from a parsed head (the field count limit, the path and query decoded);
//  * the route for a request, or 404 / 405;
//  * the body rule of a route: its limit, a refused length, a body where none is taken.
//
// Thread-safety: pure functions; a RouteTable is read-only once the server starts.

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "cronwheel/net/http_server.hpp"

namespace cronwheel::net::detail {

namespace http = boost::beast::http;
using RequestParser = http::request_parser<http::string_body>;

// An answer the server makes itself: status and a plain English message.
struct Refusal {
  int status = 400;
  std::string message;
  // The connection closes after the answer even when its framing allows another request (a 411: the
  // bytes that follow may be a body sent without a length).
  bool close = false;
};

// How much of a request's head has arrived, from the bytes received so far (the read buffer, beginning
// with the head). Incremental: pass the previous scan of the same buffer with more bytes after it.
struct HeadScan {
  std::size_t end = 0;      // bytes of the head, its closing empty line (CRLF CRLF) included; 0 = not yet
  std::size_t scanned = 0;  // where the next scan resumes
  // A line of the head begins with a space or a tab: obsolete line folding (obs-fold, RFC 9112 §5.2),
  // which Beast would silently join to the field before it.
  bool obs_fold = false;
};
HeadScan ScanHead(std::string_view received, HeadScan previous = {});

// Sets `parser`'s head limit (header_max_bytes) and lifts its body limit until the request is routed:
// the server then applies the route's (CheckBodyFraming, BodyLimit) before it reads a body byte.
void ConfigureParser(RequestParser& parser, const HttpServerSettings& settings);

// The answer to a parse error: 431 for a head over its limit, 413 for a body over its limit, 400 for the
// rest (malformed request line, header, length or chunk).
Refusal ParseFailure(const boost::system::error_code& ec, const HttpServerSettings& settings,
                     std::uint64_t body_limit);

// Fills `req` (method, target, path, query, version, headers) from a parsed head; a refusal when it has more
// than header_max_fields fields or its target is not origin-form ("/...").
std::optional<Refusal> FillRequest(const RequestParser::value_type& head, const HttpServerSettings& settings,
                                   Request& req);

// Whether the request's head frames a message the server reads one way only (security review 2, N6;
// RFC 9112 §5.2 and §6.3), before anything else is decided about it: 400 (and the connection closed) for
// a folded header line (`obs_fold`, from ScanHead), more than one Transfer-Encoding field, a
// Transfer-Encoding other than exactly `chunked` (case-insensitive; a list of codings such as
// `gzip, chunked` too), or a Transfer-Encoding with a Content-Length. A front proxy that read such a head
// differently would let a request be smuggled past it.
std::optional<Refusal> CheckMessageFraming(const Request& req, bool obs_fold);

struct RouteEntry {
  std::string method;
  std::string pattern_text;
  std::regex pattern;
  HttpServer::Handler handler;
  HttpServer::RouteOptions options;
};

struct RouteMatch {
  const RouteEntry* route = nullptr;  // nullptr: `refusal` says why
  Refusal refusal;
  std::string allow;  // for 405: the methods the path takes ("GET, POST")
};

// The first route for req.method (HEAD: GET) whose pattern matches req.path whole; sets req.matches.
RouteMatch FindRoute(const std::vector<RouteEntry>& routes, Request& req);

// The most body bytes `route` takes for `req` (RouteOptions::body_max_bytes or its default).
std::uint64_t BodyLimit(const RouteEntry& route, const Request& req, const HttpServerSettings& settings);

// Whether the request's announced body is refused before it is read: one where the route takes none (400),
// a Content-Length over the route's limit (413), no length where the route needs a body (411).
// `content_length` is the parsed header (nullopt if absent), `chunked` whether Transfer-Encoding is chunked
// (CheckMessageFraming has refused every other Transfer-Encoding).
std::optional<Refusal> CheckBodyFraming(const RouteEntry& route, const Request& req,
                                        std::optional<std::uint64_t> content_length, bool chunked,
                                        const HttpServerSettings& settings);

}  // namespace cronwheel::net::detail
