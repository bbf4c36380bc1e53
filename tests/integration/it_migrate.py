#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""it_migrate - a real live migration between two libvirt daemons on this
machine (tests/vmlab/MIGRATION.md): two private libvirtds (migd.sh: own
mount and UTS namespaces, own hostname and host UUID), a TCG guest
without disk or network defined and started on the source, one
vmsampler (binary output, 200 ms ticks) per daemon, then
`virsh migrate --live` over tcp://127.0.0.1 at a bandwidth cap that makes
it last ~15 s, with `virsh domjobinfo --rawstats` taken meanwhile; before
it, one migration aborted (`virsh domjobabort`) after 16 MiB.

Checked from the decoded streams:
  - no migration job, no call: the source agent's libvirt log (the
    library's own API trace, LIBVIRT_LOG_FILTERS) has no
    virDomainGetJobStats before the first migration starts, between the
    aborted one and the real one, after the real one ended, nor on the
    destination; during each, about one per tick (fewer on a loaded host:
    the agent runs at nice 10);
  - the aborted one: job values in the source's frames during it only, the
    VM running at the source after it;
  - the source frames' vm.NAME.migration.* values lie between two
    domjobinfo readings bracketing them on the job's own clock
    (time_elapsed): processed counters and iteration between, remaining
    between (reversed), totals, page size and setup time equal;
  - the source's last frame of the VM: state shut off (migrated), job 3
    (completed) and the final statistics equal to
    `virsh domjobinfo --completed` on the source; a VM_MIGRATED_OUT event
    under the VM's UUID;
  - the destination: a VM_MIGRATED_IN event for each migration (the
    aborted one's incoming domain was started, then destroyed) and the
    VM's columns under the same UUID, running, without migration columns.
Everything started here is taken down whatever fails.
"""
import atexit
import calendar
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid as uuidmod

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from itlib import EV, VMLAB, Checks, Sampler, Stream, log, need, run, skip_or_fail

NAME = 'vms-mig'
BW = 8            # MiB/s: ~15 s for the guest's 128 MiB
TICK_NS = 200 * 10**6
G = '/var/lib/vmsampler-vmlab/guest'
MIGD = os.path.join(VMLAB, 'migd.sh')


def guest_xml():
    # no disk (nothing to share between the hosts), no interface (no shared
    # bridge), a pty console: nothing the other side would have to open
    return '''<domain type='qemu'>
  <name>%s</name>
  <memory unit='MiB'>128</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type>
    <kernel>%s/vmlinuz</kernel><initrd>%s/initrd.img</initrd>
    <cmdline>console=ttyS0 panic=-1 no_timer_check quiet vms.name=%s vms.load=idle</cmdline></os>
  <features><acpi/><tcg><tb-cache unit='MiB'>32</tb-cache></tcg></features>
  <on_poweroff>destroy</on_poweroff><on_reboot>destroy</on_reboot><on_crash>destroy</on_crash>
  <devices><emulator>/usr/bin/qemu-system-x86_64</emulator>
    <controller type='usb' model='none'/>
    <serial type='pty'><target port='0'/></serial>
    <memballoon model='none'/>
  </devices>
</domain>
''' % (NAME, G, G, NAME)


def virsh(uri, *args, check=True, timeout=120):
    return run('virsh', '-q', '-c', uri, *args, check=check, timeout=timeout)


def rawstats(uri, *flags):
    """virsh domjobinfo --rawstats as a dict of ints (None: no job)."""
    r = virsh(uri, 'domjobinfo', '--rawstats', *flags, NAME, check=False)
    d = {}
    for line in r.stdout.splitlines():  # "Job type: 2", then "field: value"
        m = re.match(r'\s*(Job type|\w+): (-?\d+)\s*$', line)
        if m:
            d['type' if m.group(1) == 'Job type' else m.group(1)] = int(m.group(2))
    return d


def jobstats_calls(path):
    """Wall-clock ms of each virDomainGetJobStats entry in a libvirt log."""
    out = []
    if not os.path.exists(path):
        return out
    for line in open(path, errors='replace'):
        if ': virDomainGetJobStats:' in line and ' dom=' in line:
            t = time.strptime(line[:19], '%Y-%m-%d %H:%M:%S')
            ms = int(line[20:23])
            out.append(calendar.timegm(t) * 1000 + ms)  # libvirt logs in UTC
    return out


FIELDS = ['time_elapsed', 'data_total', 'data_processed', 'data_remaining', 'memory_total',
          'memory_processed', 'memory_remaining', 'memory_iteration', 'memory_page_size',
          'memory_constant', 'memory_normal', 'memory_normal_bytes', 'setup_time']


def main():
    c = Checks('it_migrate')
    need(guests=False, daemon=False)
    if run('sh', '-c', 'command -v unshare && test -x /usr/sbin/libvirtd', check=False).returncode:
        skip_or_fail('unshare or libvirtd missing (util-linux, tests/vmlab/setup.sh)')
    tmp = '/tmp/it-migrate-%d' % os.getpid()
    dirs = [os.path.join(tmp, 'a'), os.path.join(tmp, 'b')]
    samplers = []

    def teardown():
        for s in samplers:
            try:
                s.stop()
            except Exception:  # noqa: BLE001 - already gone; go on tearing down
                pass
        for d in dirs:
            run('bash', MIGD, 'stop', d, check=False)
        shutil.rmtree(tmp, ignore_errors=True)
    atexit.register(teardown)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    os.makedirs(tmp)

    t0 = time.monotonic()
    uris = []
    for d, tag in zip(dirs, 'ab'):
        out = run('bash', MIGD, 'start', d, 'vmsmig-' + tag, str(uuidmod.uuid4())).stdout.split()
        uris.append(out[0])
    src, dst = uris
    c.ok(virsh(src, 'hostname').stdout.strip() == 'vmsmig-a' and virsh(dst, 'hostname').stdout.strip() == 'vmsmig-b',
         'the daemons do not have hostnames of their own')
    xml = os.path.join(tmp, 'g.xml')
    open(xml, 'w').write(guest_xml())
    # defined on the source: its completed job statistics stay readable
    virsh(src, 'define', xml)
    virsh(src, 'start', NAME)
    uuid = virsh(src, 'domuuid', NAME).stdout.strip()

    lvlog = [os.path.join(tmp, 'libvirt-%s.log' % t) for t in 'ab']
    outs = [os.path.join(tmp, 'out-%s.vms' % t) for t in 'ab']
    for uri, lg, out, d in zip(uris, lvlog, outs, dirs):
        os.environ['LIBVIRT_LOG_FILTERS'] = '1:libvirt 4:*'
        os.environ['LIBVIRT_LOG_OUTPUTS'] = '1:file:' + lg
        samplers.append(Sampler('-i', '200ms', '-o', out, csv=False, tmpdir=d,
                                config='sources:\n  libvirt:\n    uri: "%s"\n' % uri))
    del os.environ['LIBVIRT_LOG_FILTERS'], os.environ['LIBVIRT_LOG_OUTPUTS']
    time.sleep(3)  # 15 ticks without a migration

    # a migration aborted midway: the job ends, the calls end with it, the
    # VM runs on at the source
    t_ab0 = int(time.time() * 1000)
    mig = subprocess.Popen(['virsh', '-q', '-c', src, 'migrate', '--live', '--bandwidth', str(BW), NAME, dst,
                            'tcp://127.0.0.1'], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    end = time.time() + 30
    while rawstats(src).get('memory_processed', 0) < 16 << 20 and time.time() < end and mig.poll() is None:
        time.sleep(0.2)
    virsh(src, 'domjobabort', NAME)
    ab_out = mig.communicate(timeout=60)[0]
    t_ab1 = int(time.time() * 1000)
    log('aborted after %.1f s: %s' % ((t_ab1 - t_ab0) / 1000, ab_out.strip()))
    c.ok(mig.returncode != 0, 'the aborted migration succeeded')
    c.ok(virsh(src, 'domstate', NAME).stdout.strip() == 'running', 'not running at the source after the abort')
    time.sleep(3)  # 15 ticks after it

    log('migrating %s (%s) at %d MiB/s' % (NAME, uuid, BW))
    t_mig = int(time.time() * 1000)
    mig = subprocess.Popen(['virsh', '-q', '-c', src, 'migrate', '--live', '--bandwidth', str(BW), NAME, dst,
                            'tcp://127.0.0.1'], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    refs = []
    while mig.poll() is None:
        r = rawstats(src)
        # QEMU's RAM statistics come once the setup ended
        if r.get('type') == 2 and all(k in r for k in FIELDS):
            refs.append(r)
        time.sleep(0.3)
    mig_out = mig.communicate()[0]
    t_end = int(time.time() * 1000)
    c.ok(mig.returncode == 0, 'virsh migrate: exit %d: %s' % (mig.returncode, mig_out))
    log('migration took %.1f s, %d domjobinfo readings' % ((t_end - t_mig) / 1000, len(refs)))
    c.ok(len(refs) >= 5, 'only %d domjobinfo readings during the migration' % len(refs))
    final = rawstats(src, '--completed', '--keep-completed')
    c.ok(final.get('type') == 3, 'no completed job on the source: %s' % final)
    time.sleep(4)  # the destination's frames with the VM; the source's idle ticks after
    for s in samplers:
        c.ok(s.stop() == 0, 'vmsampler exit status')
    t_stop = int(time.time() * 1000)

    # ---- zero cost without a job ----
    calls = jobstats_calls(lvlog[0])
    before = [t for t in calls if t < t_ab0]
    aborted = [t for t in calls if t_ab0 <= t <= t_ab1]
    before += [t for t in calls if t_ab1 + 1000 < t < t_mig]
    during = [t for t in calls if t_mig <= t <= t_end]
    log('during the aborted migration (%d ms): %d calls' % (t_ab1 - t_ab0, len(aborted)))
    c.ok(len(aborted) >= 2, 'only %d calls during the aborted migration' % len(aborted))
    after = [t for t in calls if t > t_end + 1000]
    log('source virDomainGetJobStats calls: %d before, %d during, %d after; destination: %d' %
        (len(before), len(during), len(after), len(jobstats_calls(lvlog[1]))))
    c.ok(os.path.getsize(lvlog[0]) > 0 and 'virConnectGetAllDomainStats' in open(lvlog[0]).read(),
         'the agent\'s libvirt log is empty: the reference is missing')
    c.ok(not before and not after, 'job statistics asked without a job: %d before, %d after' % (len(before), len(after)))
    c.ok(len(during) >= (t_end - t_mig) / 1000 * 5 / 2, 'only %d calls in %d ms of migration' % (len(during), t_end - t_mig))
    c.ok(not jobstats_calls(lvlog[1]), 'the destination asked for job statistics')
    # the first pass's iteration event starts them (not the minute's
    # relisting): ~0.4 s on a quiet host; the agent runs at nice 10, and
    # with both CPUs busy (two spinning processes beside the guest) it
    # was 2.6 s
    log('first call %d ms after virsh migrate started' % (during[0] - t_mig if during else -1))
    c.ok(during and during[0] - t_mig < 5000, 'the first call came late: %s' % during[:1])

    # ---- the source's frames against domjobinfo ----
    st = Stream(outs[0])
    pre = 'vm.%s.' % NAME
    def ms(f):
        return f['t_real'] // 10**6
    running = [f for f in st.frames if f['v'].get(pre + 'migration.job') == 2]
    mig_frames = [f for f in running if ms(f) >= t_mig]
    ab_frames = [f for f in running if t_ab0 <= ms(f) <= t_ab1 + 1000]
    log('source: %d frames, %d with a running job, %d of them in the aborted one' %
        (len(st.frames), len(mig_frames), len(ab_frames)))
    c.ok(len(ab_frames) + len(mig_frames) == len(running), 'job values outside the two jobs')
    c.ok(len(ab_frames) >= 1, 'only %d frames of the aborted job' % len(ab_frames))
    c.ok(all(f['v'].get(pre + 'state') == 1 for f in st.frames if t_ab1 + 1000 < ms(f) < t_mig),
         'the VM not running at the source between the two migrations')
    c.ok(len(mig_frames) >= len(during) / 2, 'only %d frames with job values' % len(mig_frames))
    keys = {col['name']: col['key'] for cols in st.schemas.values() for col in cols}
    c.ok(keys.get(pre + 'migration.time_elapsed') == uuid, 'migration columns not under the UUID key')
    refs.sort(key=lambda r: r['time_elapsed'])
    bracketed = setup = 0
    for i, f in enumerate(mig_frames):
        v = {k: f['v'].get(pre + 'migration.' + k) for k in FIELDS}
        if any(v[k] is None for k in FIELDS) and i == setup:
            setup += 1  # the job's first instants: no RAM statistics yet (absent, not 0)
            c.ok(v['time_elapsed'] is not None and not any(v[k] == 0 for k in FIELDS if k != 'time_elapsed'),
                 'frame %d: setup frame %s' % (f['seq'], v))
            continue
        c.ok(all(v[k] is not None for k in FIELDS), 'frame %d: a field is missing: %s' % (f['seq'], v))
        e = v['time_elapsed']
        lo = [r for r in refs if r['time_elapsed'] <= e]
        hi = [r for r in refs if r['time_elapsed'] >= e]
        if not lo or not hi:
            continue
        lo, hi = lo[-1], hi[0]
        bracketed += 1
        for k in ('data_processed', 'memory_processed', 'memory_iteration', 'memory_normal', 'memory_normal_bytes',
                  'memory_constant'):
            c.ok(lo[k] <= v[k] <= hi[k], 'frame %d: %s %d not within domjobinfo %d..%d (elapsed %d..%d..%d)' %
                 (f['seq'], k, v[k], lo[k], hi[k], lo['time_elapsed'], e, hi['time_elapsed']))
        # what remains falls within a pass over the memory, and grows back
        # by what the guest dirtied when the next pass begins
        if lo['memory_iteration'] == hi['memory_iteration']:
            for k in ('data_remaining', 'memory_remaining'):
                c.ok(hi[k] <= v[k] <= lo[k], 'frame %d: %s %d not within domjobinfo %d..%d' %
                     (f['seq'], k, v[k], hi[k], lo[k]))
        for k in ('data_total', 'memory_total'):
            c.ok(min(lo[k], hi[k]) <= v[k] <= max(lo[k], hi[k]), 'frame %d: %s %d not within %d..%d' %
                 (f['seq'], k, v[k], lo[k], hi[k]))
        for k in ('memory_page_size', 'setup_time'):
            c.ok(v[k] == lo[k] == hi[k], 'frame %d: %s %d, domjobinfo %d, %d' % (f['seq'], k, v[k], lo[k], hi[k]))
        c.ok(f['v'].get(pre + 'migration.downtime_expected') == lo.get('downtime') or
             (lo.get('downtime') != hi.get('downtime')), 'frame %d: expected downtime' % f['seq'])
        c.ok(pre + 'migration.downtime' not in f['v'], 'frame %d: a real downtime while running' % f['seq'])
    log('%d frames bracketed by domjobinfo readings, %d before the RAM statistics' % (bracketed, setup))
    c.ok(setup <= 2, '%d frames without RAM statistics' % setup)
    c.ok(bracketed >= 3, 'only %d frames between two domjobinfo readings' % bracketed)

    # ---- the source's last frame of the VM: migrated out, final statistics ----
    last = [f for f in st.frames if pre + 'state' in f['v']][-1]
    lv = last['v']
    c.ok(lv[pre + 'state'] == 5, 'last state %s, not shut off' % lv[pre + 'state'])
    c.ok(lv.get(pre + 'migration.job') == 3, 'last frame: job %s, not completed' % lv.get(pre + 'migration.job'))
    for k in FIELDS + ['downtime']:
        c.ok(lv.get(pre + 'migration.' + k) == final.get(k), 'final %s: %s, domjobinfo --completed %s' %
             (k, lv.get(pre + 'migration.' + k), final.get(k)))
    c.ok(pre + 'migration.downtime_expected' not in lv, 'an expected downtime in the final frame')
    c.ok(st.frames[-1]['t_real'] // 10**6 >= t_stop - 5000 and pre + 'state' not in st.frames[-1]['v'],
         'the VM is still in the source\'s last frame')
    ev = [e for e in st.events if e['type'] == EV['VM_MIGRATED_OUT']]
    c.ok(len(ev) == 1 and ev[0]['subject'] == uuid, 'source events: %s' % st.events)

    # ---- the destination ----
    sd = Stream(outs[1])
    log('source events %s; destination events %s' % ([(e['type'], e['detail']) for e in st.events],
                                                      [(e['type'], e['detail']) for e in sd.events]))
    ev = [e for e in sd.events if e['type'] == EV['VM_MIGRATED_IN']]
    # one for the aborted migration (the incoming domain was started, then
    # destroyed), one for the real one
    c.ok(len(ev) == 2 and all(e['subject'] == uuid and NAME in e['detail'] for e in ev),
         'destination events: %s' % sd.events)
    keys = {col['name']: col['key'] for cols in sd.schemas.values() for col in cols}
    c.ok(keys.get(pre + 'state') == uuid, 'destination: the VM is not under its UUID: %s' % keys.get(pre + 'state'))
    c.ok(sd.frames[-1]['v'].get(pre + 'state') == 1, 'destination: not running in the last frame')
    # libvirt keeps job statistics on the source only: nothing to ask there
    c.ok(not any(k.startswith(pre + 'migration.') for k in keys), 'destination: migration columns')
    c.ok(not any(pre + 'state' in f['v'] for f in sd.frames if f['t_real'] // 10**6 < t_ab0),
         'destination: the VM before the migration')
    log('took %.1f s' % (time.monotonic() - t0))
    c.done()


if __name__ == '__main__':
    main()
