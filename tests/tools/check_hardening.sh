#!/usr/bin/env bash
# Checks that ELF executables carry the hardening of cmake/Warnings.cmake (issue 21), by reading them with
# readelf (binutils):
#   PIE          the ELF type is DYN (position-independent executable: ASLR moves the code too)
#   BIND_NOW     the dynamic section has FLAGS BIND_NOW (-z now: every symbol bound at start)
#   GNU_RELRO    a GNU_RELRO segment (-z relro); with BIND_NOW it covers the GOT: full RELRO
#   stack        __stack_chk_fail is imported (-fstack-protector-strong put canaries in)
#   fortify      with --fortify: a __*_chk function of glibc is imported (-D_FORTIFY_SOURCE, optimised builds)
# Prints what it found per binary; exits 1 naming each binary and what it lacks.
#
#   tests/tools/check_hardening.sh [--fortify] BINARY...
set -euo pipefail
fortify=0
args=()
for a in "$@"; do  # an empty argument (a generator expression of ctest that came out empty) is none
  if [ "$a" = "--fortify" ]; then fortify=1; elif [ -n "$a" ]; then args+=("$a"); fi
done
set -- "${args[@]+"${args[@]}"}"
if (($# == 0)); then echo "usage: $0 [--fortify] BINARY..." >&2; exit 2; fi
command -v readelf >/dev/null || { echo "$0: readelf (binutils) is missing" >&2; exit 2; }
failed=0
for bin in "$@"; do
  if [ ! -f "$bin" ]; then echo "$bin: no such file"; failed=1; continue; fi
  header=$(readelf -h -W "$bin")
  dynamic=$(readelf -d -W "$bin")
  segments=$(readelf -l -W "$bin")
  symbols=$(readelf --dyn-syms -W "$bin")
  missing=()
  grep -Eq 'Type:[[:space:]]+DYN' <<<"$header" || missing+=("PIE (ELF type is not DYN)")
  grep -Eq '\(FLAGS\).*BIND_NOW|\(FLAGS_1\).*NOW' <<<"$dynamic" || missing+=("BIND_NOW (-z now)")
  grep -q 'GNU_RELRO' <<<"$segments" || missing+=("GNU_RELRO (-z relro)")
  grep -q '__stack_chk_fail' <<<"$symbols" || missing+=("__stack_chk_fail (-fstack-protector-strong)")
  chk=$(grep -Eo '__[a-z0-9_]+_chk\b' <<<"$symbols" | grep -v '^__stack_chk_fail$' | sort -u | tr '\n' ' ' || true)
  if ((fortify)) && [ -z "$chk" ]; then missing+=("__*_chk functions (-D_FORTIFY_SOURCE)"); fi
  echo "$bin:"
  grep -E 'Type:' <<<"$header" | sed 's/^ */  /'
  grep -E '\((FLAGS|FLAGS_1)\)' <<<"$dynamic" | sed 's/^ */  /' || true
  grep -E 'GNU_RELRO' <<<"$segments" | sed 's/^ */  /' || true
  grep -Eo '__stack_chk_fail[^ ]*' <<<"$symbols" | sort -u | sed 's/^/  /' || true
  echo "  fortified: ${chk:-none}"
  if ((${#missing[@]})); then
    for m in "${missing[@]}"; do echo "$bin: lacks $m"; done
    failed=1
  fi
done
exit "$failed"
