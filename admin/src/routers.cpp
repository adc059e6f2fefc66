#include "admin/routers.hpp"

namespace cronwheel::admin {

RouterSet::RouterSet(ExecutorClient& /*client*/) {}

Router& RouterSet::For(RouteStrategy /*strategy*/) {
  return first_;
}

}  // namespace cronwheel::admin
