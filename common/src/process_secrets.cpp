#include "cronwheel/process_secrets.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#if defined(__linux__)
#include <sys/prctl.h>
#endif

namespace cronwheel {

bool MakeUndumpable() {
#if defined(__linux__)
  return ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0 && ::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0;
#else
  return false;
#endif
}

bool ScrubEnvironment(const char* name) {
  const std::size_t name_length = std::strlen(name);
  bool found = false;
  // Every "name=value" entry, not only the first getenv would find: a variable may be given twice.
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    if (std::strncmp(*entry, name, name_length) == 0 && (*entry)[name_length] == '=') {
      char* value = *entry + name_length + 1;
      std::memset(value, 0, std::strlen(value));
      found = true;
    }
  }
  if (found) ::unsetenv(name);  // NOLINT(concurrency-mt-unsafe): before any thread starts
  return found;
}

int ScrubArguments(int argc, char** argv, std::string_view flag) {
  int scrubbed = 0;
  const std::string with_equals = std::string(flag) + "=";
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    if (arg == flag && i + 1 < argc) {
      std::memset(argv[i + 1], 0, std::strlen(argv[i + 1]));
      ++scrubbed;
      ++i;
    } else if (arg.starts_with(with_equals)) {
      std::memset(argv[i] + with_equals.size(), 0, arg.size() - with_equals.size());
      ++scrubbed;
    }
  }
  return scrubbed;
}

}  // namespace cronwheel
