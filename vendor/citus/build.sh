#!/usr/bin/env bash
# Builds the vendored Citus (see README.md here) and installs it into a Postgres with server headers.
# Does nothing when this version is already installed there. Needs root or sudo for apt and install.
# Usage: vendor/citus/build.sh   (PG_CONFIG names the pg_config; default Debian's Postgres 15)
set -euo pipefail
dir=$(cd "$(dirname "$0")" && pwd)
version=13.2.2
pg_config=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
major=$("$pg_config" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
libdir=$("$pg_config" --pkglibdir)
sharedir=$("$pg_config" --sharedir)
if [[ -f "$libdir/citus.so" ]] && grep -q "default_version = '13.2-1'" "$sharedir/extension/citus.control" 2>/dev/null; then
  echo "citus $version: already installed for PostgreSQL $major"
  exit 0
fi

sudo_cmd=()
[[ $(id -u) == 0 ]] || sudo_cmd=(sudo -E)
export DEBIAN_FRONTEND=noninteractive
echo "citus $version: installing build dependencies (apt)"
"${sudo_cmd[@]}" apt-get install -y -qq "postgresql-server-dev-$major" libcurl4-openssl-dev liblz4-dev \
  libzstd-dev libkrb5-dev libssl-dev libselinux1-dev libxslt1-dev libpam0g-dev >/dev/null

src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
tar -xzf "$dir/citus-$version.tar.gz" -C "$src"
cd "$src/citus-$version"
# Postgres 15.20 and later export have_createdb_privilege(), which this Citus also defines as a
# static inline function: rename Citus's copy so the two do not collide.
perl -0pi -e 's/static inline bool\nhave_createdb_privilege\(void\)/#define have_createdb_privilege citus_have_createdb_privilege\n$&/' \
  src/include/pg_version_compat.h
echo "citus $version: building for PostgreSQL $major (a few minutes)"
./configure --with-pg-config="$pg_config" >/dev/null
make -j"$(nproc)" >/dev/null
"${sudo_cmd[@]}" make install >/dev/null
echo "citus $version: installed for PostgreSQL $major"
