#include "cwtest/shell.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>

namespace cwtest {

ShellRun RunShell(const std::string& command) {
  ShellRun r;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buf{};
  for (std::size_t n = 0; (n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0;)
    r.out.append(buf.data(), n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace cwtest
