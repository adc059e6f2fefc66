#include "handler_registry.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "cronwheel/mutex.hpp"

namespace cronwheel::executor {

void HandlerRegistry::Register(const std::string& name, JobHandler handler) {
  if (name.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw std::invalid_argument("Register: the handler name must not be empty");
  }
  if (!handler) throw std::invalid_argument(fmt::format("Register: handler [{}] is empty", name));
  cronwheel::MutexLock lock(mu_);
  if (!handlers_.emplace(name, std::move(handler)).second) {
    throw std::invalid_argument(fmt::format("Register: job handler [{}] is already registered", name));
  }
}

void HandlerRegistry::SetScripts(bool enable_scripts, const ScriptRunner* scripts) {
  cronwheel::MutexLock lock(mu_);
  enable_scripts_ = enable_scripts;
  scripts_ = scripts;
}

Resolution HandlerRegistry::Resolve(const xxljob::TriggerParam& p) const {
  Resolution r;
  const std::string& type = p.glue_type;
  cronwheel::MutexLock lock(mu_);
  const auto glue_type = xxljob::ParseGlueType(type);
  if (type.empty() || glue_type == xxljob::GlueType::kBean) {
    const auto it = handlers_.find(p.executor_handler);
    if (it == handlers_.end()) {
      r.error = fmt::format("job handler [{}] not found.", p.executor_handler.substr(0, 200));
    } else {
      r.handler = it->second;
      r.identity = "bean:" + p.executor_handler;
    }
    return r;
  }
  if (glue_type == xxljob::GlueType::kGroovy) {
    r.error =
        "glueType[GLUE_GROOVY] is not supported by this executor (Groovy jobs need XXL-JOB's Java executor).";
    return r;
  }
  const ScriptGlue* glue = FindScriptGlue(type);
  if (glue == nullptr) {
    r.error = fmt::format("glueType[{}] is not valid.", type.substr(0, 100));
    return r;
  }
  if (!enable_scripts_ || scripts_ == nullptr) {
    r.error = fmt::format(
        "glueType[{}] refused: script jobs are disabled on this executor. To allow them, start it with "
        "enable_scripts = true (environment CRONWHEEL_ENABLE_SCRIPTS=true or flag --enable-scripts true).",
        type);
    return r;
  }
  r.is_glue = true;
  r.identity = fmt::format("glue:{}:{}", type, p.glue_updatetime);
  r.handler = scripts_->MakeHandler(*glue, p.job_id, p.glue_updatetime, p.glue_source);
  return r;
}

}  // namespace cronwheel::executor
