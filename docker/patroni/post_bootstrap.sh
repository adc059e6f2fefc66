#!/bin/sh
# Patroni runs this once, on the node that initialised the cluster, with a connection string as $1: the
# application's role and database (the password from the container's CRONWHEEL_DB_PASSWORD).
set -eu
: "${CRONWHEEL_DB_PASSWORD:?set CRONWHEEL_DB_PASSWORD}"
psql "$1" -v ON_ERROR_STOP=1 -v pw="$CRONWHEEL_DB_PASSWORD" <<'SQL'
CREATE ROLE cronwheel LOGIN PASSWORD :'pw';
CREATE DATABASE cronwheel OWNER cronwheel;
SQL
