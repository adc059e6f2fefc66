#include "admin/api/server.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cctype>

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
void OnException(const net::Request& req, net::Response& res, const std::exception_ptr& ep) {
  std::string what = "unknown error";
  int status = 500;
  try {
    std::rethrow_exception(ep);
  } catch (const DatabaseUnavailable& e) {
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

// Rewrites an answer the server made itself (no route, a body over the limit, a malformed head: status set
// and a plain English message in the body) in the dialect of the request's path.
void OnError(const net::Request& req, net::Response& res) {
  std::string why = res.body;
  while (!why.empty() && why.back() == '\n')
    why.pop_back();
  if (IsExecutorApiPath(req.path)) {
    // XXL-JOB's protocol: HTTP 200 and a code-500 envelope saying what is wrong.
    std::string msg;
    if (res.status == 405 || (res.status == 400 && req.method != "POST")) {
      msg = std::string(xxljob::kMethodNotSupported);
    } else if (res.status == 404) {
      msg = xxljob::UriNotFound(req.path);
    } else {
      msg = fmt::format("invalid request, {}", why);
    }
    return SendEnvelope(res, xxljob::Envelope::Fail(msg));
  }
  const auto connection = res.get_header_value("Connection");
  SendError(res, res.status, why);
  if (!connection.empty()) res.set_header("Connection", connection);
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
      server_(std::make_unique<net::HttpServer>(net::HttpServerSettings{
          .threads = settings_.threads,
          .io_threads = 1,
          .keep_alive_timeout = std::chrono::seconds(2),
          .keep_alive_max_count = 100'000,
          .payload_max_bytes = settings_.max_body_bytes,
          .max_connections = settings_.max_connections,
          .max_connections_per_address = settings_.max_connections_per_address,
          .max_unauthenticated_connections = settings_.max_unauthenticated_connections,
          .max_unauthenticated_connections_per_address =
              settings_.max_unauthenticated_connections_per_address})) {
  server_->SetExceptionHandler(OnException);
  server_->SetErrorHandler(OnError);
  impl_ = std::make_unique<Impl>(
      Impl{.context = {services_, settings_, clock_},
           .routes = Routes(*server_, services_.authenticator,
                            services_.console != nullptr ? &services_.console->routes : nullptr)});
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
  RegisterAlertChannelRoutes(routes, ctx);
  RegisterCalendarRoutes(routes, ctx);
  RegisterWorkflowRoutes(routes, ctx);
  RegisterJobRoutes(routes, ctx);
  RegisterLogRoutes(routes, ctx);
  RegisterScheduleRoutes(routes, ctx);
  if (services_.console != nullptr) {
    RegisterSessionRoutes(routes, ctx);
    RegisterSsoRoutes(routes, ctx);
    RegisterUserRoutes(routes, ctx);
    RegisterTokenRoutes(routes, ctx);
    RegisterAuditRoutes(routes, ctx);
    RegisterDashboardRoutes(routes, ctx);
    RegisterWebAssets(*server_, services_.console->web_dir);
  }
}

ApiServer::~ApiServer() {
  Stop();
}

bool ApiServer::Start() {
  try {
    port_ = server_->Start(settings_.host, settings_.port);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return false;
  }
  return true;
}

void ApiServer::Stop() {
  server_->Stop();
}

net::HttpServerStats ApiServer::Stats() const {
  return server_->Stats();
}

}  // namespace cronwheel::admin
