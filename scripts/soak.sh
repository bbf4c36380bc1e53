#!/bin/bash
# scripts/soak.sh [MINUTES] - the sampler at 10 ms for MINUTES (default 30)
# under an adversary, then every frame accounted for.  As root (it mounts a
# tmpfs).
#
# The sampler writes a .vms file and a --ring on a small tmpfs of its own.
# Meanwhile, in a random order, the adversary:
#   - rotates the output as logrotate does (mv, SIGHUP), and moves the
#     rotated file off the tmpfs once the sampler has let go of it;
#   - fills the tmpfs to the last block and frees it again a moment later;
#   - attaches readers to the ring and the file (tail --no-follow, dump);
#   - tries to clobber the ring (vmsampler -o RING; -o RING --force), which
#     must be refused with exit status 1 and leave the sampler untouched.
# At the end (SIGTERM: exit status 0 required) the files are read in
# rotation order with `vmsampler dump`: every seq from 1 to the last is in
# exactly one file or counted in lost_frames on the first frame after its
# gap (sum of lost_frames = missing seqs), none twice.  The summary block
# is what doc/reliability.md quotes.
. "$(dirname "$0")/lib.sh"
MINUTES=${1:-30}
set +e  # the adversary expects failures (a full disk, refusals)
need_root
apt_install $BUILD_PKGS
need_libperf
build build-run --buildtype=release -Dperf=enabled
VMS=$ROOT/build-run/vmsampler

work=$(mktemp -d /tmp/vms-soak.XXXXXX)
fs=$work/fs
out=$work/rotated
mkdir -p "$fs" "$out"
mount -t tmpfs -o size=8m vms-soak "$fs"
pid=
cleanup() {
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	umount -l "$fs" 2>/dev/null
	[ "${KEEP:-0}" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT

"$VMS" -q -i 10ms -o "$fs/run.vms" --ring "$fs/ring" 2>"$work/sampler.err" &
pid=$!
sleep 1
kill -0 "$pid" || { cat "$work/sampler.err" >&2; exit 1; }

end=$((SECONDS + MINUTES * 60))
rot=0 fills=0 readers=0 clobbers=0 refused=0
echo "== soak: $MINUTES min at 10 ms; adversary running (work dir $work)"
while [ $SECONDS -lt $end ]; do
	case $((RANDOM % 4)) in
	0)	# logrotate: mv + SIGHUP; the renamed file leaves the tmpfs
		rot=$((rot + 1))
		name=$(printf 'run.vms.%05d' "$rot")
		mv "$fs/run.vms" "$fs/$name" 2>/dev/null || { rot=$((rot - 1)); continue; }
		kill -HUP "$pid"
		for _ in $(seq 100); do [ -e "$fs/run.vms" ] && break; sleep 0.05; done
		sleep 0.2
		mv "$fs/$name" "$out/$name"
		;;
	1)	# fill the file system, hold it full, free it
		fills=$((fills + 1))
		dd if=/dev/zero of="$fs/filler" bs=64k status=none 2>/dev/null
		sleep "0.$((RANDOM % 9 + 1))"
		rm -f "$fs/filler"
		;;
	2)	# readers come and go
		readers=$((readers + 2))
		"$VMS" tail "$fs/ring" --no-follow -n 5 >/dev/null 2>&1
		"$VMS" dump "$fs/ring" >/dev/null 2>&1
		;;
	3)	# a typo aimed at the live ring
		clobbers=$((clobbers + 2))
		for f in "" --force; do
			"$VMS" -q -n 1 -o "$fs/ring" $f 2>/dev/null
			[ $? = 1 ] && refused=$((refused + 1))
		done
		;;
	esac
	kill -0 "$pid" 2>/dev/null || { echo "soak: the sampler died" >&2; cat "$work/sampler.err" >&2; exit 1; }
	sleep "0.$((RANDOM % 5))"
done
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ "$rc" = 0 ] || { echo "soak: the sampler exited $rc after SIGTERM" >&2; exit 1; }
mv "$fs/run.vms" "$out/run.vms.99999"

python3 - "$VMS" "$out" "$MINUTES" "$rot" "$fills" "$readers" "$clobbers" "$refused" <<'PY'
import csv, io, os, subprocess, sys
vms, out, minutes, rot, fills, readers, clobbers, refused = sys.argv[1:]
prev = 0
frames = lost = dups = bad = 0
late_max = 0
seen = set()
files = sorted(os.listdir(out))
for name in files:
    r = subprocess.run([vms, 'dump', os.path.join(out, name)], capture_output=True, text=True)
    if r.returncode != 0:
        print('soak: dump %s failed: %s' % (name, r.stderr.strip()), file=sys.stderr)
        sys.exit(1)
    for row in csv.DictReader(io.StringIO(r.stdout)):
        seq, lf = int(row['seq']), int(row['lost_frames'])
        if seq in seen:
            dups += 1
            continue
        seen.add(seq)
        if lf != seq - prev - 1:
            bad += 1
            if bad <= 5:
                print('soak: seq %d after %d carries lost_frames=%d' % (seq, prev, lf), file=sys.stderr)
        lost += lf
        frames += 1
        late_max = max(late_max, int(row['late_ns']))
        prev = seq
print('== soak summary')
print('   duration            %s min at 10 ms' % minutes)
print('   frames written      %d of %d (last seq %d)' % (frames, prev, prev))
print('   lost, counted       %d (on the first frame after each gap)' % lost)
print('   unaccounted gaps    %d' % bad)
print('   duplicated frames   %d' % dups)
print('   files               %d (%s rotations by mv + SIGHUP)' % (len(files), rot))
print('   disk-full episodes  %s' % fills)
print('   readers attached    %s' % readers)
print('   clobber attempts    %s, refused %s' % (clobbers, refused))
print('   max lateness        %.2f ms' % (late_max / 1e6))
ok = bad == 0 and dups == 0 and frames + lost == prev and clobbers == refused
print('soak: %s' % ('PASS' if ok else 'FAIL'))
sys.exit(0 if ok else 1)
PY
