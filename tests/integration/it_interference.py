#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""it_interference - interference attribution on real guests (issue 26,
doc/interference.md), with the BPF source (sources.interference).

Guests (transient, removed whatever happens), 1 vCPU each:
  V vms-961 LOAD=spin  victim         vCPU and emulator pinned to CPU 0
  A vms-962 LOAD=spin  aggressor      vCPU and emulator pinned to CPU 0
  B vms-963 LOAD=light bystander      vCPU and emulator pinned to CPU 1
(virsh vcpupin / emulatorpin, --live).  vmsampler runs at 1 s with
sources.interference and sources.intfest (the estimate without BPF) on
(a .vms file: the pairs' columns come with new schema generations), perf
sched record beside it (tests/integration/sched_ref.py, CLOCK_MONOTONIC
time stamps: the reference is computed over the frames' own window).

1. 10 s with that placement, over the frames of the window:
   - A's share of V's wait (vm.V.intf.by.A / vm.V.intf.wait, the deltas)
     >= 80 %, B's (by.B, 0 without the column) <= 2 %;
   - the sum rule: vm.V.intf.wait within 2 % of the sum of V's
     vcpuK.delay over the same frames (the kernel's run delay), and wait
     = vms + own + host + kernel + unknown exactly;
   - the reference: sched_ref.py's account of the `perf sched record`
     trace, over the window of the phase's first and last frames (a part
     counted when its wait ends, as the program's counters do): per
     victim-culprit pair (A, B, own, host, kernel, unknown) ours within
     5 % of the reference's, plus 0.5 % of V's wait for the small pairs
     (B's, kernel's: a few ms) and the reads' microseconds at the ends;
   - the estimate (sources.intfest), pinned case: vm.V.intfest.wait is
     V's run delay (the same schedstat) within 2 %, its parts add up to
     it exactly, and A's estimated share is within 10 points of the BPF
     account's;
   - vm.V.vcpu0.allowed 1 and allowed_first 0, A's too (placement
     columns, on the detail ticks).
   - `vmsampler report --interference --format csv` over the phase's
     frames names A first among V's culprits, its seconds those of
     vm.V.intf.by.A (1 % + 10 ms), its share >= 80 %;
   - CPU 0's run queue delay (rq.0.delay) per second: the run delay of
     every thread of V's and A's QEMUs (their schedstat, read by the
     test), 10 % + 20 ms/s;
2. A's vCPU and emulator moved to CPU 1 live: over the next 8 s V's wait
   per second falls below half of what it was, and A's share of
   what is left is <= 10 %.
3. B (light), on CPU 1 where A now spins, waits when it wakes: its top
   culprit (the largest of its by.* columns, its named host cgroups
   host.CG, own and kernel) is A.
4. A host hog: a busy process in a cgroup2 group of its own, pinned to
   CPU 0 where V now runs alone: V's wait is >= 80 % host, and >= 80 %
   behind the column named after the hog's cgroup,
   vm.V.intf.host.it-interference-hog (the source names the host's top
   cgroups by path).
The host's other threads (all but the QEMUs) are moved off the CPU
under study for each phase (Isolation) and given back at the end.
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from itlib import (BIN, Checks, Sampler, Stream, log, need, qemu_pid, remove, run, schedstat_sum,  # noqa: E402
                   skip_or_fail, transient, virsh)
import sched_ref  # noqa: E402


def vcpu_tids(pid):
    tids = []
    for t in sorted(os.listdir('/proc/%d/task' % pid), key=int):
        comm = open('/proc/%d/task/%s/comm' % (pid, t)).read().strip()
        if comm.startswith('CPU ') and (comm.endswith('/KVM') or comm.endswith('/TCG')):
            tids.append(int(t))
    return tids


class Isolation:
    """Every movable thread of the host but the guests' QEMUs to one CPU,
    as an experimenter isolates a CPU with a cpuset: a busy machine's
    other work (compilers, other tests) otherwise lands beside V and A
    and is, correctly, attributed to the host (A's share fell to 24 %
    with five builds running).  Threads started later inherit their
    parent's affinity; per-CPU kernel threads cannot move (EINVAL) and
    stay.  restore() puts back what each thread had."""

    def __init__(self):
        self.saved = {}

    def to(self, cpu):
        for p in os.listdir('/proc'):
            if not p.isdigit():
                continue
            try:
                if open('/proc/%s/comm' % p).read().startswith('qemu'):
                    continue
                tids = os.listdir('/proc/%s/task' % p)
            except OSError:
                continue
            for t in tids:
                t = int(t)
                try:
                    if t not in self.saved:
                        self.saved[t] = os.sched_getaffinity(t)
                    os.sched_setaffinity(t, {cpu})
                except OSError:
                    pass

    def restore(self):
        for t, cpus in self.saved.items():
            try:
                os.sched_setaffinity(t, cpus)
            except OSError:
                pass


def pin(guest, cpu):
    virsh('vcpupin', guest, '0', str(cpu), '--live')
    virsh('emulatorpin', guest, str(cpu), '--live')


class Phase:
    """The frames of [t0, t1) (CLOCK_MONOTONIC), and deltas over them."""

    def __init__(self, frames, t0, t1):
        self.f = [f for f in frames if t0 <= f['t_mono'] < t1]

    def d(self, name):
        """last - first of the frames that have the column (0: none has it)."""
        have = [f['v'][name] for f in self.f if name in f['v']]
        return have[-1] - have[0] if len(have) >= 2 else 0

    def last(self, name):
        have = [f['v'][name] for f in self.f if name in f['v']]
        return have[-1] if have else None

    def names(self, prefix):
        return sorted({n for f in self.f for n in f['v'] if n.startswith(prefix)})


def main():
    c = Checks('it_interference')
    need()
    if 'bpf: yes' not in run(BIN, '--version').stdout:
        skip_or_fail('this vmsampler is built without BPF (-Dbpf)')
    V, A, B = transient(961, load='spin'), transient(962, load='spin'), transient(963, load='light')
    out = '/tmp/it-interference-%d.vms' % os.getpid()
    trace = '/tmp/it-interference-%d.data' % os.getpid()
    s = hog = cg = None
    now = time.monotonic_ns
    iso = Isolation()
    try:
        # the session's other guests (vms-001..003, LOAD=light) to CPU 1:
        # CPU 0 is V's and A's (run unpinned, they took 1.6 s of V's 6.5 s
        # wait in 10 s: correctly attributed to them, but not the
        # experiment's placement)
        others = [g for g in virsh('list', '--name').stdout.split() if g not in (V, A, B)]
        for g in others:
            pin(g, 1)
        pin(V, 0)
        pin(A, 0)
        pin(B, 1)
        owner = {}
        for g in (V, A, B):
            for t in os.listdir('/proc/%d/task' % qemu_pid(g)):
                owner[int(t)] = g
        vt = vcpu_tids(qemu_pid(V))
        c.ok(len(vt) == 1, "V's vCPU thread not found: %s" % vt)
        # the matrix's columns appear with new generations: a binary file
        # keeps them all (CSV on a pipe keeps the first header)
        s = Sampler('-i', '1s', '-o', out, csv=False,
                    config='sources: {interference: {enabled: true}, intfest: {enabled: true}}\n')
        time.sleep(4)  # the first frames, and the pairs' first generation
        c.ok('unavailable' not in s.stderr(), 'the source did not load: ' + s.stderr())
        # 1. V and A on CPU 0, perf sched beside; the host's other work on
        # CPU 1 (it goes to CPU 0 for 3., where B waits on CPU 1)
        iso.to(1)
        rec, tasks = sched_ref.record_start(trace, 11.5)
        time.sleep(0.2)  # record_start returns once perf records
        t1 = now()
        qd1 = schedstat_sum(qemu_pid(V), 1) + schedstat_sum(qemu_pid(A), 1)
        time.sleep(10)
        t2 = now()
        qd2 = schedstat_sum(qemu_pid(V), 1) + schedstat_sum(qemu_pid(A), 1)
        tasks = sched_ref.record_wait(rec, tasks)
        # 2. A moves to CPU 1
        pin(A, 1)
        time.sleep(1)
        t3 = now()
        time.sleep(8)
        t4 = now()
        # 3. B beside A on CPU 1 (B was there already: it is the one waiting now)
        iso.to(0)
        time.sleep(8)
        t5 = now()
        # 4. a host hog in a cgroup2 group of its own beside V on CPU 0
        cg2 = [l.split()[4] for l in open('/proc/self/mountinfo') if ' - cgroup2 ' in l]
        t6 = t7 = None
        iso.to(1)
        if cg2:
            cg = os.path.join(cg2[0], 'it-interference-hog')
            os.makedirs(cg, exist_ok=True)
            hog = subprocess.Popen(['taskset', '-c', '0', 'sh', '-c', 'while :; do :; done'])
            open(os.path.join(cg, 'cgroup.procs'), 'w').write('%d\n' % hog.pid)
            # the hog's column is declared at most VMS_INTERF_DECLARE_NS
            # (10 s, config.h) after the last declaration (phase 3 named
            # cgroups of its own); until then its wait is in host_other
            # (CI, once: 2,716 of 4,780 ms there with a 1 s pause)
            time.sleep(10 + 1.5)
            t6 = now()
            time.sleep(8)
            t7 = now()
        time.sleep(1.5)
        c.ok(s.stop() == 0, 'vmsampler exit status: ' + s.stderr())
        s = None
        frames = Stream(out).frames
        pv, pb = 'vm.%s.intf.' % V, 'vm.%s.intf.' % B

        p1 = Phase(frames, t1, t2)
        wait, by_a, by_b = p1.d(pv + 'wait'), p1.d(pv + 'by.' + A), p1.d(pv + 'by.' + B)
        delay = p1.d('vm.%s.vcpu0.delay' % V)
        log('V waited %.0f ms (run delay %.0f), behind A %.0f, behind B %.0f; %s' %
            (wait / 1e6, delay / 1e6, by_a / 1e6, by_b / 1e6,
             ', '.join('%s %.0f' % (k, p1.d(pv + k) / 1e6) for k in ('vms', 'own', 'host', 'kernel', 'unknown'))))
        c.ok(wait > 2e9, 'V barely waited (%.0f ms in 10 s): the placement did not take' % (wait / 1e6))
        c.ok(by_a >= 0.8 * wait, "A's share %.1f %% < 80 %%" % (100.0 * by_a / max(wait, 1)))
        c.ok(by_b <= 0.02 * wait, "B's share %.1f %% > 2 %%" % (100.0 * by_b / max(wait, 1)))
        # the 2 % (measured since the sampler's reads were made
        # back to back: 0.5 %, 0.66 % in the stop's CI; one early run
        # measured 2.5 %)
        c.ok(abs(wait - delay) <= 0.02 * delay, 'sum rule: wait %d ns vs run delay %d ns' % (wait, delay))
        # each CPU's run queue delay (rq.N.delay): CPU 0 is where V's and
        # A's QEMUs run (vCPUs and emulator threads pinned there, the
        # host's other threads moved off): per second, the run delay of all their threads (the
        # test's reads of their schedstat at t1 and t2; the frames' window
        # is a little shorter: rates) and the little the per-CPU kernel
        # threads waited there, 10 % + 20 ms/s (measured: the emulator
        # threads wait 7 s in 10 behind the spinning vCPUs, the vCPUs 9.4)
        rq0, dt = p1.d('rq.0.delay'), (p1.f[-1]['t_mono'] - p1.f[0]['t_mono']) / 1e9
        ref = (qd2 - qd1) / ((t2 - t1) / 1e9)
        log("CPU 0's run queue delay %.0f ms/s; V's and A's QEMU threads' run delay %.0f ms/s" %
            (rq0 / dt / 1e6, ref / 1e6))
        c.ok(abs(rq0 / dt - ref) <= 0.1 * ref + 2e7,
             "CPU 0's run queue delay %.0f ms/s, V's and A's QEMU threads' run delay %.0f ms/s" %
             (rq0 / dt / 1e6, ref / 1e6))
        parts = sum(p1.last(pv + k) for k in ('vms', 'own', 'host', 'kernel', 'unknown'))
        c.ok(parts == p1.last(pv + 'wait'), 'the parts do not add up to wait')
        # the reference, over the frames' window
        win = (p1.f[0]['t_mono'], p1.f[-1]['t_mono'])
        tgid = {qemu_pid(g): g for g in (V, A, B)}
        evs = sched_ref.events(trace)
        c.ok(evs and evs[0][0] <= win[0] and evs[-1][0] >= win[1],
             "the perf sched trace does not cover the frames' window")
        ref = sched_ref.account(evs, {t: V for t in vt}, owner, tgid, tasks, window=win).get(V, {})
        rtot = sum(ref.values())
        log('perf sched reference (ms): %s' % {k: round(x / 1e6) for k, x in ref.items()})
        c.ok(rtot > 0, 'the perf sched trace has no wait of V')
        # per pair: the reference's host:CG parts are ours under host
        rpair = {}
        for k, x in ref.items():
            k = 'host' if k.startswith('host:') else k
            rpair[k] = rpair.get(k, 0) + x
        opair = {A: by_a, B: by_b}
        for k in ('own', 'host', 'kernel', 'unknown'):
            opair[k] = p1.d(pv + k)
        for k in sorted(set(opair) | set(rpair)):
            o, r = opair.get(k, 0), rpair.get(k, 0)
            log('V behind %s: ours %.1f ms, perf sched %.1f ms' % (k, o / 1e6, r / 1e6))
            c.ok(abs(o - r) <= 0.05 * max(o, r) + 0.005 * rtot,
                 'V behind %s: ours %.1f ms, perf sched %.1f ms (5 %% + 0.5 %% of its wait)' % (k, o / 1e6, r / 1e6))
        c.ok(abs(wait - rtot) <= 0.05 * rtot, 'wait: ours %.1f ms, perf sched %.1f ms' % (wait / 1e6, rtot / 1e6))
        # the estimate without BPF, pinned: A's share as the program's
        pe = 'vm.%s.intfest.' % V
        ewait, eby_a = p1.d(pe + 'wait'), p1.d(pe + 'by.' + A)
        eparts = sum(p1.last(pe + k) for k in ('vms', 'own', 'host', 'irq', 'unknown'))
        log('estimate: V waited %.0f ms, behind A %.0f (%.1f %%)' % (ewait / 1e6, eby_a / 1e6,
                                                                    100.0 * eby_a / max(ewait, 1)))
        c.ok(eparts == p1.last(pe + 'wait'), "the estimate's parts do not add up to its wait")
        c.ok(abs(ewait - delay) <= 0.02 * delay, 'estimate: wait %d ns vs run delay %d ns' % (ewait, delay))
        eshare, share = 100.0 * eby_a / max(ewait, 1), 100.0 * by_a / max(wait, 1)
        # the estimate against the program's account (measured: 85.1 against
        # 88.7 %, 77.8 against 80.6 %): the >= 80 % of the issue is the
        # program's, checked above
        c.ok(abs(eshare - share) <= 10, "A's share: estimated %.1f %%, measured %.1f %%" % (eshare, share))
        # the report (the "Done means": it names the aggressor
        # with its share), over the phase's own frames: A first among V's
        # culprits, its seconds those of the by.A column, share >= 80 %
        t0 = frames[0]['t_mono']
        win = '%.3f..%.3f' % ((p1.f[0]['t_mono'] - t0) / 1e9, (p1.f[-1]['t_mono'] - t0) / 1e9)
        rep = run(BIN, 'report', '--interference', out, '--window', win, '--format', 'csv').stdout.splitlines()
        c.ok(rep and rep[0] == 'victim,culprit,seconds,share', 'report --interference --format csv: %s' % rep[:1])
        vrows = sorted(((float(r[2]), r[1], float(r[3] or 0)) for r in (x.split(',') for x in rep[1:])
                        if r[0] == V), reverse=True)
        log('report --interference --window %s, V: %s' % (win, vrows[:3]))
        c.ok(vrows and vrows[0][1] == 'vm:' + A, "the report's top culprit of V: %s" % vrows[:1])
        c.ok(vrows and abs(vrows[0][0] * 1e9 - by_a) <= 0.01 * by_a + 1e7 and vrows[0][2] >= 0.8,
             "the report's A: %s; the columns: %.3f s, %.1f %%" % (vrows[:1], by_a / 1e9, 100.0 * by_a / max(wait, 1)))
        c.ok(p1.last('vm.%s.vcpu0.allowed' % V) == 1 and p1.last('vm.%s.vcpu0.allowed_first' % V) == 0,
             "V's placement columns (allowed, allowed_first)")

        p2 = Phase(frames, t3, t4)
        wait2, by_a2 = p2.d(pv + 'wait'), p2.d(pv + 'by.' + A)
        log('after the move: V waited %.0f ms in 8 s, behind A %.0f; %s' % (
            wait2 / 1e6, by_a2 / 1e6,
            ', '.join('%s %.0f' % (k, p2.d(pv + k) / 1e6) for k in ('vms', 'own', 'host', 'kernel', 'unknown'))))
        # falls (the issue: "V's delay falls"), to less than half: with
        # every guest on CPU 1 the host's own tasks run on CPU 0 beside V
        # (measured 480 -> 186 ms/s, none of it behind A)
        c.ok(wait2 / 8 < wait / 10 / 2, "V's wait did not fall: %.0f ms/s, was %.0f" %
             (wait2 / 8e6, wait / 10e6))
        c.ok(by_a2 <= 0.1 * max(wait2, 1) + 1e6, "A's share after the move %.1f %%" %
             (100.0 * by_a2 / max(wait2, 1)))

        p3 = Phase(frames, t4, t5)
        # culprits, not categories: each VM, the VM's own threads, each
        # named host cgroup, the kernel ("host" sums every host process:
        # the compilers of a busy machine on CPU 1 outweighed A there)
        cand = {k: p3.d(pb + k) for k in ('own', 'kernel')}
        cand.update({n[len(pb):]: p3.d(n) for n in p3.names(pb + 'host.')})
        cand.update({n[len(pb + 'by.'):]: p3.d(n) for n in p3.names(pb + 'by.')})
        log("B's account (ms): %s" % {k: round(v / 1e6) for k, v in cand.items()})
        c.ok(max(cand, key=cand.get) == A, "B's top culprit is %s, not A" % max(cand, key=cand.get))

        if t6:
            p4 = Phase(frames, t6, t7)
            w4, h4 = p4.d(pv + 'wait'), p4.d(pv + 'host')
            named = p4.d(pv + 'host.it-interference-hog')
            log('host hog: %s' % ', '.join('%s %.0f' % (k, p4.d(pv + k) / 1e6) for k in
                                            ('vms', 'own', 'host', 'kernel', 'unknown', 'host_other')))
            log('host hog: V waited %.0f ms, behind the host %.0f, behind its cgroup %.0f (host columns: %s)' %
                (w4 / 1e6, h4 / 1e6, named / 1e6, p4.names(pv + 'host')))
            c.ok(len(p4.f) >= 5, 'the frames of the hog phase: %d' % len(p4.f))
            c.ok(w4 > 1e9, 'V barely waited beside the hog (%.0f ms in 8 s)' % (w4 / 1e6))
            c.ok(h4 >= 0.8 * w4, "the host's share %.1f %% < 80 %%" % (100.0 * h4 / max(w4, 1)))
            c.ok(named >= 0.8 * w4, "the hog's cgroup's share %.1f %% < 80 %%" % (100.0 * named / max(w4, 1)))
        else:
            log('no cgroup2 mount: no host hog step')
    finally:
        iso.restore()
        if hog:
            hog.kill()
            hog.wait()
        if cg:
            try:
                os.rmdir(cg)
            except OSError:
                pass
        if s:
            s.stop()
        for g in (V, A, B):
            remove(g)
        for f in (out, trace):
            if os.path.exists(f):
                os.unlink(f)
    c.done()


if __name__ == '__main__':
    main()
