#!/bin/bash
# smoke.sh - end-to-end check of the harness: setup -> 3 guests -> every guest reports
# cpu, net, block and balloon stats through `virsh domstats` -> guests removed.
#
# Uses guests vms-901..903 (SMOKE_FIRST) so that it does not disturb vms-001.. that
# may be running; removes only its own guests.  SMOKE_DOWN_ALL=1 also stops libvirtd
# and deletes the bridge afterwards.  Ends with a "N passed, N failed" line.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
vmlab_need_root
FIRST=${SMOKE_FIRST:-901}; N=3
T0=$(vmlab_now_ms)
pass=0 fail=0
ok()  { pass=$((pass + 1)); echo "ok   - $*"; }
bad() { fail=$((fail + 1)); echo "FAIL - $*"; }
names=(); for i in $(seq "$FIRST" $((FIRST + N - 1))); do names+=("$(vmlab_name "$i")"); done
cleanup() { "$VMLAB_DIR/down.sh" "${names[@]}" >/dev/null 2>&1 || true; }
trap cleanup EXIT

vmlab_step "smoke: setup.sh"; "$VMLAB_DIR/setup.sh" | sed 's/^/   /'; vmlab_step_done
vmlab_step "smoke: up.sh $N $FIRST (LOAD=light PERIOD=2)"
LOAD=light PERIOD=2 "$VMLAB_DIR/up.sh" "$N" "$FIRST" | sed 's/^/   /'
vmlab_step_done

# value KEY FILE -> value of "  KEY=value" in a domstats --raw dump
value() { awk -F= -v k="$2" '$1 ~ "^ *"k"$" {print $2; exit}' "$1"; }

vmlab_step "smoke: domstats"
out=$(mktemp); trap 'rm -f "$out"; cleanup' EXIT
# the readiness line comes before the first work round: give each guest up to 60 s
# for its first disk and network traffic to show up
for name in "${names[@]}"; do
  deadline=$(( $(vmlab_now_ms) + 60000 ))
  while :; do
    vmlab_virsh domstats --raw --cpu-total --interface --block --balloon "$name" > "$out"
    if [ "$(value "$out" block.0.wr.bytes)" -gt 0 ] 2>/dev/null \
       && [ "$(value "$out" net.0.tx.pkts)" -gt 0 ] 2>/dev/null \
       && [ "$(value "$out" balloon.rss)" -gt 0 ] 2>/dev/null; then break; fi
    [ "$(vmlab_now_ms)" -lt "$deadline" ] || break
    sleep 1
  done
  for k in cpu.time cpu.user cpu.system net.0.rx.bytes net.0.rx.pkts net.0.tx.bytes net.0.tx.pkts \
           block.0.rd.bytes block.0.wr.bytes block.0.rd.reqs block.0.wr.reqs \
           balloon.current balloon.rss balloon.available balloon.last-update; do
    v=$(value "$out" "$k")
    if [ -n "$v" ] && [ "$v" -gt 0 ] 2>/dev/null; then ok "$name $k=$v"; else bad "$name $k='${v}'"; fi
  done
  tap=$(value "$out" net.0.name)
  if [ "$tap" = "vmst${name#"$VMLAB_PREFIX"}" ] || [ "$tap" = "vmst$((10#${name#"$VMLAB_PREFIX"}))" ]; then
    ok "$name net.0.name=$tap"
  else bad "$name net.0.name='$tap'"; fi
done
vmlab_step_done

vmlab_step "smoke: down.sh ${names[*]}"
"$VMLAB_DIR/down.sh" "${names[@]}" | sed 's/^/   /'
for name in "${names[@]}"; do
  if vmlab_virsh domstate "$name" >/dev/null 2>&1; then bad "$name still defined"; else ok "$name removed"; fi
done
vmlab_step_done
trap 'rm -f "$out"' EXIT
if [ "${SMOKE_DOWN_ALL:-0}" = 1 ]; then "$VMLAB_DIR/down.sh" --all | sed 's/^/   /'; fi

vmlab_timings
echo "smoke wall time: $(vmlab_fmt_ms $(( $(vmlab_now_ms) - T0 )))"
echo "smoke: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
