#include "http_server.hpp"

#include <fmt/format.h>
#include <httplib.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <stdexcept>

#include "posix_util.hpp"

namespace cronwheel::executor {
namespace {

constexpr const char* kContentType = "application/json;charset=UTF-8";

std::string Dump(const protocol::Envelope& e) {
  return protocol::ToJson(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void Answer(httplib::Response& res, const protocol::Envelope& e) {
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
  const auto threads = static_cast<std::size_t>(std::max(settings_.threads, 1));
  s.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  s.set_tcp_nodelay(true);
  s.set_keep_alive_timeout(std::max<std::chrono::seconds::rep>(settings_.keep_alive_timeout.count(), 1));
  // cpp-httplib closes a keep-alive connection after 5 requests by default, so the admin opened a new TCP
  // connection for every 5th /run, and a burst of fires opened hundreds at once against a listen backlog of
  // 5 (bench/dispatch.sh counts them; docs/performance.md). Not unlimited (the admin's own server allows
  // 100,000): each open connection holds one of the `threads` server threads until it closes, so a
  // bounded count makes a busy connection give its thread back now and then, and connections beyond
  // `threads` (several admins) wait for at most ~100 requests, not until one falls idle.
  s.set_keep_alive_max_count(100);
  s.set_payload_max_length(protocol::kMaxBodyBytes);

  // A request whose body would stay in the connection is refused, and the answer closes it.
  s.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!protocol::HasUnreadBody(req.method, req.has_header("Transfer-Encoding"),
                                 req.get_header_value("Content-Length"))) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    res.set_header("Connection", "close");
    Answer(res, protocol::Envelope::Fail(std::string(protocol::kMethodNotSupported)));
    return httplib::Server::HandlerResponse::Handled;
  });
  s.Post(".*", [this](const httplib::Request& req, httplib::Response& res) {
    std::string body;
    Serve("POST", req.path, req.get_header_value(protocol::kAccessTokenHeader), req.body, body);
    res.status = 200;
    res.set_content(body, kContentType);
  });
  const auto not_post = [](const httplib::Request&, httplib::Response& res) {
    Answer(res, protocol::Envelope::Fail(std::string(protocol::kMethodNotSupported)));
  };
  s.Get(".*", not_post);
  s.Put(".*", not_post);
  s.Delete(".*", not_post);
  s.Patch(".*", not_post);
  s.Options(".*", not_post);
  s.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (res.status == 400 && req.method == "POST" && !req.has_header("Content-Length") &&
        !req.has_header("Transfer-Encoding")) {
      // httplib refuses a POST without Content-Length; XXL-JOB 3.x admins send /beat with no body.
      std::string body;
      Serve("POST", req.path, req.get_header_value(protocol::kAccessTokenHeader), "", body);
      res.status = 200;
      res.set_content(body, kContentType);
    } else if (res.status == 413) {
      Answer(res, protocol::Envelope::Fail(
                      fmt::format("invalid request, the body is larger than the limit of {} bytes "
                                  "(5 MiB)",
                                  protocol::kMaxBodyBytes)));
    } else if (req.method != "POST") {
      Answer(res, protocol::Envelope::Fail(std::string(protocol::kMethodNotSupported)));
    } else {
      Answer(res, protocol::Envelope::Fail(fmt::format("invalid request, HTTP status {}", res.status)));
    }
  });
  s.set_exception_handler([](const httplib::Request&, httplib::Response& res, const std::exception_ptr& ep) {
    std::string what = "unknown error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    spdlog::error("request error: {}", what);
    Answer(res, protocol::Envelope::Fail("request error: " + what));
  });

  int port = settings_.port;
  if (port == 0) {
    port = s.bind_to_any_port(settings_.host);
    if (port < 0) throw std::runtime_error(fmt::format("cannot listen on {}:0 (any port)", settings_.host));
  } else if (!s.bind_to_port(settings_.host, port)) {
    throw std::runtime_error(
        fmt::format("cannot listen on {}:{}: address in use or not available; set listen "
                    "to another host:port",
                    settings_.host, port));
  }
  if (!protocol::RaiseListenBacklog(port, SOMAXCONN)) {
    spdlog::warn("http server: could not raise the listen backlog of port {} above cpp-httplib's 5", port);
  }
  thread_ = std::jthread([this] {
    if (!server_->listen_after_bind()) spdlog::error("http server: the accept loop ended with an error");
    listen_returned_ = true;
  });
  // httplib 0.11 has no wait_until_ready(); stop() before the accept loop runs would be lost, so wait for it.
  // The socket is already listening: this is a few microseconds.
  while (!server_->is_running() && !listen_returned_) {
    std::this_thread::yield();
  }
  return port;
}

void HttpServer::Stop() {
  if (!thread_.joinable()) return;
  server_->stop();
  thread_.join();
}

void HttpServer::Serve(const std::string& method, const std::string& path, const std::string& token,
                       const std::string& body, std::string& response) const {
  protocol::Envelope e;
  try {
    if (method != "POST") {
      e = protocol::Envelope::Fail(std::string(protocol::kMethodNotSupported));
    } else if (!protocol::TokenMatches(token, settings_.access_token)) {
      e = protocol::Envelope::Fail(std::string(kWrongTokenMsg));
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
    e = protocol::Envelope::Fail(std::string("request error: ") + ex.what());
  }
  response = Dump(e);
}

}  // namespace cronwheel::executor
