#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""dirtyrate_testdrv - sources.libvirt.dirty_rate_every through the real
agent and libvirt's test driver (test:///default, no daemon; runs wherever
the build has libvirt).  The reference is the agent's own libvirt API trace
(LIBVIRT_LOG_FILTERS=1:libvirt, the library's entry points):
  - key off: the read-only connection only (virConnectOpenReadOnly, no
    virConnectOpen), no virDomainStartDirtyRateCalc, no dirtyrate column;
  - key on (2 s): one read-write connection (virConnectOpen), calculations
    started (the test driver has none: "not supported"), which the agent
    says in one line, once; the dirtyrate columns are there and empty
    (never 0), and the domain's other columns go on.
The real calculation against QEMU: it_dirtyrate (integration).
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from itlib import BIN, Checks, Stream, log

COLS = ['calc_status', 'calc_start_time', 'calc_period', 'megabytes_per_second']


def run_sampler(tmp, tag, extra, seconds):
    cfg = os.path.join(tmp, tag + '.yaml')
    out = os.path.join(tmp, tag + '.vms')
    lg = os.path.join(tmp, tag + '.log')
    open(cfg, 'w').write('sources:\n  libvirt:\n    uri: "test:///default"\n' + extra)
    env = dict(os.environ, LIBVIRT_LOG_FILTERS='1:libvirt 4:*', LIBVIRT_LOG_OUTPUTS='1:file:' + lg)
    env.pop('LIBVIRT_DEFAULT_URI', None)
    p = subprocess.Popen([BIN, '-c', cfg, '-i', '250ms', '-o', out], env=env, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(seconds)
        p.send_signal(signal.SIGINT)
        err = p.communicate(timeout=30)[1]
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    trace = open(lg, errors='replace').read() if os.path.exists(lg) else ''
    return p.returncode, err, Stream(out), trace


def calls(trace, name):
    # the entry's trace line (an error line names the function too)
    return sum(1 for l in trace.splitlines() if ' debug : %s:' % name in l)


def main():
    c = Checks('dirtyrate_testdrv')
    with tempfile.TemporaryDirectory() as tmp:
        rc, err, st, trace = run_sampler(tmp, 'off', '', 2)
        names = {col['name'] for cols in st.schemas.values() for col in cols}
        c.ok(rc == 0, 'off: exit %d: %s' % (rc, err))
        c.ok(calls(trace, 'virConnectOpenReadOnly') == 1, 'off: no read-only connection in the trace: '
             'the reference is missing')
        c.ok(calls(trace, 'virConnectOpen') == 0, 'off: a read-write connection')
        c.ok(calls(trace, 'virDomainStartDirtyRateCalc') == 0, 'off: a calculation started')
        c.ok('vm.test.state' in names and not any('dirtyrate' in n for n in names), 'off: no VM, or dirtyrate columns')
        c.ok('dirty' not in err, 'off: %s' % err)

        rc, err, st, trace = run_sampler(tmp, 'on', '    dirty_rate_every: 2s\n', 3)
        names = {col['name'] for cols in st.schemas.values() for col in cols}
        log('on: stderr %r' % err)
        c.ok(rc == 0, 'on: exit %d: %s' % (rc, err))
        c.ok(calls(trace, 'virConnectOpen') == 1, 'on: %d read-write connections' % calls(trace, 'virConnectOpen'))
        n = calls(trace, 'virDomainStartDirtyRateCalc')
        c.ok(1 <= n <= 2, 'on: %d calculations started in 3 s at 2 s' % n)
        lines = [l for l in err.splitlines() if 'dirty-rate' in l]
        c.ok(len(lines) == 1 and 'not supported' in lines[0] and ' test ' in lines[0],
             'on: not one line naming why: %r' % err)
        cols = ['vm.test.dirtyrate.' + k for k in COLS]
        c.ok(all(k in names for k in cols), 'on: columns %s' % sorted(n for n in names if 'dirty' in n))
        vm = [f for f in st.frames if 'vm.test.state' in f['v']]
        c.ok(len(vm) >= 8 and all(f['v']['vm.test.state'] == 1 for f in vm), 'on: the domain not sampled on')
        c.ok(not any(k in f['v'] for f in st.frames for k in cols), 'on: a dirty-rate value without a result')
    c.done()


if __name__ == '__main__':
    main()
