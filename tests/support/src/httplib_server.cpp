#include "cwtest/httplib_server.hpp"

#include <fmt/format.h>
#include <httplib.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <stdexcept>

namespace cwtest {

int DefaultListenBacklog() {
  return SOMAXCONN;
}

bool RaiseListenBacklog(int port, int backlog) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    int fd = -1;
    try {
      fd = std::stoi(entry.path().filename().string());
    } catch (const std::exception&) {
      continue;
    }
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    int accepting = 0;
    socklen_t len = sizeof(accepting);
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) != 0 || accepting == 0) continue;
    sockaddr_storage addr{};
    socklen_t addr_len = sizeof(addr);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &addr_len) != 0) continue;
    int bound = -1;
    if (addr.ss_family == AF_INET) bound = ntohs(reinterpret_cast<const sockaddr_in*>(&addr)->sin_port);
    if (addr.ss_family == AF_INET6) bound = ntohs(reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port);
    if (bound == port) return ::listen(fd, backlog) == 0;
  }
  return false;
}

ServerThread::ServerThread(httplib::Server& server, const std::string& host, int port, int backlog)
    : server_(server) {
  if (port == 0) {
    port_ = server_.bind_to_any_port(host);
  } else {
    port_ = server_.bind_to_port(host, port) ? port : -1;
  }
  if (port_ <= 0) {
    throw std::runtime_error(fmt::format(
        "cannot listen on {}:{}: the address is in use or not available; choose another host:port", host,
        port));
  }
  if (backlog > 0 && !RaiseListenBacklog(port_, backlog)) {
    spdlog::warn("http server: could not raise the listen backlog of port {} above cpp-httplib's 5", port_);
  }
  auto returned = std::make_shared<std::atomic<bool>>(false);
  thread_ = std::jthread([this, returned] {
    if (!server_.listen_after_bind()) spdlog::error("http server: the accept loop ended with an error");
    *returned = true;
  });
  while (!server_.is_running() && !*returned)
    std::this_thread::yield();
}

ServerThread::~ServerThread() {
  Stop();
}

void ServerThread::Stop() {
  if (!thread_.joinable()) return;
  server_.stop();
  thread_.join();
}

}  // namespace cwtest
