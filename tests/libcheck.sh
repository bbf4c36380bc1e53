#!/bin/bash
# libcheck.sh BUILDDIR SRCDIR VMSAMPLER SANITIZE LIB - libvmsampler (the shared
# library LIB) as a user
# gets it:
#   - the shared library exports exactly the vms_reader_* of the public
#     header, and nothing in it can print or exit;
#   - examples/follow.c builds against it with only pkg-config's flags and
#     the public header, and reads a file the sampler wrote, every frame.
set -euo pipefail
build=$1 src=$2 bin=$3 sanitize=${4:-none} lib=$5
san=()
[ "$sanitize" = none ] || san=(-fsanitize="$sanitize")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

exports=$(nm -D --defined-only "$lib" | awk '$2 == "T" {print $3}' | sed 's/@.*//' | sort)
bad=$(echo "$exports" | grep -v '^vms_reader_' || true)
[ -z "$bad" ] || { echo "exported beyond vms_reader_*: $bad"; exit 1; }
declared=$(grep -o 'vms_reader_[a-z_]*(' "$src/include/vmsampler/reader.h" | tr -d '(' | sort -u)
[ "$exports" = "$declared" ] || { diff <(echo "$declared") <(echo "$exports"); echo "exports != header"; exit 1; }
printing=$(nm -D --undefined-only "$lib" | awk '{print $2}' | sed 's/@.*//' |
	grep -E '^(printf|fprintf|vfprintf|puts|fputs|fputc|putchar|perror|write|writev|exit|_exit|abort|syslog|stderr|stdout)$' || true)
[ -z "$printing" ] || { echo "libvmsampler can print or exit: $printing"; exit 1; }

export PKG_CONFIG_PATH=$build/meson-uninstalled
cc "${san[@]}" -std=c11 -Wall -Wextra -Werror "$src/examples/follow.c" $(pkg-config --cflags --libs vmsampler) \
	-Wl,-rpath,"$(dirname "$lib")" -o "$tmp/follow"
"$bin" -q -i 10ms -n 12 -o "$tmp/run.vms"
"$tmp/follow" "$tmp/run.vms" 'cpu.all.user,load.*' > "$tmp/out" 2> "$tmp/err"
[ "$(wc -l < "$tmp/out")" = 12 ] || { cat "$tmp/out" "$tmp/err"; echo "expected 12 frames"; exit 1; }
[ "$(awk '{print $1}' "$tmp/out" | tr '\n' ' ')" = "1 2 3 4 5 6 7 8 9 10 11 12 " ] || { echo "seqs"; exit 1; }
[ "$(awk '{print NF}' "$tmp/out" | sort -u)" = 7 ] || { cat "$tmp/out"; echo "columns"; exit 1; }
echo "libvmsampler: $(echo "$exports" | wc -l) symbols exported, no printing, example OK"
