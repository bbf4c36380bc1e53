#!/bin/bash
# archcheck.sh SRCDIR BUILDDIR - the rules of doc/ARCHITECTURE.md, checked:
#   1. a room includes only its own headers, those of the rooms below it,
#      and the public include/vmsampler/ (the include directories of the
#      build enforce it too; this names the offending line);
#   2. each program links only its rooms: the sampler has no reader, rates,
#      dump or tail code, the tools no sampler or source code, the agent
#      neither;
#   3. the public headers include nothing from src/;
#   4. no consumer takes a column name apart: the column catalogue's
#      identity says what a column is (src/common/catalog.c); the one
#      place that parses names, for files written without identities, is
#      vms_catalog_derive() (and vmsampler.catalog.derive in Python);
#   5. sources never see the loop: nothing under src/sampler/sources/
#      includes loop.h or reaches a source's loop (`->loop`); what a source
#      needs from the run (clock, events, the VM set) is handed to it as a
#      parameter (struct vms_source_env, source.h).
set -uo pipefail
src=$1 build=$2
fail=0
bad() { echo "architecture: $*"; fail=1; }

# room -> the rooms whose headers it may include (itself first)
declare -A may=(
	[common]="common"
	[lib]="lib common"
	[tools]="tools lib common"
	[sampler]="sampler sampler/sources common"
	[sampler/sources]="sampler/sources sampler common"
	[agent]="agent common"
)
for room in "${!may[@]}"; do
	for f in "$src/src/$room"/*.[ch]; do
		[ -e "$f" ] || continue
		while IFS=: read -r line inc; do
			h=${inc#*\"}; h=${h%\"*}
			found=
			for r in ${may[$room]}; do
				[ -e "$src/src/$r/$h" ] && { found=$r; break; }
			done
			[ -n "$found" ] && continue
			[ -e "$src/include/$h" ] && continue
			# generated into the build directory: by meson.build
			[ "$h" = vms_build.h ] && continue
			# the kernel's types (bpftool btf dump) and the BPF skeleton
			# (bpftool gen skeleton), generated for the interference source
			[ "$room" = sampler/sources ] && { [ "$h" = vmlinux.h ] || [ "$h" = interf.skel.h ]; } && continue
			# protoc-c's code of src/tools/prompb.proto (remote write)
			[ "$room" = tools ] && [ "$h" = prompb.pb-c.h ] && continue
			owner=$(cd "$src/src" && ls -d */"$h" */*/"$h" 2>/dev/null | head -n 1)
			bad "src/$room/${f##*/}:$line includes \"$h\" (${owner:-nowhere}), outside ${may[$room]}"
		done < <(grep -n '^#include "' "$f" | sed 's/^\([0-9]*\):#include /\1:/')
	done
done
# every directory under src/ is a room of the table
for d in "$src"/src/*/ "$src"/src/*/*/; do
	[ -d "$d" ] || continue
	r=${d#"$src/src/"}; r=${r%/}
	[ -n "${may[$r]+x}" ] || bad "src/$r is not a room of doc/ARCHITECTURE.md"
done

# public headers stand alone
if grep -n '^#include "' "$src"/include/vmsampler/*.h; then
	bad "a public header includes a private one"
fi

# what each program links (text symbols of its own code)
syms() { nm --defined-only "$1" 2>/dev/null | awk '$2 ~ /^[TtDdRrBb]$/ {print $3}'; }
check_bin() { # check_bin BINARY WHAT REGEX
	[ -x "$1" ] || { bad "$1 not built"; return; }
	local hits
	hits=$(syms "$1" | grep -E "$3" | head -n 5 | tr '\n' ' ')
	[ -z "$hits" ] || bad "${1##*/} links $2: $hits"
}
check_bin "$build/vmsampler" "reader-side code" '^vms_(reader|rates|dump|tail|report)_'
check_bin "$build/vmsampler-tools" "sampler code" '^vms_(loop|source|sched|config|cli|perf|vm_|vmtab|cgroup|virt_client)_?'
if [ -e "$build/vmsampler-virt" ]; then
	check_bin "$build/vmsampler-virt" "sampler or reader code" '^vms_(loop|source|sched|config|cli|reader|rates|dump|tail|sink)_'
fi
# 4: string searches on a name in the readers' code; a line saying
# "without identity" is the fallback for a column the catalogue does not know
for f in $(cd "$src" && echo src/lib/rates*.c src/lib/reader.c src/tools/report*.c src/tools/metrics.c \
	src/tools/lineproto.c src/tools/tail.c src/tools/dump.c src/tools/rates_csv.c src/tools/export*.c \
	src/tools/compare.c); do
	[ -e "$src/$f" ] || continue
	hits=$(grep -nE '(strr?chr|strncmp|strstr|memchr|strtok|strspn|strcspn|sscanf|after|component|last_split)\([^;]*\bname\b' "$src/$f" |
		grep -v 'without identity' | head -n 3)
	[ -z "$hits" ] || bad "$f takes column names apart: $hits"
done
# (plot.py, sweep.py and compare.py: rate columns, by catalog.rate_id; also no regex
# over a column name's layout)
for f in python/vmsampler/parquet.py python/vmsampler/__init__.py python/vmsampler/plot.py \
	python/vmsampler/sweep.py python/vmsampler/compare.py; do
	[ -e "$src/$f" ] || continue
	hits=$(grep -nE '\b(name|h|c|n)\.(r?split|startswith|endswith|partition|find|index)\(|re\.compile\(r?.\^?(cpu|disk|net|vm|stat|load|mem|psi)\\\.' \
		"$src/$f" | head -n 3)
	[ -z "$hits" ] || bad "$f takes column names apart: $hits"
done
# 5: the source API is the only way from a source to the run
hits=$(grep -nE '^#include "loop\.h"|->loop\b' "$src"/src/sampler/sources/*.[ch] | sed "s|^$src/||" | head -n 5 | tr "\n" " ")
[ -z "$hits" ] || bad "a source reaches into the loop (use struct vms_source_env): $hits"
[ "$fail" = 0 ] && echo "architecture: rooms and links as doc/ARCHITECTURE.md says"
exit $fail
