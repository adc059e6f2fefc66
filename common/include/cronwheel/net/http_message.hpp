#pragma once
// The request and response of cronwheel's HTTP servers, as route handlers see them.
//
// For now these are cpp-httplib's own structs; the server that fills them is being replaced (see
// common/include/cronwheel/net/http_server.hpp), and route code names them only through these aliases.

#include <httplib.h>

namespace cronwheel::net {

using Request = httplib::Request;
using Response = httplib::Response;

}  // namespace cronwheel::net
