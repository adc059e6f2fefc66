#pragma once
// The router for each route strategy (router.hpp), owned in one place so stateful strategies keep their
// state for the life of the admin.
//
// Thread-safety: For() and the routers are safe from any thread.

#include <memory>

#include "admin/executor_client.hpp"
#include "admin/router.hpp"

namespace cronwheel::admin {

class RouterSet final {
 public:
  explicit RouterSet(ExecutorClient& client);
  Router& For(RouteStrategy strategy);

 private:
  FirstRouter first_;
};

}  // namespace cronwheel::admin
