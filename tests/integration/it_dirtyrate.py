#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""it_dirtyrate - dirty-page-rate sampling (sources.libvirt.dirty_rate_every)
against a private libvirtd (tests/vmlab/migd.sh, as it_migrate) and one TCG
guest without disk or network (vms.load=busy: its memory keeps changing).

Two vmsamplers in turn (binary output, 200 ms ticks), each with the agent's
libvirt API trace (LIBVIRT_LOG_FILTERS) in a file of its own:
  - key off: the agent opens its read-only connection only (no
    virConnectOpen), starts no calculation (no virDomainStartDirtyRateCalc),
    and the stream has no dirtyrate column;
  - key on (every EVERY s, SECONDS s): one read-write connection; each
    frame's vm.NAME.dirtyrate.* values are those of `virsh domstats
    --dirtyrate` polled meanwhile for the same calculation (same
    calc_start_time): megabytes_per_second, calc_period, calc_status 2;
    calculations come at the configured cadence (start times EVERY apart,
    give or take a tick and libvirt's whole seconds), as many as the
    agent's virDomainStartDirtyRateCalc calls, and never a 0 written for a
    value not read (the columns are empty between results).
Cost (logged, in README): the agent's and libvirtd's CPU per second with the
key on (a third sampler, without the virsh poller) minus with it off, per
calculation; on a daemon's read-only socket the refusal is one line and the
rest runs.
Everything started here is taken down whatever fails.
"""
import atexit
import os
import re
import shutil
import signal
import sys
import threading
import time
import uuid as uuidmod

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import it_migrate
from it_migrate import virsh
from itlib import Checks, Sampler, Stream, log, need, run, schedstat_sum, skip_or_fail

NAME = 'vms-dirty'
EVERY = 3
SECONDS = 1
PHASE = 15        # seconds of each sampler's measured window
MIGD = it_migrate.MIGD


def guest_xml():
    """it_migrate's guest (no disk, no interface, a pty console), ours by
    name, busy (its memory keeps changing)."""
    x = it_migrate.guest_xml().replace(it_migrate.NAME, NAME)
    assert 'vms.load=idle' in x
    return x.replace('vms.load=idle', 'vms.load=busy')


def api_calls(path, name):
    """Lines of the libvirt API trace that enter `name`."""
    if not os.path.exists(path):
        return []
    # the entry's trace line (an error line names the function too)
    return [l for l in open(path, errors='replace') if ' debug : %s:' % name in l]


class Poller:
    """virsh domstats --dirtyrate every 0.25 s: calc_start_time -> values
    of each measured calculation (the reference)."""

    def __init__(self, uri):
        self.uri = uri
        self.calcs = {}
        self.stop_ = False
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while not self.stop_:
            r = virsh(self.uri, 'domstats', '--dirtyrate', NAME, check=False)
            d = dict(re.findall(r'dirtyrate\.(\w+)=(\S+)', r.stdout))
            if d.get('calc_status') == '2' and 'calc_start_time' in d:
                self.calcs[int(d['calc_start_time'])] = d
            time.sleep(0.25)

    def stop(self):
        self.stop_ = True
        self.t.join(timeout=30)


def main():
    c = Checks('it_dirtyrate')
    need(guests=False, daemon=False)
    if run('sh', '-c', 'command -v unshare && test -x /usr/sbin/libvirtd', check=False).returncode:
        skip_or_fail('unshare or libvirtd missing (util-linux, tests/vmlab/setup.sh)')
    tmp = '/tmp/it-dirtyrate-%d' % os.getpid()
    d = os.path.join(tmp, 'd')
    samplers = []
    pollers = []

    def teardown():
        for p in pollers:
            p.stop()
        for s in samplers:
            try:
                s.stop()
            except Exception:  # noqa: BLE001 - already gone; go on tearing down
                pass
        run('bash', MIGD, 'stop', d, check=False)
        shutil.rmtree(tmp, ignore_errors=True)
    atexit.register(teardown)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    os.makedirs(tmp)

    t0 = time.monotonic()
    uri, lvd_pid = run('bash', MIGD, 'start', d, 'vmsdirty', str(uuidmod.uuid4())).stdout.split()
    lvd_pid = int(lvd_pid)
    xml = os.path.join(tmp, 'g.xml')
    open(xml, 'w').write(guest_xml())
    virsh(uri, 'create', xml)
    uuid = virsh(uri, 'domuuid', NAME).stdout.strip()
    qemu_pid = int(open(os.path.join(d, 'run', 'qemu', NAME + '.pid')).read())
    time.sleep(2)  # past the first instants of the boot

    def sample(tag, config, uri=uri, phase=PHASE):
        lg = os.path.join(tmp, 'libvirt-%s.log' % tag)
        out = os.path.join(tmp, 'out-%s.vms' % tag)
        os.environ['LIBVIRT_LOG_FILTERS'] = '1:libvirt 4:*'
        os.environ['LIBVIRT_LOG_OUTPUTS'] = '1:file:' + lg
        s = Sampler('-i', '200ms', '-o', out, csv=False, tmpdir=tmp,
                    config='sources:\n  libvirt:\n    uri: "%s"\n%s' % (uri, config))
        del os.environ['LIBVIRT_LOG_FILTERS'], os.environ['LIBVIRT_LOG_OUTPUTS']
        samplers.append(s)
        time.sleep(1.5)  # connected, listed
        agent = s.agent_pid()
        c.ok(agent is not None, '%s: no agent' % tag)
        w0 = time.monotonic()
        # CPU time of every thread (schedstat: /proc/PID/stat's 10 ms
        # ticks are too coarse for a 15 s window)
        cpu0 = [schedstat_sum(p, 0) for p in (agent, lvd_pid, qemu_pid)]
        time.sleep(phase)
        cpu1 = [schedstat_sum(p, 0) for p in (agent, lvd_pid, qemu_pid)]
        w1 = time.monotonic()
        c.ok(s.stop() == 0, '%s: vmsampler exit status' % tag)
        samplers.remove(s)
        rates = [(b - a) / (w1 - w0) for a, b in zip(cpu0, cpu1)]  # ns of CPU per s
        log('%s: CPU ms/s agent %.3f, libvirtd %.3f, qemu %.1f' % (tag, *[r / 1e6 for r in rates]))
        return lg, out, rates, s.stderr()

    # ---- off: no read-write connection, no calculation, no column ----
    lg, out, off, err = sample('off', '')
    c.ok(api_calls(lg, 'virConnectOpenReadOnly'), 'off: no read-only connection in the agent\'s trace: '
         'the reference is missing')
    c.ok(not api_calls(lg, 'virConnectOpen'), 'off: a read-write connection was opened')
    c.ok(not api_calls(lg, 'virDomainStartDirtyRateCalc'), 'off: a calculation was started')
    st = Stream(out)
    names = {col['name'] for cols in st.schemas.values() for col in cols}
    c.ok('vm.%s.state' % NAME in names and not any('.dirtyrate.' in n for n in names),
         'off: columns %s' % sorted(n for n in names if NAME in n)[:8])

    # ---- on ----
    p = Poller(uri)
    pollers.append(p)
    lg, out, on, err = sample('on', '    dirty_rate_every: %ds\n    dirty_rate_seconds: %ds\n' % (EVERY, SECONDS))
    time.sleep(0.5)
    p.stop()
    log('agent stderr: %r' % err)
    c.ok('dirty-rate' not in err, 'on: the agent complained: %s' % err)
    opens = api_calls(lg, 'virConnectOpen')
    starts = api_calls(lg, 'virDomainStartDirtyRateCalc')
    c.ok(len(opens) == 1, 'on: %d read-write connections' % len(opens))
    st = Stream(out)
    pre = 'vm.%s.dirtyrate.' % NAME
    keys = {col['name']: col['key'] for cols in st.schemas.values() for col in cols}
    c.ok(keys.get(pre + 'megabytes_per_second') == uuid, 'on: dirtyrate columns not under the UUID key')
    got = [f for f in st.frames if pre + 'calc_start_time' in f['v']]
    empty = [f for f in st.frames if 'vm.%s.state' % NAME in f['v'] and pre + 'calc_start_time' not in f['v']]
    log('on: %d frames, %d with a result, %d calculations started, %d measured by virsh' %
        (len(st.frames), len(got), len(starts), len(p.calcs)))
    c.ok(all(not any(k.startswith(pre) for k in f['v']) for f in empty), 'on: a partial result')
    # at least the results of the calculations the window held
    c.ok(len(got) >= PHASE // EVERY - 1, 'on: only %d results in %d s at %d s' % (len(got), PHASE, EVERY))
    c.ok(len(got) in (len(starts), len(starts) - 1), 'on: %d results of %d calculations' % (len(got), len(starts)))
    starts_t = [f['v'][pre + 'calc_start_time'] for f in got]
    c.ok(len(set(starts_t)) == len(starts_t), 'on: a result written twice: %s' % starts_t)
    gaps = [b - a for a, b in zip(starts_t, starts_t[1:])]
    log('on: calc_start_time gaps %s s' % gaps)
    c.ok(all(EVERY - 1 <= g <= EVERY + 1 for g in gaps), 'on: cadence %s, not every %d s' % (gaps, EVERY))
    matched = 0
    for f in got:
        v = {k[len(pre):]: x for k, x in f['v'].items() if k.startswith(pre)}
        ref = p.calcs.get(v['calc_start_time'])
        if ref is None:
            continue  # virsh did not see this one (the last, after it stopped)
        matched += 1
        c.ok(v.get('megabytes_per_second') == int(ref['megabytes_per_second']),
             'frame %d: %s MiB/s, virsh %s (calc_start_time %d)' %
             (f['seq'], v.get('megabytes_per_second'), ref['megabytes_per_second'], v['calc_start_time']))
        c.ok(v.get('calc_period') == int(ref['calc_period']) == SECONDS, 'frame %d: period %s, virsh %s' %
             (f['seq'], v.get('calc_period'), ref['calc_period']))
        c.ok(v.get('calc_status') == 2, 'frame %d: status %s' % (f['seq'], v.get('calc_status')))
        # calc_start_time is QEMU's CLOCK_MONOTONIC in whole seconds, the
        # frames' t_mono too: written after the calculation ended, within
        # a few ticks (read SECONDS + 0.25 s after the start)
        end = (v['calc_start_time'] + SECONDS) * 10**9
        c.ok(end <= f['t_mono'] <= end + 3 * 10**9, 'frame %d: t_mono %d, calculation %d..%d s' %
             (f['seq'], f['t_mono'], v['calc_start_time'], v['calc_start_time'] + SECONDS))
    log('on: %d results equal to virsh domstats --dirtyrate: %s' %
        (matched, [(f['v'][pre + 'calc_start_time'], f['v'][pre + 'megabytes_per_second']) for f in got]))
    c.ok(matched >= len(got) - 1 and matched >= 2, 'on: only %d of %d results seen by virsh' % (matched, len(got)))

    # ---- refused: the daemon's read-only socket (libvirtd makes every
    # client there read-only, whatever it asks): one line, the rest runs ----
    ro_uri = uri.replace('/libvirt-sock', '/libvirt-sock-ro')
    lg, out, _, err = sample('refused', '    dirty_rate_every: 2s\n', uri=ro_uri, phase=5)
    lines = [l for l in err.splitlines() if 'dirty-rate' in l]
    log('refused: agent stderr %r' % err)
    c.ok(len(lines) == 1 and ('read only' in lines[0] or 'read-only' in lines[0]),
         'refused: not one line naming why: %r' % err)
    st = Stream(out)
    c.ok(sum(1 for f in st.frames if f['v'].get('vm.%s.state' % NAME) == 1) >= 20,
         'refused: the VM not sampled')
    c.ok(not any(k.startswith(pre) for f in st.frames for k in f['v']), 'refused: dirty-rate values')

    # ---- cost per calculation: key on without the virsh poller (its
    # domstats calls are libvirtd's work too), against key off ----
    lg, out, on, err = sample('cost', '    dirty_rate_every: %ds\n    dirty_rate_seconds: %ds\n' % (EVERY, SECONDS))
    n = len(api_calls(lg, 'virDomainStartDirtyRateCalc'))
    c.ok(n >= PHASE // EVERY, 'cost: only %d calculations' % n)
    # the calculations started within the measured window: all but those
    # of the first 1.5 s (at most one)
    n = max(n - 1, 1)
    per = [(b - a) * PHASE / n / 1e6 for a, b in zip(off, on)]
    log('cost per calculation (%d in %d s, %d s each, CPU/s with the key on minus off, times %d s / %d): '
        'agent %.3f ms CPU, libvirtd %.3f ms; QEMU %.0f against %.0f ms/s (its busy vCPU saturated: '
        'not a measure)' % (n, PHASE, SECONDS, PHASE, n, per[0], per[1], on[2] / 1e6, off[2] / 1e6))
    log('took %.1f s' % (time.monotonic() - t0))
    c.done()


if __name__ == '__main__':
    main()
