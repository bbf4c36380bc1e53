#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""it_mem - a guest whose memory group is squeezed (issue 14): its cgroup's
memory limit, major faults and memory pressure, and the host's memory
pressure and paging, against the files read by the test.

This host (tests/vmlab/FACTS.md a) binds the memory controller to cgroup
v1 and leaves cgroup2 without controllers: a VM has no memory.high and no
memory.events here (those cgroup2 files are tested on a real fixture,
tests/fixtures/vm/v2-pcp-system-slice, in test_vm_files), and squeezing
QEMU's own memory below what it uses would make the OOM killer take the
guest (no swap here: its anonymous memory cannot go anywhere).  So the
squeeze is the one a co-located process meets inside the VM's groups:
a transient guest (vms-954) gets a v1 memory.limit_in_bytes 64 MiB above
its usage, and a reader of a 256 MiB file that the test places in the
VM's own groups (v1 memory, and the cgroup2 group whose memory.pressure
vmsampler reads) pages it in and out of that limit without end: reclaim
inside the limit (a memory stall, PSI), and major faults on each page it
touches again.  QEMU's anonymous memory stays below the limit.

The sampler runs at 1 s for 26 frames (CSV on stdout, defaults: the VM's
memory breakdown, events and pressure every sources.libvirt.detail_interval,
5 s, i.e. every 5th frame).  Then:
  - vm.N.cg.mem_max (a limit: every frame) equals the limit read back from
    memory.limit_in_bytes in every frame;
  - the detail columns (vm.N.cg.anon, file, pgmajfault, ev_oom_kill,
    psi.*) are all there or all empty in a frame, there in every 5th
    frame exactly (the cadence), never 0 for missing: in those frames
    vm.N.cg.ev_oom_kill is the group's memory.oom_control oom_kill (v1)
    and anon + file stays under the limit;
  - vm.N.cg.pgmajfault (memory.stat total_pgmajfault),
    vm.N.cg.psi.memory.some.total and .full.total (the VM's cgroup2
    memory.pressure) and the host's psi.memory.some.total
    (/proc/pressure/memory) and vmstat.pgmajfault (/proc/vmstat) are
    between the test's own readings of those files taken before the
    frame's reads began and after they ended (it_compare's bracket), in
    3 rounds of frames that have the VM's detail;
  - the VM's pgmajfault and memory pressure, and the host's memory
    pressure, rise over the run.
The guest, the reader and the file are removed whatever happens.
"""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from itlib import (Checks, Sampler, log, need, qemu_pid, read_keyed, remove, transient, vm_groups)

MiB = 1 << 20

# The reader: maps the file and touches one byte per page, forever.  Run
# with python3 -c; started stopped (SIGSTOP by itself) so that the test can
# move it into the VM's groups before it charges a page anywhere else.
READER = r'''
import mmap, os, signal, sys
os.kill(os.getpid(), signal.SIGSTOP)
f = open(sys.argv[1], 'rb')
m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
n = len(m)
while True:
    for o in range(0, n, 4096):
        m[o]
'''


def psi(path):
    """{'some': total, 'full': total} of a pressure file, in µs."""
    d = {}
    for line in open(path):
        w = line.split()
        d[w[0]] = int(w[-1].split('=')[1])
    return d


def readings(v2, mem):
    """The counters the frames are checked against, in one pass."""
    vm_psi = psi(v2 + '/memory.pressure')
    host_psi = psi('/proc/pressure/memory')
    return {
        'cg.pgmajfault': read_keyed(mem + '/memory.stat')['total_pgmajfault'],
        'cg.psi.memory.some.total': vm_psi['some'],
        'cg.psi.memory.full.total': vm_psi['full'],
        'host:psi.memory.some.total': host_psi['some'],
        'host:vmstat.pgmajfault': read_keyed('/proc/vmstat')['pgmajfault'],
    }


def main():
    c = Checks('it_mem')
    need()
    if not os.path.exists('/proc/pressure/memory'):
        c.ok(False, 'this kernel has no PSI (/proc/pressure/memory)')
        c.done()
    guest = transient(954, load='light')
    big = '/var/tmp/it-mem-%d.bin' % os.getpid()
    reader = s = None
    try:
        pid = qemu_pid(guest)
        v2, mem = vm_groups(pid, 'memory')
        c.ok(v2 and mem, 'groups of %s: cgroup2 %s, v1 memory %s' % (guest, v2, mem))
        c.ok(os.path.exists(v2 + '/memory.pressure'), 'no memory.pressure in ' + v2)
        # the file, written and flushed from the page cache of the test's group
        with open(big, 'wb') as f:
            for _ in range(256):
                f.write(os.urandom(MiB))
            f.flush()
            os.fsync(f.fileno())
            os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        usage = int(open(mem + '/memory.usage_in_bytes').read())
        limit = (usage + 64 * MiB) // 4096 * 4096
        with open(mem + '/memory.limit_in_bytes', 'w') as f:
            f.write(str(limit))
        got = int(open(mem + '/memory.limit_in_bytes').read())
        c.ok(got == limit, 'memory.limit_in_bytes %d, wrote %d' % (got, limit))
        log('%s: usage %.1f MiB, limit %.1f MiB' % (guest, usage / MiB, limit / MiB))
        reader = subprocess.Popen([sys.executable, '-c', READER, big])
        # wait until it has stopped itself, then move it, then let it run
        for _ in range(500):
            if open('/proc/%d/stat' % reader.pid).read().rsplit(')', 1)[1].split()[0] == 'T':
                break
            time.sleep(0.01)
        for d in (mem, v2):
            with open(d + '/cgroup.procs', 'w') as f:
                f.write(str(reader.pid))
        os.kill(reader.pid, signal.SIGCONT)
        time.sleep(2)  # the reader has filled the limit: the squeeze is on
        c.ok(reader.poll() is None, 'the reader died: %s' % reader.returncode)
        first = readings(v2, mem)
        pre = 'vm.%s.' % guest
        s = Sampler('-i', '1s', '-n', '26', '-o', '-')
        s.wait_rows(2)
        detail = ('cg.anon', 'cg.file', 'cg.pgmajfault', 'cg.psi.memory.some.total',
                  'cg.psi.memory.full.total', 'cg.psi.cpu.some.total', 'cg.psi.io.some.total')
        rounds = 0
        for _ in range(22):
            before = readings(v2, mem)
            t0 = time.monotonic_ns()
            n = len(s.snapshot())
            s.wait_rows(n + 1)
            row = s.snapshot()[n]
            after = readings(v2, mem)
            if int(row[s.col['t_mono_ns']]) < t0 or s.value(row, pre + 'cg.anon') is None:
                continue  # began before our reading, or not a detail frame: next
            rounds += 1
            for k in before:
                col = k[5:] if k.startswith('host:') else pre + k
                v = s.value(row, col)
                c.ok(v is not None and before[k] <= v <= after[k],
                     '%s %s not between %d and %d' % (col, v, before[k], after[k]))
            if rounds == 3:
                break
        c.ok(rounds == 3, 'only %d bracketed rounds' % rounds)
        s.wait_rows(26, timeout=40)
        rows = s.snapshot()
        oom = read_keyed(mem + '/memory.oom_control')
        have = []
        for i, row in enumerate(rows):
            c.ok(s.value(row, pre + 'cg.mem_max') == limit, 'cg.mem_max %s, limit %d' % (s.value(row, pre + 'cg.mem_max'), limit))
            there = [s.value(row, pre + k) is not None for k in detail]
            c.ok(all(there) or not any(there), 'frame %d: detail columns partly there: %s' % (i, there))
            if not there[0]:
                continue
            have.append(i)
            anon, file_ = s.value(row, pre + 'cg.anon'), s.value(row, pre + 'cg.file')
            c.ok(anon + file_ <= limit, 'cg.anon %s + cg.file %s above the limit %d' % (anon, file_, limit))
            if 'oom_kill' in oom:
                c.ok(s.value(row, pre + 'cg.ev_oom_kill') == oom['oom_kill'], 'cg.ev_oom_kill')
        gaps = [b - a for a, b in zip(have, have[1:])]
        log('detail in frames %s' % have)
        c.ok(len(have) >= 5 and set(gaps) == {5}, 'detail frames %s: not every 5th' % have)
        rows = [rows[i] for i in have]
        last = readings(v2, mem)
        for k in ('cg.pgmajfault', 'cg.psi.memory.some.total', 'host:psi.memory.some.total'):
            col = k[5:] if k.startswith('host:') else pre + k
            a, b = s.value(rows[0], col), s.value(rows[-1], col)
            c.ok(a is not None and b is not None and b > a, '%s did not rise over the run (%s -> %s)' % (col, a, b))
        log('over the run: VM major faults %d, VM memory some %.3f s, full %.3f s, host some %.3f s' % (
            last['cg.pgmajfault'] - first['cg.pgmajfault'],
            (last['cg.psi.memory.some.total'] - first['cg.psi.memory.some.total']) / 1e6,
            (last['cg.psi.memory.full.total'] - first['cg.psi.memory.full.total']) / 1e6,
            (last['host:psi.memory.some.total'] - first['host:psi.memory.some.total']) / 1e6))
        c.ok(s.stop() == 0, 'vmsampler exit: ' + s.stderr())
    finally:
        if s:
            s.stop()
        if reader:
            reader.kill()
            reader.wait()
        remove(guest)
        if os.path.exists(big):
            os.unlink(big)
    c.done()


if __name__ == '__main__':
    main()
