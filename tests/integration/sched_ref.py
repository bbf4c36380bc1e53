# SPDX-License-Identifier: MIT
"""sched_ref - the interference account of doc/interference.md computed
independently, from a `perf sched record` trace (the raw sched_switch,
sched_wakeup, sched_wakeup_new and sched_migrate_task events that `perf
script` prints), for the integration test's reference.

account(data, victims, owner) -> {victim_vm: {culprit: ns}} where
victims maps a victim TID to its VM name, owner maps any TID (and a
process's threads through their TGID, perf script's pid) to a VM name;
a culprit is a VM name, 'own', 'host', 'kernel' (pid 0, kernel threads
are not told apart here: 'host'), or 'unknown' (a wait that began before
the trace).  The same rules as the program: a wait runs from a wakeup
(target_cpu) or a switch-out while runnable to the switch-in; a
migration moves the rest of a wait to the destination CPU; the wait is
split over the segments that ran on its CPU meanwhile.
"""
import re
import subprocess

EV = re.compile(r'^\s*(\d+)/(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d+):\s+(\S+):\s+(.*)$')
KV = re.compile(r'(\w+)=(\S+)')


def events(data):
    out = subprocess.run(['perf', 'script', '-i', data, '-F', 'pid,tid,cpu,time,event,trace', '--ns'],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        m = EV.match(line)
        if not m:
            continue
        pid, tid, cpu, s, ns, ev, rest = m.groups()
        t = int(s) * 10**9 + int(ns.ljust(9, '0')[:9])
        ev = ev.split(':')[-1]
        if ev == 'sched_switch':
            prev, nxt = rest.split('==>')
            a, b = dict(KV.findall(prev)), dict(KV.findall(nxt))
            yield t, int(cpu), ev, {'prev_pid': int(a['prev_pid']), 'prev_state': a['prev_state'],
                                    'next_pid': int(b['next_pid']), 'pid': int(pid)}
        else:
            d = dict(KV.findall(rest))
            yield t, int(cpu), ev, {k: (int(v) if v.isdigit() else v) for k, v in d.items()}


def account(data, victims, owner, tgid_owner=None):
    tgid_owner = tgid_owner or {}
    segs = {}      # cpu -> [(start, end, culprit_tid, culprit_tgid)]
    start = {}     # cpu -> start of the running segment
    wait = {}      # victim tid -> (cpu, t0)
    acc = {}

    def who(tid, tgid):
        if tid == 0:
            return 'kernel'
        return owner.get(tid) or tgid_owner.get(tgid) or 'host'

    def charge(v, cpu, t0, t1, open_seg=None):
        vm = victims[v]
        a = acc.setdefault(vm, {})
        covered = t1
        if open_seg:
            s, c = open_seg
            s = max(s, t0)
            if s < t1:
                name = 'own' if c == vm else c
                a[name] = a.get(name, 0) + t1 - s
                covered = s
        for (s, e, c) in reversed(segs.get(cpu, [])):
            if covered <= t0:
                break
            if e <= t0:
                break
            e = min(e, covered)
            s = max(s, t0)
            if e > s:
                name = 'own' if c == vm else c
                a[name] = a.get(name, 0) + e - s
                covered = s
        if covered > t0:
            a['unknown'] = a.get('unknown', 0) + covered - t0

    cur = {}  # cpu -> culprit of the running segment (from the switch-in: by TID only)
    for t, cpu, ev, d in events(data):
        if ev == 'sched_switch':
            prev, nxt = d['prev_pid'], d['next_pid']
            if cpu in start:
                segs.setdefault(cpu, []).append((start[cpu], t, who(prev, d['pid'])))
            start[cpu] = t
            cur[cpu] = 'kernel' if nxt == 0 else owner.get(nxt, 'host')
            runnable = d['prev_state'] in ('R', 'R+')
            if prev in victims and runnable and prev not in wait:
                wait[prev] = (cpu, t)
            if nxt in victims and nxt in wait:
                wcpu, t0 = wait.pop(nxt)
                charge(nxt, wcpu, t0, t)
        elif ev in ('sched_wakeup', 'sched_wakeup_new'):
            v = d.get('pid')
            if v in victims and v not in wait:
                wait[v] = (d['target_cpu'], t)
        elif ev == 'sched_migrate_task':
            v = d.get('pid')
            if v in wait and wait[v][0] == d['orig_cpu']:
                wcpu, t0 = wait[v]
                oc = d['orig_cpu']
                charge(v, oc, t0, t, (start.get(oc, t), cur.get(oc, 'unknown')))
                wait[v] = (d['dest_cpu'], t)
    return acc


if __name__ == '__main__':
    import sys
    # sched_ref.py DATA VICTIM_TID VM=TGID ...: print the account
    vt = int(sys.argv[2])
    tg = {}
    for a in sys.argv[3:]:
        n, g = a.split('=')
        tg[int(g)] = n
    print(account(sys.argv[1], {vt: 'victim'}, {}, tg))
