# SPDX-License-Identifier: MIT
"""Helpers of the tests of the Python package (tests/test_py_*.py); not a
test itself.  Runs are recorded here by the real sampler (build/vmsampler):
on the live /proc, on proc roots made of fixture files, and with VMs from
libvirt's test driver (test:///FILE: no daemon, no QEMU)."""
import csv
import io
import math
import os
import subprocess
import sys
import tempfile
import time

SRC = os.environ.get('VMS_SRCDIR', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
BIN = os.environ.get('VMS_BIN', os.path.join(SRC, 'build', 'vmsampler'))
BUILD = os.environ.get('VMS_BUILD', os.path.dirname(BIN))
FIXTURES = os.environ.get('VMS_FIXTURES', os.path.join(SRC, 'tests', 'fixtures'))
REQUIRE = os.environ.get('VMS_REQUIRE_PY') == '1'
os.environ['VMS_BIN'] = BIN
sys.path.insert(0, os.path.join(SRC, 'python'))


def wait_for(pred, timeout=10.0):
    """pred() true within timeout seconds (polled every 20 ms)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.02)
    return pred()


def venv_python():
    """The test venv's python (scripts/test.sh makes it: BUILD/pyvenv)."""
    p = os.environ.get('VMS_PYVENV') or os.path.join(BUILD, 'pyvenv')
    exe = os.path.join(p, 'bin', 'python3')
    return exe if os.access(exe, os.X_OK) else None


def missing(modules):
    out = []
    for m in modules:
        try:
            __import__(m)
        except ImportError:
            out.append(m)
    return out


def require(modules, venv=False):
    """Skip (exit 77) unless the modules import; with venv=True, run this
    test again under the test venv's python when this one lacks them.
    VMS_REQUIRE_PY=1 (scripts/test.sh) turns the skip into a failure."""
    miss = missing(modules)
    if not miss:
        return
    exe = venv_python() if venv else None
    in_venv = exe and os.path.realpath(sys.prefix) == os.path.realpath(os.path.dirname(os.path.dirname(exe)))
    if exe and not in_venv and not os.environ.get('VMS_IN_VENV'):
        os.environ['VMS_IN_VENV'] = '1'
        sys.stdout.flush()
        os.execv(exe, [exe] + sys.argv)
    skip_or_fail('%s: no %s (python3-matplotlib from Debian; pyarrow, pandas, duckdb in the venv '
                 'that scripts/test.sh makes in build/pyvenv)' % (os.path.basename(sys.argv[0]), ', '.join(miss)),
                 'VMS_REQUIRE_PY')


def skip_or_fail(msg, switch):
    """A real skip (exit 77), or a failure when the environment variable
    switch is 1 (scripts/test.sh sets it where the test must run)."""
    if os.environ.get(switch) == '1':
        print('FAIL (%s=1): %s' % (switch, msg), file=sys.stderr)
        sys.exit(1)
    print('SKIP: ' + msg)
    sys.exit(77)


def main(switch='VMS_REQUIRE_PY'):
    """Run the calling module's tests (unittest.main without its exit): a
    failure or error is exit 1; a skipped test makes the whole file a real
    SKIP for meson (exit 77: unittest's own exit 0 would count it as a
    pass), or a failure where the environment variable switch is 1."""
    import unittest
    res = unittest.main(module='__main__', verbosity=2, exit=False).result
    if not res.wasSuccessful():
        sys.exit(1)
    if res.skipped:
        for t, why in res.skipped:
            print('skipped: %s: %s' % (t.id(), why))
        skip_or_fail('%d of %d tests skipped' % (len(res.skipped), res.testsRun), switch)
    sys.exit(0)


def have_libvirt():
    return os.access(os.path.join(os.path.dirname(BIN), 'vmsampler-virt'), os.X_OK)


def synthetic(out, frames=1500, vms=12, *extra):
    """A synthetic run of a host with VMs (bench/report/report_gen, the
    sampler's own binary sink: VMs stopping and restarting with counters
    from 0, a VM defined mid-run, 32-bit disk counters that wrap), or None
    when it is not built (meson test builds it)."""
    gen = os.path.join(BUILD, 'report_gen')
    if not os.access(gen, os.X_OK):
        if REQUIRE:
            raise AssertionError('%s is not built (ninja -C %s report_gen)' % (gen, BUILD))
        return None
    run([gen, '-n', str(frames), '-m', str(vms)] + list(extra) + [out])
    return out


def run(argv, **kw):
    r = subprocess.run(argv, capture_output=True, text=True, timeout=kw.pop('timeout', 300), **kw)
    if r.returncode != 0:
        raise AssertionError('%s: exit %d\n%s' % (' '.join(argv), r.returncode, r.stderr))
    return r


def host_env():
    env = dict(os.environ)
    env.setdefault('LIBVIRT_DEFAULT_URI', 'test://' + os.path.join(FIXTURES, 'vm', 'testdrv-empty.xml'))
    env['TZ'] = 'UTC'
    return env


def record(out, *args, env=None):
    """build/vmsampler -q ARGS -o OUT."""
    run([BIN, '-q'] + list(args) + ['-o', out], env=env or host_env())
    return out


def record_with_marks(out, marks, *args, env=None, interval='10ms', count=300):
    """A run with marks (`vmsampler mark --ring`) sent at the given fractions
    of its length: [(0.3, 'text'), ...]."""
    ring = out + '.ring'
    p = subprocess.Popen([BIN, '-q', '-i', interval, '-n', str(count), '--ring', ring] + list(args)
                         + ['-o', out], env=env or host_env(), stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(500):
            if os.path.exists(ring + '.ctl'):
                break
            time.sleep(0.01)
        t0 = time.monotonic()
        length = count * parse_interval(interval)
        for frac, text in marks:
            delay = t0 + frac * length - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            run([BIN, 'mark', '--ring', ring, text])
        err = p.communicate(timeout=120)[1]
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    if p.returncode != 0:
        raise AssertionError('sampler exit %d: %s' % (p.returncode, err))
    return out


def parse_interval(s):
    return float(s[:-2]) / 1000 if s.endswith('ms') else float(s.rstrip('s'))


def testdrv_env(tmp, ndom, name='node'):
    """An environment whose LIBVIRT_DEFAULT_URI is libvirt's test driver
    with ndom running domains (as tests/integration/agent_testdrv.py)."""
    node = os.path.join(tmp, name + '.xml')
    with open(node, 'w') as f:
        f.write('<node>\n  <cpu><mhz>2400</mhz><nodes>1</nodes><sockets>1</sockets><cores>2</cores>'
                '<threads>1</threads></cpu>\n  <memory>25165824</memory>\n')
        for i in range(1, ndom + 1):
            f.write('''  <domain type='test'>
    <name>tdom-%03d</name>
    <uuid>00000000-0000-4000-8000-%012d</uuid>
    <memory unit='MiB'>128</memory>
    <vcpu>1</vcpu>
    <os><type arch='x86_64'>hvm</type></os>
    <devices>
      <interface type='bridge'><mac address='52:54:00:00:00:%02x'/><source bridge='br0'/><target dev='tvnet%d'/><model type='virtio'/></interface>
    </devices>
  </domain>
''' % (i, i, i, i))
        f.write('</node>\n')
    env = host_env()
    env['LIBVIRT_DEFAULT_URI'] = 'test://' + node
    return env


def proc_root(tmp, netdev=None, diskstats='roots/sysstat-root1-discard-short-line/diskstats'):
    """A proc root: the live stat and loadavg (they change every tick),
    diskstats from a fixture, net/dev from a fixture or the given text."""
    root = tempfile.mkdtemp(prefix='root.', dir=tmp)
    os.symlink('/proc/stat', os.path.join(root, 'stat'))
    os.symlink('/proc/loadavg', os.path.join(root, 'loadavg'))
    os.mkdir(os.path.join(root, 'net'))
    with open(os.path.join(FIXTURES, diskstats), 'rb') as fi, open(os.path.join(root, 'diskstats'), 'wb') as fo:
        fo.write(fi.read())
    if netdev is None:
        with open(os.path.join(FIXTURES, 'roots/sysstat-root1-virbr/net/dev')) as fi:
            netdev = fi.read()
    with open(os.path.join(root, 'net', 'dev'), 'w') as fo:
        fo.write(netdev)
    return root


NETDEV_HEAD = ('Inter-|   Receive                                                |  Transmit\n'
               ' face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop '
               'fifo colls carrier compressed\n')


def netdev_line(name, vals):
    return '%6s: %s\n' % (name, ' '.join(str(v) for v in vals))


# ---- dump's CSV, the reference --------------------------------------------------------------

def dump_csv(path, *extra):
    r = run([BIN, 'dump', path] + list(extra))
    rows = list(csv.reader(io.StringIO(r.stdout)))
    return rows[0], rows[1:]


def fnum(s):
    return float(s) if s != '' else math.nan


def dump_rates(path):
    """{column: [float or NaN per row]}, plus 'time' as strings."""
    header, rows = dump_csv(path, '--rates')
    cols = {h: [r[i] for r in rows] for i, h in enumerate(header)}
    out = {h: [fnum(v) for v in vals] for h, vals in cols.items() if h != 'time'}
    out['time'] = cols.get('time', [])
    return out


def dump_events(path):
    header, rows = dump_csv(path, '--events')
    return [dict(zip(header, r)) for r in rows]


def time_us(s):
    import datetime
    return (datetime.datetime.fromisoformat(s) - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)) \
        // datetime.timedelta(microseconds=1)


def same(a, b):
    """Float sequences equal, NaN equal to NaN."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if not (x == y or (x != x and y != y)):
            return False
    return True


def percentile(sorted_vals, q):
    """Linear interpolation between order statistics (Excel PERCENTILE.INC),
    written out."""
    n = len(sorted_vals)
    h = (n - 1) * q / 100.0
    lo = int(math.floor(h))
    hi = min(lo + 1, n - 1)
    return sorted_vals[lo] + (h - lo) * (sorted_vals[hi] - sorted_vals[lo])
