// Feeds arbitrary bytes to each parser of the XXL-JOB protocol (xxljob/protocol.hpp), and to the JSON and
// address readers the admin applies to what executors send (cronwheel/json.hpp,
// cronwheel/net/http_address.hpp). A parser must never crash, leak or hang; it returns a value or an error
// naming what is wrong. Whatever parses is serialised and parsed again, and must come back equal (output is
// exact, input liberal).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cronwheel/json.hpp"
#include "cronwheel/net/http_address.hpp"
#include "xxljob/protocol.hpp"

namespace {

using namespace cronwheel::xxljob;
using cronwheel::ParseJson;
using cronwheel::net::NormalizeAddress;
using cronwheel::net::ParseHttpAddress;

void Check(bool ok) {
  if (!ok) std::abort();
}

std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);

  if (const auto p = ParseTriggerParam(body); p.ok()) {
    const auto back = ParseTriggerParam(Dump(ToJson(*p)));
    Check(back.ok());
    Check(back->job_id == p->job_id && back->log_id == p->log_id && back->log_date_time == p->log_date_time &&
          back->executor_timeout == p->executor_timeout && back->glue_updatetime == p->glue_updatetime &&
          back->broadcast_index == p->broadcast_index && back->broadcast_total == p->broadcast_total &&
          back->executor_block_strategy == p->executor_block_strategy && back->glue_type == p->glue_type);
  }
  if (const auto p = ParseJobIdParam(body); p.ok()) {
    const auto back = ParseJobIdParam(Dump(ToJson(*p)));
    Check(back.ok() && back->job_id == p->job_id);
  }
  if (const auto p = ParseLogParam(body); p.ok()) {
    const auto back = ParseLogParam(Dump(ToJson(*p)));
    Check(back.ok() && back->log_id == p->log_id && back->log_date_tim == p->log_date_tim &&
          back->from_line_num == p->from_line_num);
  }
  if (const auto list = ParseCallbackList(body); list.ok()) {
    const auto back = ParseCallbackList(Dump(ToJson(*list)));
    Check(back.ok() && back->size() == list->size());
    for (std::size_t i = 0; i < list->size(); ++i) {
      Check((*back)[i].log_id == (*list)[i].log_id && (*back)[i].handle_code == (*list)[i].handle_code &&
            (*back)[i].log_date_tim == (*list)[i].log_date_tim);
    }
  }
  if (const auto p = ParseRegistryParam(body); p.ok()) {
    const auto back = ParseRegistryParam(Dump(ToJson(*p)));
    Check(back.ok() && back->registry_group == p->registry_group);
  }
  if (const auto e = ParseEnvelope(body); e.ok()) {
    const auto back = ParseEnvelope(Dump(ToJson(*e)));
    Check(back.ok() && back->code == e->code);
    if (!e->content.is_null()) (void)ParseLogResult(e->content);
  }
  // As the admin reads an envelope's content: parsed with ParseJson (depth-limited).
  if (const auto j = ParseJson(body); j.ok()) (void)ParseLogResult(*j);
  if (const auto a = ParseHttpAddress(body); a.ok()) {
    (void)a->Path("run");
    const auto n = NormalizeAddress(body);
    const auto again = ParseHttpAddress(n);
    Check(again.ok() && again->origin == a->origin && again->base_path == a->base_path);
  }
  return 0;
}
