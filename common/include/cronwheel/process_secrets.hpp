#pragma once
// Keeping a process's secrets (the access token, the database URI) from other processes of its user: on the
// executor those include the script jobs it runs (security review 2, finding F3: a GLUE_SHELL job read the
// token from /proc/$PPID/environ). docs/security.md, "Script jobs on the executor", says what this covers
// and what it cannot.
//
//  * MakeUndumpable: prctl(PR_SET_DUMPABLE, 0). /proc/<pid>/environ, /proc/<pid>/mem, ptrace and core dumps
//    of this process are then refused to every process without CAP_SYS_PTRACE, those of the same uid
//    included. A process running as root (with CAP_SYS_PTRACE) can still read them; so can this process.
//    Not inherited across execve: a script the process starts is dumpable as usual.
//  * ScrubEnvironment / ScrubArguments: overwrite, in place, the bytes of an environment variable's value or
//    of a command-line flag's value. /proc/<pid>/environ and /proc/<pid>/cmdline read this process's
//    memory where the kernel put the environment and the arguments at execve, so unsetenv alone changes
//    neither. /proc/<pid>/cmdline is readable by every user (ps shows it), dumpable or not: a secret given
//    as a flag is visible to anyone on the host until it is scrubbed, and was before (prefer the
//    environment). The value itself must be copied first (ConfigLoader::Parse has).
//
// Linux only (elsewhere MakeUndumpable returns false). Thread-safety: none; call from main before any thread
// starts (the environment is not thread-safe).

#include <string_view>

namespace cronwheel {

// Returns whether the process is now non-dumpable.
bool MakeUndumpable();

// Overwrites the value of environment variable `name` (every occurrence) with NUL bytes and removes the
// variable from the environment. Returns whether it was set.
bool ScrubEnvironment(const char* name);

// Overwrites with NUL bytes the value of flag `flag` ("--access-token") in argv: the argument after
// `--access-token`, or what follows '=' in `--access-token=...`. Returns how many values it overwrote.
int ScrubArguments(int argc, char** argv, std::string_view flag);

}  // namespace cronwheel
