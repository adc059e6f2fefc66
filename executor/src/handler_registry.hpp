#pragma once
// Maps a trigger to what it runs (docs/xxl-job-protocol.md §9-10):
//  * BEAN (or an empty glueType): the handler registered under executorHandler, identity "bean:<name>";
//    else 500 "job handler [X] not found.";
//  * script glue types: refused unless scripts are enabled (the message says how to enable them), else a
//    ScriptRunner handler with identity "glue:<type>:<glueUpdatetime>" (a new version replaces the thread);
//  * GLUE_GROOVY: 500, not supported (it needs a JVM); anything else: 500 "glueType[X] is not valid.".
// Thread-safety: Register() and Resolve() may be called from any thread.

#include <string>
#include <unordered_map>

#include "cronwheel/mutex.hpp"
#include "executor/job_context.hpp"
#include "job_dispatcher.hpp"
#include "script_runner.hpp"
#include "xxljob/protocol.hpp"

namespace cronwheel::executor {

class HandlerRegistry final {
 public:
  // `scripts` may be null when `enable_scripts` is false.
  HandlerRegistry(bool enable_scripts, const ScriptRunner* scripts)
      : enable_scripts_(enable_scripts), scripts_(scripts) {}

  // Throws std::invalid_argument for a blank name, an empty handler or a name already registered.
  void Register(const std::string& name, JobHandler handler);
  // Scripts can only be enabled once a runner exists (Executor::Start creates it).
  void SetScripts(bool enable_scripts, const ScriptRunner* scripts);
  [[nodiscard]] Resolution Resolve(const xxljob::TriggerParam& p) const;

 private:
  mutable cronwheel::Mutex mu_;
  bool enable_scripts_ ABSL_GUARDED_BY(mu_);
  const ScriptRunner* scripts_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, JobHandler> handlers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace cronwheel::executor
