#include "cwtest/fake_admin.hpp"

#include <httplib.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace cwtest {
namespace {

using cronwheel::xxljob::kAccessTokenHeader;

// Dialect A's envelope as Jackson writes it: nulls kept, payload in `content`.
std::string Envelope(int code, const std::string& msg) {
  nlohmann::json j{{"code", code}, {"msg", nullptr}, {"content", nullptr}};
  if (!msg.empty()) j["msg"] = msg;
  return j.dump();
}

}  // namespace

FakeAdmin::FakeAdmin(Options options) : options_(std::move(options)) {}

FakeAdmin::~FakeAdmin() {
  Stop();
}

std::string FakeAdmin::address() const {
  return "http://127.0.0.1:" + std::to_string(port_) + options_.base_path;
}

void FakeAdmin::Start(int port) {
  Stop();
  server_ = std::make_unique<httplib::Server>();
  auto& s = *server_;
  s.new_task_queue = [] { return new httplib::ThreadPool(8); };
  s.set_tcp_nodelay(true);
  s.set_keep_alive_timeout(1);
  s.Post(".*", [this](const httplib::Request& req, httplib::Response& res) {
    res.set_content(Handle(req.path, req.get_header_value(kAccessTokenHeader), req.body),
                    "application/json;charset=UTF-8");
  });
  const int wanted = port != 0 ? port : port_;
  if (wanted == 0) {
    port_ = s.bind_to_any_port("127.0.0.1");
    if (port_ < 0) throw std::runtime_error("FakeAdmin: cannot bind 127.0.0.1:0");
  } else {
    if (!s.bind_to_port("127.0.0.1", wanted)) {
      throw std::runtime_error("FakeAdmin: cannot bind 127.0.0.1:" + std::to_string(wanted));
    }
    port_ = wanted;
  }
  auto returned = std::make_shared<std::atomic<bool>>(false);
  thread_ = std::jthread([this, returned] {
    server_->listen_after_bind();
    *returned = true;
  });
  while (!server_->is_running() && !*returned) {
    std::this_thread::yield();  // 0.11 has no wait_until_ready(); the socket already listens
  }
}

void FakeAdmin::Stop() {
  if (!thread_.joinable()) return;
  server_->stop();
  thread_.join();
  server_.reset();
}

std::string FakeAdmin::Handle(const std::string& path, const std::string& token, const std::string& body) {
  std::lock_guard lock(mu_);
  auto refuse = [this](const std::string& msg) {
    ++refused_;
    cv_.notify_all();
    return Envelope(500, msg);
  };
  if (!options_.access_token.empty() && token != options_.access_token)
    return refuse("The access token is wrong.");
  std::string api = path;
  if (!options_.base_path.empty()) {
    if (!api.starts_with(options_.base_path + "/")) return refuse("no such path: " + path);
    api = api.substr(options_.base_path.size());
  }
  if (api == "/api/registry" || api == "/api/registryRemove") {
    const auto p = cronwheel::xxljob::ParseRegistryParam(body);
    if (!p.ok()) return refuse("Illegal Argument.");
    (api == "/api/registry" ? registries_ : removes_).push_back(*p);
  } else if (api == "/api/callback") {
    const auto list = cronwheel::xxljob::ParseCallbackList(body);
    if (!list.ok()) return refuse(std::string(list.status().message()));
    callbacks_.insert(callbacks_.end(), list->begin(), list->end());
    callback_bodies_.push_back(body);
  } else {
    return refuse("no such path: " + path);
  }
  cv_.notify_all();
  return Envelope(200, "");
}

std::vector<cronwheel::xxljob::RegistryParam> FakeAdmin::registries() const {
  std::lock_guard lock(mu_);
  return registries_;
}
std::vector<cronwheel::xxljob::RegistryParam> FakeAdmin::removes() const {
  std::lock_guard lock(mu_);
  return removes_;
}
std::vector<cronwheel::xxljob::HandleCallbackParam> FakeAdmin::callbacks() const {
  std::lock_guard lock(mu_);
  return callbacks_;
}
std::vector<std::string> FakeAdmin::callback_bodies() const {
  std::lock_guard lock(mu_);
  return callback_bodies_;
}
int FakeAdmin::refused() const {
  std::lock_guard lock(mu_);
  return refused_;
}

bool FakeAdmin::WaitRegistries(std::size_t n, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return registries_.size() >= n; });
}
bool FakeAdmin::WaitRemoves(std::size_t n, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return removes_.size() >= n; });
}
bool FakeAdmin::WaitCallbacks(std::size_t n, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return callbacks_.size() >= n; });
}

std::optional<cronwheel::xxljob::HandleCallbackParam> FakeAdmin::WaitCallbackFor(
    std::int64_t log_id, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  std::optional<cronwheel::xxljob::HandleCallbackParam> found;
  cv_.wait_for(lock, timeout, [&] {
    for (const auto& c : callbacks_) {
      if (c.log_id == log_id) {
        found = c;
        return true;
      }
    }
    return false;
  });
  return found;
}

}  // namespace cwtest
