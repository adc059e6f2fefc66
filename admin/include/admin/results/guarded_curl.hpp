#pragma once
// The registration guard (admin/dispatch/registry_guard.hpp) on a libcurl transfer's connections: the admin's
// requests through libcurl (alarm webhooks and alert channels, e-mail, the OpenID provider) connect only to
// addresses the guard allows for a service (RegistryGuard::Peer::kService: not registry_deny, not the admin
// itself), checked on each address libcurl is about to connect to, whatever name or text form the URL held
// and whatever that name resolves to at that moment (issue 44, F6).
//
//   CurlConnectGuard guard(*settings_.guard);
//   guard.Install(curl);                 // before curl_easy_perform
//   ... curl_easy_perform(curl) ...
//   if (!guard.refused().empty()) ...    // why nothing was connected to
//
// A refused address gets no socket (CURLOPT_OPENSOCKETFUNCTION answers CURL_SOCKET_BAD), so libcurl tries the
// next address of the name, and fails with CURLE_COULDNT_CONNECT when none is left. Through a proxy (the
// OpenID client honours libcurl's proxy variables) the proxy's address is what is checked.
//
// Thread-safety: one per transfer, on the transfer's thread. Lifetime: the guard and this object must outlive
// the transfer.

#include <curl/curl.h>

#include <string>

#include "admin/dispatch/registry_guard.hpp"

namespace cronwheel::admin {

class CurlConnectGuard final {
 public:
  explicit CurlConnectGuard(const RegistryGuard& guard,
                            RegistryGuard::Peer peer = RegistryGuard::Peer::kService)
      : guard_(guard), peer_(peer) {}
  CurlConnectGuard(const CurlConnectGuard&) = delete;
  CurlConnectGuard& operator=(const CurlConnectGuard&) = delete;

  // Sets CURLOPT_OPENSOCKETFUNCTION and its data on `curl`.
  void Install(CURL* curl);
  // The first refusal's message ("169.254.169.254 is in a network the admin does not send to (setting
  // registry_deny)"), or "" when every address libcurl tried was allowed.
  [[nodiscard]] const std::string& refused() const { return refused_; }

 private:
  static curl_socket_t Open(void* self, curlsocktype purpose, curl_sockaddr* address);

  const RegistryGuard& guard_;
  RegistryGuard::Peer peer_;
  std::string refused_;
};

}  // namespace cronwheel::admin
