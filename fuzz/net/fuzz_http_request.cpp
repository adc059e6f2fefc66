// Feeds arbitrary bytes, in arbitrary pieces, through the steps cronwheel's HTTP server takes for each
// request (common/src/net/http_framing.hpp, run by common/src/net/http_session.cpp): the head read up to its
// end (ScanHead), the Beast parser with the server's head limit, the request built from the head, its framing
// (CheckMessageFraming), the route, the body rule, the route's body limit, then the body. What must hold for
// any input:
//  * no crash, leak, hang or undefined behaviour;
//  * a head is accepted only within header_max_bytes and header_max_fields;
//  * every refusal is a 4xx with a message (the server never answers a peer's bytes with a 5xx);
//  * no body longer than its route's limit is ever accepted, whatever its framing (Content-Length or
//    chunked), and a route that takes no body never gets one;
//  * the unparsed bytes held between pieces never exceed the head limit plus one piece.
// Several requests may follow each other in one input (pipelining): each is checked.
//
// Input layout: the first byte chooses the piece size (1..64 bytes, or everything at once), the rest is the
// byte stream.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "net/http_framing.hpp"

namespace {

using namespace cronwheel::net;
using namespace cronwheel::net::detail;

void Check(bool ok) {
  if (!ok) std::abort();
}

const HttpServerSettings& Settings() {
  static const HttpServerSettings s{
      .payload_max_bytes = 4096, .header_max_bytes = 1024, .header_max_fields = 16};
  return s;
}

std::vector<RouteEntry> MakeRoutes() {
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
  add("POST", "/run", {});
  add("PUT", "/jobs/([^/]+)", {.body_required = true});
  add("GET", "/(?!api/)(.*)", {});
  return routes;
}

void CheckRefusal(const Refusal& r) {
  Check(r.status >= 400 && r.status < 500);
  Check(!r.message.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto routes = MakeRoutes();
  if (size == 0) return 0;
  const std::size_t piece = data[0] == 0 ? size : (data[0] % 64) + 1;
  // What the peer has sent and the server has not handed to a parser yet.
  std::string pending(reinterpret_cast<const char*>(data + 1), size - 1);

  for (int requests = 0; requests < 8 && !pending.empty(); ++requests) {
    RequestParser parser;
    ConfigureParser(parser, Settings());
    std::string held;  // received, not consumed by the parser yet (the server's read buffer)
    std::size_t next = 0;
    std::optional<Refusal> refused;
    const RouteEntry* route = nullptr;
    std::uint64_t limit = 0;
    Request req;
    bool head_done = false;
    HeadScan scan;
    while (!parser.is_done()) {
      if (next >= pending.size()) return 0;  // the peer stopped mid-request: the server times out
      const auto take = std::min(piece, pending.size() - next);
      held.append(pending, next, take);
      next += take;
      Check(held.size() <= Settings().header_max_bytes + piece + 64);
      boost::system::error_code ec;
      std::size_t used = 0;
      if (!head_done) {
        // As the server reads a head: until its closing empty line (or its limit), then parsed at once.
        scan = ScanHead(held, scan);
        if (scan.end == 0 && held.size() < Settings().header_max_bytes) continue;
        Check(scan.end == 0 || held.compare(scan.end - 4, 4, "\r\n\r\n") == 0);
        used = parser.put(boost::asio::buffer(held.data(), scan.end > 0 ? scan.end : held.size()), ec);
        if (!ec && !parser.is_header_done()) ec = boost::beast::http::error::header_limit;
      } else {
        used = parser.put(boost::asio::buffer(held), ec);
      }
      held.erase(0, used);
      if (ec == boost::beast::http::error::need_more) continue;
      if (ec) {
        refused = ParseFailure(ec, Settings(), head_done ? limit : Settings().payload_max_bytes);
        break;
      }
      if (!head_done && parser.is_header_done()) {
        head_done = true;
        if (auto r = FillRequest(parser.get(), Settings(), req)) {
          refused = r;
          break;
        }
        if (auto r = CheckMessageFraming(req, scan.obs_fold)) {
          Check(r->status == 400 && r->close);
          refused = r;
          break;
        }
        // What passed: at most one Transfer-Encoding, and it is chunked (review 2, N6).
        Check(req.get_header_value_count("Transfer-Encoding") <= 1);
        Check(!req.has_header("Transfer-Encoding") || parser.chunked());
        Check(req.headers.size() <= Settings().header_max_fields);
        Check(!req.path.empty() && req.path.front() == '/');
        auto match = FindRoute(routes, req);
        if (match.route == nullptr) {
          Check(match.refusal.status == 404 || match.refusal.status == 405);
          refused = match.refusal;
          break;
        }
        route = match.route;
        const auto length = parser.content_length();
        if (auto r = CheckBodyFraming(*route, req, length ? std::optional(*length) : std::nullopt,
                                      parser.chunked(), Settings())) {
          refused = r;
          break;
        }
        limit = BodyLimit(*route, req, Settings());
        parser.body_limit(limit);
      }
    }
    if (refused) {
      CheckRefusal(*refused);
      return 0;  // a refused request whose body may follow ends the connection
    }
    Check(route != nullptr);
    Check(parser.get().body().size() <= limit);
    // The next request starts with what this one's parser left unconsumed.
    pending = held + pending.substr(next);
  }
  return 0;
}
