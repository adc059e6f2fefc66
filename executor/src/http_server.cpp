#include "http_server.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <stdexcept>

#include "xxljob/framing.hpp"
#include "xxljob/token.hpp"

namespace cronwheel::executor {
namespace {

constexpr const char* kContentType = "application/json;charset=UTF-8";

void Answer(net::Response& res, const xxljob::Envelope& e) {
  res.status = 200;
  res.set_content(xxljob::ToJson(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                  kContentType);
}

}  // namespace

HttpServer::HttpServer(Settings settings, ExecutorService& service)
    : settings_(std::move(settings)), service_(service) {}

HttpServer::~HttpServer() {
  Stop();
}

int HttpServer::Start() {
  // Connections are kept for up to 100,000 requests: the admin's client keeps its connections across
  // bursts, and a kept connection holds no thread here.
  server_ = std::make_unique<net::HttpServer>(
      net::HttpServerSettings{.threads = 0,
                              .io_threads = settings_.threads,
                              .keep_alive_timeout = settings_.keep_alive_timeout,
                              .keep_alive_max_count = 100'000,
                              .payload_max_bytes = xxljob::kMaxBodyBytes});
  auto& s = *server_;
  const auto token_check = [this](net::Request& req, net::Response& res) {
    if (xxljob::TokenMatches(req.get_header_value(xxljob::kAccessTokenHeader), settings_.access_token)) {
      req.authenticated = true;  // the admin: its connections are not ones a flood can crowd out
      return true;
    }
    service_.Unauthorized();
    Answer(res, xxljob::Envelope::Fail(std::string(xxljob::kWrongTokenMsg)));
    return false;
  };
  if (const auto* m = settings_.metrics) {
    const auto serve = [m](const net::Request& req, net::Response& res) { m->Serve(req, res); };
    s.Get("/metrics", serve);
    if (!settings_.path_prefix.empty()) s.Get(settings_.path_prefix + "/metrics", serve);
  }
  s.Post(".*",
         [this](const net::Request& req, net::Response& res) {
           std::string_view method = req.path;
           const std::string& prefix = settings_.path_prefix;
           if (!prefix.empty() && method.starts_with(prefix) && method.size() > prefix.size() &&
               method[prefix.size()] == '/') {
             method.remove_prefix(prefix.size());
           }
           Answer(res, service_.Handle(method, req.body, req.path));
         },
         {.check_head = token_check});
  // What the server answers itself, in the protocol's envelope.
  s.SetErrorHandler([](const net::Request& req, net::Response& res) {
    if (res.status == 413) {
      return Answer(res, xxljob::Envelope::Fail(fmt::format(
                             "invalid request, the body is larger than the limit of {} bytes (5 MiB)",
                             xxljob::kMaxBodyBytes)));
    }
    if (res.status == 405 || (res.status == 400 && !req.method.empty() && req.method != "POST")) {
      return Answer(res, xxljob::Envelope::Fail(std::string(xxljob::kMethodNotSupported)));
    }
    std::string why = res.body;
    while (!why.empty() && why.back() == '\n')
      why.pop_back();
    Answer(res, xxljob::Envelope::Fail(fmt::format("invalid request, HTTP status {}: {}", res.status, why)));
  });
  s.SetExceptionHandler([](const net::Request& req, net::Response& res, const std::exception_ptr& ep) {
    std::string what = "unknown error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    spdlog::error("request {} failed: {}", req.path.substr(0, 200), what);
    Answer(res, xxljob::Envelope::Fail("request error: " + what));
  });
  return s.Start(settings_.host, settings_.port);
}

void HttpServer::Stop() {
  if (server_) server_->Stop();
}

}  // namespace cronwheel::executor
