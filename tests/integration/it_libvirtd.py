#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""it_libvirtd - libvirtd absent at start, started, killed with SIGKILL
mid-run and started again, under a running sampler (binary output, 200 ms
ticks).  The guests keep running throughout (FACTS.md h).

Checked from the decoded stream:
  - host sampling never misses a tick: seq contiguous, missed_ticks 0,
    host columns (cpu.all.user, load.1m) in every frame;
  - exactly one line says per-VM statistics are unavailable, at start;
  - virt.connected 0 before libvirtd starts and during the outage, 1 in
    between and after; events LIBVIRT_LOST (start, kill) and BACK;
  - the guests appear once libvirtd is there, and come back after the
    restart under the same UUID keys, in the same columns;
  - during the outage their kernel values keep coming every frame.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from itlib import (EV, STABLE, Checks, Sampler, Stream, log, need, run, uuid_of, vmlab)

PIDFILE = '/run/vmsampler-vmlab-libvirtd.pid'


def frames_where(st, name):
    return [f for f in st.frames if name in f['v']]


def main():
    c = Checks('it_libvirtd')
    need()
    uuids = {n: uuid_of(n) for n in STABLE}
    out = '/tmp/it-libvirtd-%d.vms' % os.getpid()
    vmlab('daemon.sh', 'stop')
    s = None
    try:
        s = Sampler('-i', '200ms', '-o', out, csv=False)
        time.sleep(3)
        err = s.stderr()
        log('stderr while libvirtd is down: %r' % err)
        c.ok(err.count('\n') == 1 and 'per-VM statistics unavailable' in err and 'keeps trying' in err,
             'not one clear line: %r' % err)
        t_start = time.monotonic_ns()
        vmlab('daemon.sh', 'start')
        time.sleep(6)  # the agent retries every <= 5 s
        pid = int(open(PIDFILE).read())
        t_kill = time.monotonic_ns()
        os.kill(pid, 9)
        log('killed libvirtd %d' % pid)
        time.sleep(3)
        t_restart = time.monotonic_ns()
        vmlab('daemon.sh', 'start')
        time.sleep(7)
        c.ok(s.stop() == 0, 'vmsampler exit status')
        err = s.stderr()
        log('stderr: %r' % err)
        c.ok(err.count('per-VM statistics unavailable') == 1, 'unavailable said %d times' %
             err.count('per-VM statistics unavailable'))
    finally:
        vmlab('daemon.sh', 'start')
        if s and s.p.poll() is None:
            s.stop()

    st = Stream(out)
    fr = st.frames
    log('%d frames, %d schemas, %d events' % (len(fr), len(st.schemas), len(st.events)))
    for i, f in enumerate(fr):
        c.ok(f['seq'] == i + 1, 'seq %d at %d' % (f['seq'], i))
        c.ok(f['missed'] == 0, 'frame %d missed %d ticks' % (f['seq'], f['missed']))
        c.ok('cpu.all.user' in f['v'] and 'load.1m' in f['v'], 'frame %d lacks host columns' % f['seq'])
    conn = [(f['t_mono'], f['v'].get('virt.connected')) for f in fr]
    c.ok(all(v == 0 for t, v in conn if t < t_start), 'connected before libvirtd started')
    up1 = [t for t, v in conn if t_start < t < t_kill and v == 1]
    c.ok(up1, 'never connected after libvirtd started')
    c.ok(any(v == 0 for t, v in conn if t_kill < t < t_restart), 'no gap after the kill')
    c.ok(conn[-1][1] == 1, 'not connected at the end')
    types = [e['type'] for e in st.events]
    c.ok(types.count(EV['LIBVIRT_LOST']) == 2, 'LIBVIRT_LOST events: %d' % types.count(EV['LIBVIRT_LOST']))
    c.ok(types.count(EV['LIBVIRT_BACK']) == 2, 'LIBVIRT_BACK events: %d' % types.count(EV['LIBVIRT_BACK']))
    for name in STABLE:
        col = 'vm.%s.cpu_time' % name
        have = frames_where(st, col)
        c.ok(have, '%s never appeared' % name)
        # the same UUID key in every generation that has it
        for g, cols in st.schemas.items():
            k = st.key_of(g, col)
            if k is not None:
                c.ok(k.lower() == uuids[name].lower(), '%s key %s != %s' % (name, k, uuids[name]))
        # from its first frame on, every frame has its kernel values,
        # also while libvirtd is down
        first = fr.index(have[0])
        for f in fr[first:]:
            c.ok(col in f['v'] and 'vm.%s.vcpu0.delay' % name in f['v'], '%s missing in frame %d (t=%d)' %
                 (name, f['seq'], f['t_mono']))
        gap = [f for f in fr[first:] if f['v'].get('virt.connected') == 0]
        c.ok(len(gap) >= 5, 'the outage lasted only %d frames' % len(gap))
    # the same columns after the restart: no new generation for it
    gens = [f['gen'] for f in fr if f['t_mono'] > t_kill]
    log('generations after the kill: %s' % sorted(set(gens)))
    c.ok(len(set(gens)) == 1, 'the restart changed the columns: generations %s' % sorted(set(gens)))
    os.unlink(out)
    c.done()


if __name__ == '__main__':
    main()
