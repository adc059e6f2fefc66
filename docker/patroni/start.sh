#!/bin/sh
# The Patroni node's entry point: no default secret, so it refuses to start without its passwords.
set -eu
for v in PATRONI_SUPERUSER_PASSWORD PATRONI_REPLICATION_PASSWORD CRONWHEEL_DB_PASSWORD; do
  eval "val=\${$v:-}"
  if [ -z "$val" ]; then
    echo "cronwheel-patroni: $v is empty: set POSTGRES_SUPERUSER_PASSWORD, POSTGRES_REPLICATION_PASSWORD and POSTGRES_PASSWORD for the ha profile" >&2
    exit 2
  fi
done
exec patroni /etc/patroni/cronwheel.yml
