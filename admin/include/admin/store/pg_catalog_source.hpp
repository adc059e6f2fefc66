#pragma once
// CatalogSource (dispatch/catalog_source.hpp) on PostgreSQL: reads job, job_group and executor_registry,
// and LISTENs on 'cronwheel_changes' (notified by the triggers of sql/001_schema.sql with "<table>:<id>")
// on a connection of its own.
//
// Thread-safety: safe from any thread (pooled connections; ListenForChanges on its caller's thread).

#include "admin/dispatch/catalog_source.hpp"

namespace cronwheel::admin {

class PgPool;

class PgCatalogSource final : public CatalogSource {
 public:
  explicit PgCatalogSource(PgPool& pool) : pool_(pool) {}

  std::vector<Job> LoadJobs(std::span<const int> ids) override;
  std::optional<JobGroup> LoadGroup(int id) override;
  RegistrySnapshot LoadRegistry(std::int64_t since_ms) override;
  void ListenForChanges(const std::function<void()>& on_listening,
                        const std::function<void(std::string_view table, int id)>& on_change,
                        const std::stop_token& stop) override;

 private:
  PgPool& pool_;
};

}  // namespace cronwheel::admin
