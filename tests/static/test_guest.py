#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The static vmsampler (-Dstatic=true) inside the project's busybox guest
(issue 13, "Minimal image").

The guest is tests/vmlab's: its kernel and busybox initramfs
($VMLAB_STATE/guest/{vmlinuz,initrd.img}, tests/vmlab/make-guest.sh),
with a second cpio archive appended that adds /bin/vmsampler (VMS_BIN, the
static binary as built) and /vmscheck-init (tests/static/guest-init, run
as rdinit=).  QEMU is started directly, no libvirt: TCG, 2 vCPUs, 128 MiB,
no disk, no network, the serial console into a file, -no-reboot, under a
timeout; it is killed whatever fails.

In the guest, vmsampler -i 200ms -n N -o /out.csv samples the guest's own
/proc while two busy loops run; /proc/stat is read before and after it.
The files come back over the console as base64 with their sha256, and the
CSV is checked against the guest's own files, read by cat, not by vmsampler:
  - vmsampler exited 0, wrote N rows with seq 1..N, lost no frame, counted
    no parse error, and wrote no error on stderr (warnings and notes:
    perf's tracepoint kvm:kvm_exit is not in a guest);
  - the per-CPU columns (cpu.N.*, and perf.cpuN.* when the build has perf)
    are exactly the guest's CPUs: 2, as many as the cpuN lines of its
    /proc/stat;
  - no required column is missing or empty in any row;
  - each counter of /proc/stat (every CPU state of cpu and cpuN, ctxt,
    processes, intr, softirq) never goes down from row to row and lies
    between the before and after readings; the CPUs' user time and ctxt
    went up (the loops ran);
  - mem.MemTotal is the guest's MemTotal (bytes).

It cannot run without qemu-system-x86_64 or the guest image (built by
make-guest.sh when missing, which needs root and Debian's archive): a SKIP
(77), a failure with VMS_REQUIRE_MINIMAL=1 (scripts/test.sh)."""
import base64
import csv
import hashlib
import io
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SRC = os.environ.get('VMS_SRCDIR', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
BIN = os.environ.get('VMS_BIN', os.path.join(SRC, 'build-static', 'vmsampler'))
QEMU = os.environ.get('VMS_QEMU', 'qemu-system-x86_64')
STATE = os.environ.get('VMLAB_STATE', '/var/lib/vmsampler-vmlab')
NCPU = 2
SAMPLES = int(os.environ.get('VMS_GUEST_SAMPLES', '25'))
TIMEOUT = int(os.environ.get('VMS_GUEST_TIMEOUT', '150'))
STATES = ['user', 'nice', 'system', 'idle', 'iowait', 'irq', 'softirq', 'steal', 'guest', 'guest_nice']
REQUIRED = (['seq', 'time', 't_mono_ns', 'missed_ticks', 'lost_frames', 'late_ns', 'self_cpu_ns']
            + ['cpu.all.' + s for s in STATES]
            + ['stat.' + s for s in ('ctxt', 'processes', 'intr', 'softirq', 'procs_running', 'procs_blocked')]
            + ['load.1m', 'load.5m', 'load.15m', 'load.runnable', 'load.tasks']
            + ['mem.MemTotal', 'mem.MemFree', 'mem.MemAvailable', 'vms.parse_errors'])


def skip_or_fail(why):
    if os.environ.get('VMS_REQUIRE_MINIMAL') == '1':
        print('FAIL (VMS_REQUIRE_MINIMAL=1): ' + why, file=sys.stderr)
        sys.exit(1)
    print('SKIP: ' + why, file=sys.stderr)
    sys.exit(77)


def fail(why, console=None):
    print('FAIL: ' + why, file=sys.stderr)
    if console is not None:
        print('--- the end of the guest console:\n' + console[-4000:], file=sys.stderr)
    sys.exit(1)


def guest_image():
    """vmlinuz and initrd.img of tests/vmlab, built by make-guest.sh if missing"""
    kernel, initrd = os.path.join(STATE, 'guest', 'vmlinuz'), os.path.join(STATE, 'guest', 'initrd.img')
    if not (os.path.isfile(kernel) and os.path.isfile(initrd)):
        if os.geteuid() != 0:
            skip_or_fail(f'no guest image in {STATE}/guest, and make-guest.sh needs root')
        r = subprocess.run(['bash', os.path.join(SRC, 'tests', 'vmlab', 'make-guest.sh')],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0 or not (os.path.isfile(kernel) and os.path.isfile(initrd)):
            skip_or_fail('tests/vmlab/make-guest.sh failed: ' + r.stdout[-1000:])
    return kernel, initrd


def newc(entries):
    """a cpio archive (newc, what the kernel unpacks) of (name, mode, data)"""
    out = bytearray()

    def pad4():
        out.extend(b'\0' * (-len(out) % 4))
    for ino, (name, mode, data) in enumerate(entries + [('TRAILER!!!', 0, b'')], 1):
        nm = name.encode() + b'\0'
        hdr = '070701' + ''.join('%08X' % v for v in (
            ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(nm), 0))
        out.extend(hdr.encode() + nm)
        pad4()
        out.extend(data)
        pad4()
    return bytes(out)


def payloads(console):
    """{name: bytes} of the VMSCHECK-BEGIN name sha256 / base64 / VMSCHECK-END blocks"""
    files = {}
    for m in re.finditer(r'^VMSCHECK-BEGIN (\S+) ([0-9a-f]{64})\r?\n(.*?)^VMSCHECK-END \1\r?$',
                         console, re.S | re.M):
        data = base64.b64decode(''.join(m.group(3).split()))
        if hashlib.sha256(data).hexdigest() != m.group(2):
            fail(f'{m.group(1)}: its sha256 differs from the one the guest sent', console)
        files[m.group(1)] = data
    return files


def proc_stat(text):
    """the counters of a /proc/stat: {column name as vmsampler calls it: int}"""
    v = {}
    for line in text.splitlines():
        w = line.split()
        if not w:
            continue
        if re.fullmatch(r'cpu\d*', w[0]):
            cpu = 'all' if w[0] == 'cpu' else w[0][3:]
            for s, x in zip(STATES, w[1:]):
                v[f'cpu.{cpu}.{s}'] = int(x)
        elif w[0] in ('ctxt', 'processes', 'intr', 'softirq'):
            v['stat.' + w[0]] = int(w[1])   # intr, softirq: their totals
    return v


def check(files, console):
    for f in ('before.stat', 'after.stat', 'out.csv', 'meminfo'):
        if f not in files:
            fail(f'the guest did not send {f}', console)
    err = files.get('vmsampler.err', b'').decode()
    bad = [ln for ln in err.splitlines() if not ln.startswith('vmsampler: ') or 'error' in ln]
    if bad:
        fail('vmsampler said on stderr: ' + '\n'.join(bad), console)
    before, after = proc_stat(files['before.stat'].decode()), proc_stat(files['after.stat'].decode())
    cpus = sorted(int(k.split('.')[1]) for k in before if k.startswith('cpu.') and k.endswith('.user')
                  and k.split('.')[1] != 'all')
    if cpus != list(range(NCPU)):
        fail(f'the guest has CPUs {cpus} in its /proc/stat, not the {NCPU} QEMU was given', console)

    rows = list(csv.DictReader(io.StringIO(files['out.csv'].decode())))
    if len(rows) != SAMPLES:
        fail(f'{len(rows)} rows, not {SAMPLES}')
    cols = rows[0].keys()
    csv_cpus = sorted({int(c.split('.')[1]) for c in cols if re.fullmatch(r'cpu\.\d+\.\w+', c)})
    if csv_cpus != cpus:
        fail(f'the CSV has per-CPU columns for CPUs {csv_cpus}, the guest has {cpus}')
    perf_cpus = sorted({int(m.group(1)) for c in cols for m in [re.fullmatch(r'perf\.cpu(\d+)\..*', c)] if m})
    if perf_cpus and perf_cpus != cpus:
        fail(f'the CSV has perf columns for CPUs {perf_cpus}, the guest has {cpus}')
    required = REQUIRED + [f'cpu.{n}.{s}' for n in cpus for s in STATES]
    missing = [c for c in required if c not in cols]
    if missing:
        fail('missing columns: ' + ', '.join(missing))
    for r in rows:
        empty = [c for c in required if r[c] == '']
        if empty:
            fail(f'row seq {r["seq"]}: empty {", ".join(empty)}')
    if [int(r['seq']) for r in rows] != list(range(1, SAMPLES + 1)):
        fail('seq is not 1..N: ' + ' '.join(r['seq'] for r in rows))
    for c in ('lost_frames', 'vms.parse_errors'):
        if any(r[c] != '0' for r in rows):
            fail(f'{c} is not 0: ' + ' '.join(r[c] for r in rows))

    counters = sorted(before)
    if set(counters) != set(after):
        fail('the guest /proc/stat before and after do not have the same counters')
    for c in counters:
        if c not in cols:
            fail(f'{c} of the guest /proc/stat is not in the CSV')
        seq = [before[c]] + [int(r[c]) for r in rows] + [after[c]]
        for i in range(1, len(seq)):
            if seq[i] < seq[i - 1]:
                fail(f'{c} goes down: before {before[c]}, rows {seq[1:-1]}, after {after[c]}')
    for c in ['cpu.all.user', 'stat.ctxt'] + [f'cpu.{n}.user' for n in cpus]:
        if int(rows[-1][c]) <= int(rows[0][c]):
            fail(f'{c} did not move while two loops ran: {rows[0][c]} .. {rows[-1][c]}')
    memtotal = int(re.search(r'^MemTotal:\s+(\d+) kB', files['meminfo'].decode(), re.M).group(1)) * 1024
    if any(int(r['mem.MemTotal']) != memtotal for r in rows):
        fail(f'mem.MemTotal {rows[0]["mem.MemTotal"]}, the guest /proc/meminfo says {memtotal}')
    return len(counters), len(cols), err


def main():
    # meson's timeout or ^C: out through the finally below, QEMU killed
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    if not os.path.isfile(BIN):
        fail(f'no static vmsampler at {BIN} (meson setup build-static -Dstatic=true)')
    if shutil.which(QEMU) is None:
        skip_or_fail(f'{QEMU} is not installed')
    kernel, initrd = guest_image()
    tmp = tempfile.mkdtemp(prefix='vms-static-guest.')
    qemu = None
    try:
        img = os.path.join(tmp, 'initrd.img')
        with open(initrd, 'rb') as f:
            base = f.read()
        with open(BIN, 'rb') as f:
            vms = f.read()
        with open(os.path.join(SRC, 'tests', 'static', 'guest-init'), 'rb') as f:
            init = f.read()
        # the kernel unpacks the archives one after the other: the vmlab
        # initramfs, then this one over it
        with open(img, 'wb') as f:
            f.write(base)
            f.write(b'\0' * (-len(base) % 4))
            f.write(newc([('bin', 0o40755, b''), ('bin/vmsampler', 0o100755, vms),
                          ('vmscheck-init', 0o100755, init)]))
        log = os.path.join(tmp, 'console.log')
        cmd = [QEMU, '-accel', 'tcg', '-smp', str(NCPU), '-m', '128', '-nodefaults', '-no-user-config',
               '-display', 'none', '-monitor', 'none', '-serial', 'file:' + log, '-no-reboot',
               '-kernel', kernel, '-initrd', img,
               '-append', f'console=ttyS0 rdinit=/vmscheck-init panic=-1 quiet vms.n={SAMPLES}']
        t0 = time.monotonic()
        qemu = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        try:
            out, _ = qemu.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            qemu.kill()
            qemu.wait()
            fail(f'the guest did not power off within {TIMEOUT} s',
                 open(log, errors='replace').read() if os.path.exists(log) else '')
        took = time.monotonic() - t0
        console = open(log, errors='replace').read() if os.path.exists(log) else ''
        if qemu.returncode != 0:
            fail(f'qemu exited {qemu.returncode}: {out.strip()}', console)
        m = re.search(r'^VMSCHECK-RC (\d+)', console, re.M)
        if not m or 'VMSCHECK-DONE' not in console:
            fail('the guest did not finish its script (no VMSCHECK-RC / VMSCHECK-DONE)', console)
        if m.group(1) != '0':
            fail('vmsampler exited ' + m.group(1) + ' in the guest: '
                 + payloads(console).get('vmsampler.err', b'').decode(), console)
        ncounters, ncols, err = check(payloads(console), console)
        start = re.search(r'^VMSCHECK-START .*$', console, re.M)
        print(f'{start.group(0).split(" ", 1)[1].strip() if start else ""}: {SAMPLES} rows of {ncols} columns, '
              f'{ncounters} counters of /proc/stat between the readings; '
              f'{len(err.splitlines())} lines on stderr; guest booted, sampled and powered off in {took:.1f} s')
        for ln in err.splitlines():
            print('  vmsampler ' + ln)
        print('static guest: 1 passed, 0 failed')
    finally:
        if qemu is not None and qemu.poll() is None:
            qemu.kill()
            qemu.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
