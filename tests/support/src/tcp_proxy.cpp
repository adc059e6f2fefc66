#include "cwtest/tcp_proxy.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <stdexcept>
#include <vector>

namespace cwtest {
namespace {

sockaddr_in Loopback(const std::string& host, int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1)
    throw std::invalid_argument("TcpProxy: bad host " + host);
  return a;
}

// One proxied connection: the client's socket and the upstream one, and the last bytes the client sent
// (to find a needle split across two reads).
struct Pair {
  int client = -1;
  int server = -1;
  std::string tail;
};

void Close(Pair& p) {
  if (p.client >= 0) close(p.client);
  if (p.server >= 0) close(p.server);
  p.client = p.server = -1;
}

// Writes all of `data` (blocking sockets); false when the peer is gone.
bool WriteAll(int fd, const char* data, std::size_t n) {
  while (n > 0) {
    const auto w = send(fd, data, n, MSG_NOSIGNAL);
    if (w <= 0) return false;
    data += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

}  // namespace

TcpProxy::TcpProxy(std::string upstream_host, int upstream_port)
    : upstream_host_(std::move(upstream_host)), upstream_port_(upstream_port) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw std::runtime_error("TcpProxy: socket failed");
  const int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  auto addr = Loopback("127.0.0.1", 0);
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||  // NOLINT: socket API
      listen(listen_fd_, 64) != 0) {
    close(listen_fd_);
    throw std::runtime_error("TcpProxy: cannot listen on 127.0.0.1");
  }
  socklen_t len = sizeof addr;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);  // NOLINT: socket API
  port_ = ntohs(addr.sin_port);
  thread_ = std::jthread([this](const std::stop_token& st) { Run(st); });
}

TcpProxy::~TcpProxy() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
  close(listen_fd_);
}

void TcpProxy::CutAfter(std::string_view needle) {
  std::lock_guard lock(mu_);
  needle_ = std::string(needle);
}

void TcpProxy::Run(const std::stop_token& stop) {
  std::vector<Pair> pairs;
  std::array<char, std::size_t{64} * 1024> buf{};
  while (!stop.stop_requested()) {
    std::vector<pollfd> fds{{.fd = listen_fd_, .events = POLLIN, .revents = 0}};
    for (const auto& p : pairs) {
      fds.push_back({.fd = p.client, .events = POLLIN, .revents = 0});
      fds.push_back({.fd = p.server, .events = POLLIN, .revents = 0});
    }
    if (poll(fds.data(), fds.size(), 50) <= 0) continue;
    if ((fds[0].revents & POLLIN) != 0) {
      const int c = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c >= 0) {
        const int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        auto up = Loopback(upstream_host_, upstream_port_);
        if (s >= 0 && connect(s, reinterpret_cast<sockaddr*>(&up), sizeof up) == 0) {  // NOLINT: socket API
          const int one = 1;
          setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          pairs.push_back({.client = c, .server = s});
        } else {
          close(c);
          if (s >= 0) close(s);
        }
      }
    }
    // The pairs that were polled: one accepted just above has no entry in `fds` until the next round.
    const std::size_t polled = (fds.size() - 1) / 2;
    for (std::size_t i = 0; i < polled; ++i) {
      auto& p = pairs[i];
      const auto& from_client = fds[1 + 2 * i];
      const auto& from_server = fds[2 + 2 * i];
      bool done = false;
      if ((from_server.revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        const auto n = recv(p.server, buf.data(), buf.size(), 0);
        done = n <= 0 || !WriteAll(p.client, buf.data(), static_cast<std::size_t>(n));
      }
      if (!done && (from_client.revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        const auto n = recv(p.client, buf.data(), buf.size(), 0);
        if (n <= 0) {
          done = true;
        } else {
          std::string_view chunk(buf.data(), static_cast<std::size_t>(n));
          std::size_t cut = std::string_view::npos;
          {
            std::lock_guard lock(mu_);
            if (needle_) {
              // Look in the chunk, and in the last bytes of the previous one joined to it.
              // A needle that ends within the previous chunk was forwarded before it was armed.
              const std::string seen = p.tail + std::string(chunk);
              const auto from = p.tail.size() >= needle_->size() ? p.tail.size() - needle_->size() + 1 : 0;
              if (const auto at = seen.find(*needle_, from); at != std::string::npos) {
                cut = at + needle_->size() - p.tail.size();
                needle_.reset();
              }
            }
          }
          if (cut != std::string_view::npos) {
            WriteAll(p.server, chunk.data(), cut);
            ++cuts_;
            done = true;
          } else {
            done = !WriteAll(p.server, chunk.data(), chunk.size());
            p.tail = std::string(chunk.substr(chunk.size() > 32 ? chunk.size() - 32 : 0));
          }
        }
      }
      if (done) Close(p);
    }
    std::erase_if(pairs, [](const Pair& p) { return p.client < 0; });
  }
  for (auto& p : pairs)
    Close(p);
}

}  // namespace cwtest
