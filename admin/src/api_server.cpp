#include "admin/api_server.hpp"

#include <fmt/format.h>
#include <httplib.h>
#include <spdlog/spdlog.h>

#include <cctype>
#include <charconv>
#include <pqxx/pqxx>

#include "admin/request_bodies.hpp"
#include "api_util.hpp"
#include "cronwheel/net/http_server.hpp"
#include "xxljob/framing.hpp"
#include "xxljob/protocol.hpp"
#include "xxljob/token.hpp"

namespace cronwheel::admin {
namespace {

using nlohmann::json;
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

}  // namespace

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
  server_->set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unknown error";
        int status = 500;
        try {
          std::rethrow_exception(std::move(ep));
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
      });
  // A request whose body would stay in the connection (xxljob::HasUnreadBody) is refused, and the answer
  // closes it.
  server_->set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!xxljob::HasUnreadBody(req.method, req.has_header("Transfer-Encoding"),
                               req.get_header_value("Content-Length"))) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    res.set_header("Connection", "close");
    if (IsExecutorApiPath(req.path)) {
      SendEnvelope(res, xxljob::Envelope::Fail(std::string(xxljob::kMethodNotSupported)));
    } else {
      SendError(res, 400,
                fmt::format("{} {}: a {} request has no body; send it without one", req.method,
                            req.path.substr(0, 200), req.method));
    }
    return httplib::Server::HandlerResponse::Handled;
  });
  server_->set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (IsExecutorApiPath(req.path)) {
      // XXL-JOB's protocol: HTTP 200 and a code-500 envelope saying what is wrong.
      std::string msg;
      if (res.status == 413) {
        msg = fmt::format("invalid request, the body is larger than the limit of {} bytes",
                          settings_.max_body_bytes);
      } else if (req.method != "POST") {
        msg = std::string(xxljob::kMethodNotSupported);
      } else if (res.status == 404) {
        msg = fmt::format("invalid request, uri-mapping({}) not found.", req.path.substr(0, 200));
      } else if (!req.has_header("Content-Length") && !req.has_header("Transfer-Encoding")) {
        msg = "invalid request, a POST needs a Content-Length header";
      } else {
        msg = fmt::format(
            "invalid request, HTTP status {}: the request line or a header could not be read "
            "(malformed, or longer than 8 KiB)",
            res.status);
      }
      return SendEnvelope(res, xxljob::Envelope::Fail(msg));
    }
    const bool has_length = req.has_header("Content-Length") || req.has_header("Transfer-Encoding");
    if (res.status == 400 && (req.method == "POST" || req.method == "PUT") && !has_length) {
      // httplib cannot read a body it was not told the length of.
      SendError(
          res, 411,
          fmt::format(
              "{} {} needs a Content-Length header; send a JSON body ({{}} when there is nothing to say)",
              req.method, req.path.substr(0, 200)));
    } else if (res.status == 413) {
      SendError(res, 413, "the body is larger than the limit");
    } else if (res.status == 404) {
      SendError(res, 404, fmt::format("no such resource: {} {}", req.method, req.path.substr(0, 200)));
    } else if (res.status == 405) {
      SendError(res, 405, fmt::format("method {} not allowed on {}", req.method, req.path.substr(0, 200)));
    } else {
      SendError(res, res.status, fmt::format("the request could not be read (HTTP {})", res.status));
    }
  });
  RegisterExecutorApi("");
  RegisterExecutorApi("/xxl-job-admin");
  RegisterRestRoutes(*server_, services_, settings_, clock_);
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

void ApiServer::RegisterExecutorApi(const std::string& prefix) {
  auto& s = *server_;
  // registry and registryRemove: {"registryGroup","registryKey","registryValue"}.
  auto registry = [this](bool remove) {
    return [this, remove](const httplib::Request& req, httplib::Response& res) {
      std::string error;
      const auto p = xxljob::ParseRegistryParam(req.body, &error);
      if (!p) return SendEnvelope(res, xxljob::Envelope::Fail(error));
      if (const auto why = CheckRegistration(*p); !why.empty()) {
        return SendEnvelope(res, xxljob::Envelope::Fail(why));
      }
      const auto token = req.get_header_value(xxljob::kAccessTokenHeader);
      const auto group_token = services_.registry.GroupToken(p->registry_key);
      if (!xxljob::TokenMatches(token, group_token.value_or(settings_.access_token))) {
        return SendEnvelope(res, xxljob::Envelope::Fail("The access token is wrong."));
      }
      if (remove) {
        services_.registry.Remove(*p);
      } else {
        services_.registry.Register(*p);
      }
      SendEnvelope(res, xxljob::Envelope::Success());
    };
  };
  s.Post(prefix + "/api/registry", registry(false));
  s.Post(prefix + "/api/registryRemove", registry(true));
  s.Post(prefix + "/api/callback", [this](const httplib::Request& req, httplib::Response& res) {
    std::string error;
    const auto list = xxljob::ParseCallbackList(req.body, &error);
    if (!list) return SendEnvelope(res, xxljob::Envelope::Fail(error));
    const auto token = req.get_header_value(xxljob::kAccessTokenHeader);
    if (!services_.callbacks.Authorized(*list, token, settings_.access_token)) {
      return SendEnvelope(res, xxljob::Envelope::Fail("The access token is wrong."));
    }
    services_.callbacks.Handle(*list);
    SendEnvelope(res, xxljob::Envelope::Success());
  });
  // Anything else under the executor API: XXL-JOB's admin answers a code-500 envelope.
  s.Post(prefix + R"(/api/([^/]+))", [](const httplib::Request& req, httplib::Response& res) {
    SendEnvelope(res, xxljob::Envelope::Fail(fmt::format("invalid request, uri-mapping({}) not found.",
                                                         req.path.substr(0, 200))));
  });
}

}  // namespace cronwheel::admin
