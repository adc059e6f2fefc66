// RaiseListenBacklog on loopback: cpp-httplib 0.11 listens with a backlog of 5, and an admin opening a
// burst of connections overflowed it (fires failed with read timeouts). A socket listening with backlog 5
// is the control, measured in the same test: nothing accepts on either, 64 clients connect to each, and
// only the raised one completes every handshake.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <vector>

#include "cwtest/httplib_server.hpp"

namespace {

// A listening loopback socket with the given backlog; returns its fd and sets *port.
int Listen(int backlog, int* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd, backlog) != 0) return -1;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  *port = ntohs(addr.sin_port);
  return fd;
}

// Starts `n` non-blocking connects to `port`; returns how many completed within the wait.
int CompletedConnects(int port, int n) {
  std::vector<pollfd> fds;
  for (int i = 0; i < n; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    (void)::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    fds.push_back({.fd = fd, .events = POLLOUT, .revents = 0});
  }
  int done = 0;
  // On loopback a handshake the listener has room for completes within connect() itself; a SYN the full
  // queue dropped is retried only after a second. One poll collects what completed.
  ::poll(fds.data(), fds.size(), 200);
  for (auto& p : fds) {
    int err = -1;
    socklen_t len = sizeof(err);
    if ((p.revents & POLLOUT) != 0 && ::getsockopt(p.fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) {
      ++done;
    }
    ::close(p.fd);
  }
  return done;
}

TEST(ListenBacklog, ARaisedBacklogTakesABurstOfConnectionsThatFiveDrops) {
  int control_port = 0;
  int raised_port = 0;
  const int control = Listen(5, &control_port);
  const int raised = Listen(5, &raised_port);
  ASSERT_GE(control, 0);
  ASSERT_GE(raised, 0);
  ASSERT_TRUE(cwtest::RaiseListenBacklog(raised_port, 256));
  EXPECT_FALSE(cwtest::RaiseListenBacklog(1, 256)) << "no listening socket on port 1 here";
  const int with_five = CompletedConnects(control_port, 64);
  const int with_raised = CompletedConnects(raised_port, 64);
  std::printf("[backlog] 64 connects without accept: backlog 5 completed %d, raised completed %d\n",
              with_five, with_raised);
  EXPECT_LT(with_five, 64) << "the control must show the overflow, or the test proves nothing";
  EXPECT_EQ(with_raised, 64);
  ::close(control);
  ::close(raised);
}

}  // namespace
