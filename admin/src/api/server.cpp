#include "admin/api/server.hpp"

#include <fmt/format.h>
#include <httplib.h>
#include <spdlog/spdlog.h>

#include <cctype>
#include <pqxx/pqxx>

#include "api/routes.hpp"
#include "cronwheel/metrics_endpoint.hpp"
#include "cronwheel/net/http_server.hpp"
#include "xxljob/framing.hpp"

namespace cronwheel::admin {
namespace {

using namespace api;

// The REST API (JSON errors with an HTTP status) as opposed to XXL-JOB's executor API under /api/ and
// /xxl-job-admin/ (HTTP 200 with a code-500 envelope) and the console's files.
bool IsRestPath(const std::string& path) {
  // /api/v1, /api/v1/..., and any later version: /api/v<digit>...
  return path.starts_with("/api/v") && path.size() > 6 && std::isdigit(static_cast<unsigned char>(path[6]));
}
bool IsExecutorApiPath(const std::string& path) {
  return !IsRestPath(path) && (path.starts_with("/api/") || path.starts_with("/xxl-job-admin/"));
}
bool HasLength(const net::Request& req) {
  return req.has_header("Content-Length") || req.has_header("Transfer-Encoding");
}

void OnException(const net::Request& req, net::Response& res, const std::exception_ptr& ep) {
  std::string what = "unknown error";
  int status = 500;
  try {
    std::rethrow_exception(ep);
  } catch (const pqxx::broken_connection& e) {
    what = fmt::format("the database is unavailable: {}", e.what());
    status = 503;
  } catch (const PoolExhausted& e) {
    what = e.what();
    status = 503;
  } catch (const std::exception& e) {
    what = e.what();
  }
  spdlog::error("{} {}: {}", req.method, req.path, what);
  if (req.path.find("/api/v1/") != std::string::npos) {
    SendError(res, status, what);
  } else {
    SendEnvelope(res, xxljob::Envelope::Fail(fmt::format("request error: {}", what)));
  }
}

// Answers a request cpp-httplib could not route or read, in the dialect of its path.
void OnError(const net::Request& req, net::Response& res, std::size_t max_body_bytes) {
  if (!res.body.empty()) return;
  const auto path = req.path.substr(0, 200);
  if (IsExecutorApiPath(req.path)) {
    // XXL-JOB's protocol: HTTP 200 and a code-500 envelope saying what is wrong.
    std::string msg;
    if (res.status == 413) {
      msg = fmt::format("invalid request, the body is larger than the limit of {} bytes", max_body_bytes);
    } else if (req.method != "POST") {
      msg = std::string(xxljob::kMethodNotSupported);
    } else if (res.status == 404) {
      msg = xxljob::UriNotFound(req.path);
    } else if (!HasLength(req)) {
      msg = "invalid request, a POST needs a Content-Length header";
    } else {
      msg = fmt::format(
          "invalid request, HTTP status {}: the request line or a header could not be read (malformed, or "
          "longer "
          "than 8 KiB)",
          res.status);
    }
    return SendEnvelope(res, xxljob::Envelope::Fail(msg));
  }
  if (res.status == 400 && req.method == "PUT" && !HasLength(req)) {
    // A PUT always carries a document; httplib cannot read one it was not told the length of.
    SendError(res, 411,
              fmt::format("{} {} needs a Content-Length header; send a JSON body", req.method, path));
  } else if (res.status == 413) {
    SendError(res, 413, "the body is larger than the limit");
  } else if (res.status == 404) {
    SendError(res, 404, fmt::format("no such resource: {} {}", req.method, path));
  } else if (res.status == 405) {
    SendError(res, 405, fmt::format("method {} not allowed on {}", req.method, path));
  } else {
    SendError(res, res.status, fmt::format("the request could not be read (HTTP {})", res.status));
  }
}

}  // namespace

struct ApiServer::Impl {
  RouteContext context;
  Routes routes;
};

ApiServer::ApiServer(Settings settings, Services services, ringwheel::Clock& clock)
    : settings_(std::move(settings)),
      services_(std::move(services)),
      clock_(clock),
      server_(std::make_unique<httplib::Server>()) {
  net::Configure(*server_, {.threads = settings_.threads,
                            .keep_alive_timeout = std::chrono::seconds(2),
                            .keep_alive_max_count = 100'000,
                            .read_timeout = std::chrono::seconds(10),
                            .payload_max_bytes = settings_.max_body_bytes});
  server_->set_exception_handler(OnException);
  impl_ = std::make_unique<Impl>(
      Impl{.context = {services_, settings_, clock_},
           .routes = Routes(*server_, services_.authenticator,
                            services_.console != nullptr ? &services_.console->routes : nullptr)});
  server_->set_pre_routing_handler([this](const net::Request& req, net::Response& res) {
    // A body httplib would leave unread (xxljob::HasUnreadBody) is refused, and the answer closes the
    // connection.
    if (xxljob::HasUnreadBody(req.method, req.has_header("Transfer-Encoding"),
                              req.get_header_value("Content-Length"))) {
      res.set_header("Connection", "close");
      if (IsExecutorApiPath(req.path)) {
        SendEnvelope(res, xxljob::Envelope::Fail(std::string(xxljob::kMethodNotSupported)));
      } else {
        SendError(res, 400,
                  fmt::format("{} {}: a {} request has no body; send it without one", req.method,
                              req.path.substr(0, 200), req.method));
      }
      return httplib::Server::HandlerResponse::Handled;
    }
    // A POST with neither Content-Length nor Transfer-Encoding has an empty body (RFC 9112 §6.3), which is
    // what `curl -X POST` and most clients send for an action; cpp-httplib 0.11 would refuse it.
    if (req.method == "POST" && !HasLength(req) && IsRestPath(req.path)) {
      if (!impl_->routes.ServeBodilessPost(req, res)) {
        SendError(res, 404, fmt::format("no such resource: POST {}", req.path.substr(0, 200)));
      }
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  server_->set_error_handler(
      [this](const net::Request& req, net::Response& res) { OnError(req, res, settings_.max_body_bytes); });
  auto& ctx = impl_->context;
  auto& routes = impl_->routes;
  RegisterExecutorRoutes(*server_, ctx, "");
  RegisterExecutorRoutes(*server_, ctx, "/xxl-job-admin");
  if (services_.metrics != nullptr) {
    // Before the console's pages, which answer every other GET.
    server_->Get("/metrics",
                 [this](const net::Request& req, net::Response& res) { services_.metrics->Serve(req, res); });
  }
  RegisterHealthRoutes(routes, ctx);
  RegisterGroupRoutes(routes, ctx);
  RegisterJobRoutes(routes, ctx);
  RegisterLogRoutes(routes, ctx);
  if (services_.console != nullptr) {
    RegisterSessionRoutes(routes, ctx);
    RegisterUserRoutes(routes, ctx);
    RegisterTokenRoutes(routes, ctx);
    RegisterAuditRoutes(routes, ctx);
    RegisterDashboardRoutes(routes, ctx);
    RegisterScheduleRoutes(routes, ctx);
    RegisterWebAssets(*server_, services_.console->web_dir);
  }
}

ApiServer::~ApiServer() {
  Stop();
}

bool ApiServer::Start() {
  try {
    listener_ = std::make_unique<net::ServerThread>(*server_, settings_.host, settings_.port,
                                                    net::DefaultListenBacklog());
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return false;
  }
  port_ = listener_->port();
  return true;
}

void ApiServer::Stop() {
  if (listener_) listener_->Stop();
}

}  // namespace cronwheel::admin
