# SPDX-License-Identifier: MIT
"""sched_ref - the interference account of doc/interference.md computed
independently of the BPF program, from a `perf sched record` trace: the
raw sched_switch, sched_wakeup (or, when the trace has none,
sched_waking), sched_wakeup_new and sched_migrate_task events that
`perf script` prints.  For tests/integration/it_interference.py and its
own unit test, tests/test_sched_ref.py.

  record(out, seconds)   runs `perf sched record` system-wide for that
                         long (CLOCK_MONOTONIC time stamps, so that a
                         window can be the sampler's frames'; sched_wakeup
                         added to what perf sched records) and returns a
                         Tasks snapshot taken at its start and its end
                         (record_start and record_wait: the same in two)
  events(data)           the trace's events, parsed (parse(text) for the
                         text of `perf script`)
  account(evs, victims, owner, ...) -> {victim_vm: {culprit: ns}}

The rules are the program's (doc/interference.md), applied to the whole
event stream rather than to a ring of 256 segments:
  - a victim (a TID of `victims`, the value its VM's name) waits from a
    wakeup onto target_cpu, or from a sched_switch that switches it out
    runnable (prev_state R or R+), to the sched_switch that switches it in;
    a sched_migrate_task of a waiting victim ends the part of its wait on
    orig_cpu and starts a part on dest_cpu;
  - the wait is split over the segments that ran on its CPU meanwhile, a
    segment being one task's run between two switches on one CPU, its
    culprit the task switched out at its end (perf script's pid/tid):
      VM name       a thread of another VM: owner[tid], or owner_tgid[pid]
      'own'         a thread of the victim's own VM
      'kernel'      the idle task (pid 0) and kernel threads (tasks.kthread)
      'host:PATH'   any other task, by its cgroup v2 path (tasks.cgroup;
                    'host:?' for a task the snapshots did not see)
      'unknown'     the part of a wait before the first switch the trace
                    has on that CPU
  - like the sampler's counters, a part is counted when it ends (at the
    switch-in or the migration): with window=(t0, t1), the parts that end
    in [t0, t1), whole.
"""
import os
import re
import subprocess
import time

# "  pid/tid  [cpu] sec.nsec:  sched:event: fields"
# (perf prints tid -1 where its thread map lost a task: the trace's own
# pids are the authority; prev_pid is the task that ran)
EV = re.compile(r'^\s*(-?\d+)/(-?\d+)\s+\[(\d+)\]\s+(\d+)\.(\d+):\s+(\S+):\s?(.*)$')
# the trace of a switch, from the end: prev_comm may hold blanks, '=' or '==>'
SWITCH = re.compile(r'prev_pid=(\d+) prev_prio=(-?\d+) prev_state=(\S+) ==> next_comm=.* next_pid=(\d+) '
                    r'next_prio=(-?\d+)\s*$')
# wakeup, waking, wakeup_new: comm=... pid=N prio=P [success=1] target_cpu=C
WAKE = re.compile(r' pid=(\d+) prio=(-?\d+)(?: success=\d+)? target_cpu=(\d+)\s*$')
MIGRATE = re.compile(r' pid=(\d+) prio=(-?\d+) orig_cpu=(\d+) dest_cpu=(\d+)\s*$')

PF_KTHREAD = 0x00200000


class Tasks:
    """What /proc says of the tasks alive at a snapshot: kthread (a set of
    TIDs), cgroup (TID -> its cgroup v2 path, '/' the root) and tgid (TID
    -> its process)."""

    def __init__(self, proc='/proc'):
        self.kthread, self.cgroup, self.tgid = set(), {}, {}
        self.add(proc)

    def add(self, proc='/proc'):
        for p in os.listdir(proc):
            if not p.isdigit():
                continue
            try:
                tids = os.listdir('%s/%s/task' % (proc, p))
            except OSError:
                continue
            for t in tids:
                try:
                    with open('%s/%s/task/%s/stat' % (proc, p, t)) as f:
                        stat = f.read()
                    with open('%s/%s/task/%s/cgroup' % (proc, p, t)) as f:
                        cg = f.read()
                except OSError:
                    continue  # gone meanwhile
                # flags: field 9, the 6th after the last ')' (comm may hold one)
                self.tgid[int(t)] = int(p)
                if int(stat[stat.rindex(')') + 2:].split()[6]) & PF_KTHREAD:
                    self.kthread.add(int(t))
                for line in cg.splitlines():
                    if line.startswith('0::'):
                        self.cgroup[int(t)] = line[3:].strip('/') or '/'
        return self


def record_start(out, seconds, extra=()):
    """`perf sched record` of the whole host for `seconds` into out,
    started: (its Popen, the Tasks seen before it)."""
    tasks = Tasks()
    p = subprocess.Popen(['perf', 'sched', 'record', '-q', '-k', 'mono', '-o', out, '-e', 'sched:sched_wakeup',
                          *extra, '--', 'sleep', str(seconds)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    recording(p)
    return p, tasks


def recording(p, timeout=20.0):
    """Wait until perf records: it enables its events, then lets its
    workload exec `sleep`; a child of perf named sleep means the trace has
    begun (a fixed pause was too short on a loaded machine: the trace began
    after the window it had to cover)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end and p.poll() is None:
        for d in os.listdir('/proc'):
            try:
                st = open('/proc/%s/stat' % d).read() if d.isdigit() else ''
            except OSError:
                continue
            if st:
                comm = st[st.index('(') + 1:st.rindex(')')]
                if comm == 'sleep' and int(st[st.rindex(')') + 2:].split()[1]) == p.pid:
                    return
        time.sleep(0.02)
    raise RuntimeError('perf sched record did not start its workload in %.0f s' % timeout)


def record_wait(p, tasks):
    """The recording's end: the Tasks seen before and after it."""
    _, err = p.communicate()
    if p.returncode:
        raise RuntimeError('perf sched record: exit %d: %s' % (p.returncode, err.decode(errors='replace')))
    return tasks.add()


def record(out, seconds, extra=()):
    """`perf sched record` of the whole host for `seconds` into out; the
    Tasks seen at its start and end."""
    return record_wait(*record_start(out, seconds, extra))


def parse(text):
    """The events of perf script's text (-F pid,tid,cpu,time,event,trace
    --ns): (t_ns, cpu, event, pid, tid, fields) with fields a tuple:
      sched_switch        (prev_pid, prev_state, next_pid)
      sched_wakeup, sched_waking, sched_wakeup_new   (pid, target_cpu)
      sched_migrate_task  (pid, orig_cpu, dest_cpu)
    Other events are skipped; so is a line that does not parse (the
    second value returned: the list of them)."""
    evs, bad = [], []
    for line in text.splitlines():
        m = EV.match(line)
        if not m:
            if line.strip() and 'sched:' in line:
                bad.append(line)
            continue
        pid, tid, cpu, s, ns, ev, rest = m.groups()
        t = int(s) * 10**9 + int(ns.ljust(9, '0')[:9])
        ev = ev.split(':')[-1]
        if ev == 'sched_switch':
            f = SWITCH.search(rest)
            if not f:
                bad.append(line)
                continue
            fields = (int(f.group(1)), f.group(3), int(f.group(4)))
        elif ev in ('sched_wakeup', 'sched_waking', 'sched_wakeup_new'):
            f = WAKE.search(rest)
            if not f:
                bad.append(line)
                continue
            fields = (int(f.group(1)), int(f.group(3)))
        elif ev == 'sched_migrate_task':
            f = MIGRATE.search(rest)
            if not f:
                bad.append(line)
                continue
            fields = (int(f.group(1)), int(f.group(3)), int(f.group(4)))
        else:
            continue
        evs.append((t, int(cpu), ev, int(pid), int(tid), fields))
    return evs, bad


def events(data):
    """The events of a perf.data file, in time order."""
    out = subprocess.run(['perf', 'script', '-i', data, '-F', 'pid,tid,cpu,time,event,trace', '--ns'],
                         capture_output=True, text=True, check=True).stdout
    evs, bad = parse(out)
    if bad:
        raise ValueError('%s: %d event lines perf script printed do not parse, e.g. %r'
                         % (data, len(bad), bad[:3]))
    evs.sort(key=lambda e: e[0])
    return evs


def account(evs, victims, owner=None, owner_tgid=None, tasks=None, window=None):
    """The victim x culprit account of the events (module doc): {victim's
    VM: {culprit: ns}}; a victim's VM without a wait has an empty dict."""
    owner, owner_tgid = owner or {}, owner_tgid or {}
    tasks = tasks or Tasks.__new__(Tasks)
    kthread = getattr(tasks, 'kthread', set())
    cgroup = getattr(tasks, 'cgroup', {})
    tgid = dict(getattr(tasks, 'tgid', {}))  # tid -> its process; and as the trace shows it
    segs = {}    # cpu -> [(start, end, culprit)], closed segments in time order
    start = {}   # cpu -> (start, culprit) of the running segment
    wait = {}    # victim tid -> (cpu, t0)
    acc = {vm: {} for vm in victims.values()}
    use_waking = not any(e[2] == 'sched_wakeup' for e in evs)
    wake_evs = ('sched_waking' if use_waking else 'sched_wakeup', 'sched_wakeup_new')

    def who(pid, tid):
        if tid == 0:
            return 'kernel'
        vm = owner.get(tid) or owner_tgid.get(pid)
        if vm:
            return vm
        if tid in kthread:
            return 'kernel'
        return 'host:' + cgroup.get(tid, '?')

    def add(vm, culprit, ns):
        name = 'own' if culprit == vm else culprit
        acc[vm][name] = acc[vm].get(name, 0) + ns

    def charge(v, cpu, t0, t1):
        """The wait of v on cpu over [t0, t1), ending at t1."""
        if window and not (window[0] <= t1 < window[1]):
            return
        vm = victims[v]
        covered = t1
        if cpu in start:
            s, c = start[cpu]
            s = max(s, t0)
            if s < covered:
                add(vm, c, covered - s)
                covered = s
        for (s, e, c) in reversed(segs.get(cpu, ())):
            if covered <= t0 or e <= t0:
                break
            e, s = min(e, covered), max(s, t0)
            if e > s:
                add(vm, c, e - s)
                covered = s
        if covered > t0:
            add(vm, 'unknown', covered - t0)

    for t, cpu, ev, pid, tid, f in evs:
        if ev == 'sched_switch':
            prev, state, nxt = f
            if pid > 0:
                tgid[prev] = pid
            # the victim switched in ends its wait, up to this instant: the
            # running segment is prev's (charge() reads start[cpu])
            if cpu in start:
                start[cpu] = (start[cpu][0], who(pid, prev))
            if nxt in victims and nxt in wait:
                wcpu, t0 = wait.pop(nxt)
                charge(nxt, wcpu, t0, t)
            if cpu in start:
                segs.setdefault(cpu, []).append((start[cpu][0], t, start[cpu][1]))
            # the running segment's culprit, as far as known before it
            # closes (a migration's charge): the task switched in
            start[cpu] = (t, who(tgid.get(nxt, -1), nxt))
            if prev in victims and state.startswith('R') and prev not in wait:
                wait[prev] = (cpu, t)
        elif ev in wake_evs:
            v, target = f
            if v in victims and v not in wait:
                wait[v] = (target, t)
        elif ev == 'sched_migrate_task':
            v, orig, dest = f
            if v in wait and wait[v][0] == orig:
                charge(v, orig, wait[v][1], t)
                wait[v] = (dest, t)
    return acc


def shares(acc_vm):
    """{culprit: share of the victim's wait}"""
    tot = sum(acc_vm.values())
    return {k: v / tot for k, v in acc_vm.items()} if tot else {}


if __name__ == '__main__':
    import sys
    # sched_ref.py DATA VICTIM_TID [VM=TGID ...]: print the account
    vt = int(sys.argv[2])
    tg = {}
    for a in sys.argv[3:]:
        n, g = a.split('=')
        tg[int(g)] = n
    print(account(events(sys.argv[1]), {vt: 'victim'}, {}, tg, Tasks()))
