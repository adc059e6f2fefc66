#include "http_server.hpp"

#include <fmt/format.h>
#include <httplib.h>
#include <spdlog/spdlog.h>

#include <stdexcept>

#include "cronwheel/metrics_endpoint.hpp"
#include "cronwheel/net/http_message.hpp"
#include "cronwheel/net/http_server.hpp"
#include "xxljob/framing.hpp"
#include "xxljob/token.hpp"

namespace cronwheel::executor {
namespace {

constexpr const char* kContentType = "application/json;charset=UTF-8";

std::string Dump(const xxljob::Envelope& e) {
  return xxljob::ToJson(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void Answer(net::Response& res, const xxljob::Envelope& e) {
  res.status = 200;
  res.set_content(Dump(e), kContentType);
}

}  // namespace

HttpServer::HttpServer(Settings settings, ExecutorService& service)
    : settings_(std::move(settings)), service_(service), server_(std::make_unique<httplib::Server>()) {}

HttpServer::~HttpServer() {
  Stop();
}

int HttpServer::Start() {
  auto& s = *server_;
  // cpp-httplib closes a keep-alive connection after 5 requests by default, so the admin opened a new TCP
  // connection for every 5th /run, and a burst of fires opened hundreds at once (docs/performance.md). Not
  // unlimited: each open connection holds one of the `threads` server threads until it closes, so a bounded
  // count makes a busy connection give its thread back now and then, and connections beyond `threads`
  // (several admins) wait for at most ~100 requests, not until one falls idle.
  net::Configure(s, {.threads = settings_.threads,
                     .keep_alive_timeout = settings_.keep_alive_timeout,
                     .keep_alive_max_count = 100,
                     .payload_max_bytes = xxljob::kMaxBodyBytes});

  // A request whose body would stay in the connection is refused, and the answer closes it.
  s.set_pre_routing_handler([](const net::Request& req, net::Response& res) {
    if (!xxljob::HasUnreadBody(req.method, req.has_header("Transfer-Encoding"),
                               req.get_header_value("Content-Length"))) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    res.set_header("Connection", "close");
    Answer(res, xxljob::Envelope::Fail(std::string(xxljob::kMethodNotSupported)));
    return httplib::Server::HandlerResponse::Handled;
  });
  s.Post(".*", [this](const net::Request& req, net::Response& res) {
    std::string body;
    Serve("POST", req.path, req.get_header_value(xxljob::kAccessTokenHeader), req.body, body);
    res.status = 200;
    res.set_content(body, kContentType);
  });
  const auto not_post = [](const net::Request&, net::Response& res) {
    Answer(res, xxljob::Envelope::Fail(std::string(xxljob::kMethodNotSupported)));
  };
  if (const auto* m = settings_.metrics) {
    const auto serve = [m](const net::Request& req, net::Response& res) { m->Serve(req, res); };
    s.Get("/metrics", serve);
    if (!settings_.path_prefix.empty()) s.Get(settings_.path_prefix + "/metrics", serve);
  }
  s.Get(".*", not_post);
  s.Put(".*", not_post);
  s.Delete(".*", not_post);
  s.Patch(".*", not_post);
  s.Options(".*", not_post);
  s.set_error_handler([this](const net::Request& req, net::Response& res) {
    if (res.status == 400 && req.method == "POST" && !req.has_header("Content-Length") &&
        !req.has_header("Transfer-Encoding")) {
      // httplib refuses a POST without Content-Length; XXL-JOB 3.x admins send /beat with no body.
      std::string body;
      Serve("POST", req.path, req.get_header_value(xxljob::kAccessTokenHeader), "", body);
      res.status = 200;
      res.set_content(body, kContentType);
    } else if (res.status == 413) {
      Answer(res, xxljob::Envelope::Fail(
                      fmt::format("invalid request, the body is larger than the limit of {} bytes "
                                  "(5 MiB)",
                                  xxljob::kMaxBodyBytes)));
    } else if (req.method != "POST") {
      Answer(res, xxljob::Envelope::Fail(std::string(xxljob::kMethodNotSupported)));
    } else {
      Answer(res, xxljob::Envelope::Fail(fmt::format("invalid request, HTTP status {}", res.status)));
    }
  });
  s.set_exception_handler([](const net::Request&, net::Response& res, const std::exception_ptr& ep) {
    std::string what = "unknown error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    spdlog::error("request error: {}", what);
    Answer(res, xxljob::Envelope::Fail("request error: " + what));
  });
  listener_ =
      std::make_unique<net::ServerThread>(s, settings_.host, settings_.port, net::DefaultListenBacklog());
  return listener_->port();
}

void HttpServer::Stop() {
  if (listener_) listener_->Stop();
}

void HttpServer::Serve(const std::string& method, const std::string& path, const std::string& token,
                       const std::string& body, std::string& response) const {
  xxljob::Envelope e;
  try {
    if (method != "POST") {
      e = xxljob::Envelope::Fail(std::string(xxljob::kMethodNotSupported));
    } else if (!xxljob::TokenMatches(token, settings_.access_token)) {
      service_.Unauthorized();
      e = xxljob::Envelope::Fail(std::string(xxljob::kWrongTokenMsg));
    } else {
      std::string_view m = path;
      const std::string& prefix = settings_.path_prefix;
      if (!prefix.empty() && m.starts_with(prefix) && m.size() > prefix.size() && m[prefix.size()] == '/') {
        m.remove_prefix(prefix.size());
      }
      e = service_.Handle(m, body, path);
    }
  } catch (const std::exception& ex) {
    spdlog::error("request {} failed: {}", path, ex.what());
    e = xxljob::Envelope::Fail(std::string("request error: ") + ex.what());
  }
  response = Dump(e);
}

}  // namespace cronwheel::executor
