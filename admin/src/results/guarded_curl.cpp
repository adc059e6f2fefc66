#include "admin/results/guarded_curl.hpp"

#include <sys/socket.h>

namespace cronwheel::admin {

void CurlConnectGuard::Install(CURL* curl) {
  curl_easy_setopt(curl, CURLOPT_OPENSOCKETFUNCTION, &CurlConnectGuard::Open);
  curl_easy_setopt(curl, CURLOPT_OPENSOCKETDATA, this);
}

curl_socket_t CurlConnectGuard::Open(void* self, curlsocktype /*purpose*/, curl_sockaddr* address) {
  auto* guard = static_cast<CurlConnectGuard*>(self);
  // `addr` holds the whole socket address (libcurl's storage is large enough for `addrlen` bytes).
  if (auto ok = guard->guard_.CheckSocketAddress(&address->addr, address->addrlen, guard->peer_); !ok) {
    if (guard->refused_.empty()) guard->refused_ = ok.error().message;
    return CURL_SOCKET_BAD;
  }
  return ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

}  // namespace cronwheel::admin
