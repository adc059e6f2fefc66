#pragma once
// One HTTP/1.1 connection to 127.0.0.1 driven by hand, for tests of framing and of hostile peers: requests
// are the exact bytes given (in as many pieces as the test likes); answers are read by their
// Content-Length (cronwheel's servers always send one). Blocking, with a receive timeout. Not copyable.
// `from` (optional) is the loopback source address, e.g. "127.0.0.2": a client the servers' per-address
// connection limit counts apart from the ones connecting from 127.0.0.1.

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

namespace cwtest {

class RawConnection {
 public:
  struct Answer {
    int status = 0;  // 0 = the connection closed (or timed out) before an answer
    std::string head;
    std::string body;
    [[nodiscard]] nlohmann::json Json() const { return nlohmann::json::parse(body, nullptr, false); }
  };

  explicit RawConnection(int port, std::chrono::milliseconds timeout = std::chrono::seconds(10),
                         const char* from = nullptr)
      : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    if (fd_ < 0) throw std::runtime_error("socket() failed");
    if (from != nullptr) {
      sockaddr_in source{};
      source.sin_family = AF_INET;
      if (::inet_pton(AF_INET, from, &source.sin_addr) != 1 ||
          ::bind(fd_, reinterpret_cast<sockaddr*>(&source), sizeof source) != 0) {
        ::close(fd_);
        throw std::runtime_error(fmt::format("cannot bind to the source address {}", from));
      }
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    SetTimeout(timeout);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd_);
      throw std::runtime_error(fmt::format("cannot connect to 127.0.0.1:{}", port));
    }
  }
  ~RawConnection() { ::close(fd_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  void SetTimeout(std::chrono::milliseconds timeout) const {
    const auto ms = timeout.count();
    timeval tv{.tv_sec = static_cast<time_t>(ms / 1000),
               .tv_usec = static_cast<suseconds_t>((ms % 1000) * 1000)};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  }

  // Sends all of `bytes`; false when the peer closed (or the send timed out) first.
  bool Send(const std::string& bytes) const {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const auto n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }

  Answer Read() {
    Answer a;
    std::size_t end = 0;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return a;
    }
    a.head = buffer_.substr(0, end);
    buffer_.erase(0, end + 4);
    std::from_chars(a.head.data() + 9, a.head.data() + std::min<std::size_t>(a.head.size(), 12), a.status);
    std::size_t length = 0;
    std::istringstream lines(a.head);
    for (std::string line; std::getline(lines, line);) {
      std::string lower = line;
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      if (lower.starts_with("content-length:")) length = std::stoul(line.substr(15));
    }
    while (buffer_.size() < length) {
      if (!Fill()) break;
    }
    a.body = buffer_.substr(0, length);
    buffer_.erase(0, std::min(length, buffer_.size()));
    return a;
  }

  // Whether the peer has closed the connection: reads (and drops) until end of stream or the timeout.
  bool ClosedByPeer() const {
    char buf[4096];
    while (true) {
      const auto n = ::recv(fd_, buf, sizeof buf, 0);
      if (n == 0) return true;
      if (n < 0) return errno == ECONNRESET;
    }
  }

  [[nodiscard]] int fd() const { return fd_; }

 private:
  bool Fill() {
    char buf[4096];
    const auto n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) return false;
    buffer_.append(buf, static_cast<std::size_t>(n));
    return true;
  }

  int fd_;
  std::string buffer_;
};

}  // namespace cwtest
