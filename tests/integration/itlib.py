# SPDX-License-Identifier: MIT
"""itlib - shared by the integration tests (real libvirtd, real guests).

The environment comes from tests/vmlab: setup.sh (idempotent), daemon.sh,
up.sh, down.sh.  A test calls need() first: without root, the vmlab guest
image or libvirt it skips (exit 77) -- unless VMS_REQUIRE_INTEGRATION=1,
when it fails.  Guests vms-001..003 are the stable set (started if not
running, never stopped or paused here); a test that stops, pauses or
kills a guest makes its own transient one (vms-9NN) and removes it.
"""
import os
import re
import signal
import struct
import subprocess
import sys
import threading
import time

SRC = os.environ.get('VMS_SRCDIR', os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..')))
BUILD = os.environ.get('VMS_BUILD', os.path.join(SRC, 'build'))
BIN = os.environ.get('VMS_BIN', os.path.join(BUILD, 'vmsampler'))
VMLAB = os.path.join(SRC, 'tests', 'vmlab')
URI = 'qemu:///system'
STABLE = ['vms-001', 'vms-002', 'vms-003']
REQUIRED = os.environ.get('VMS_REQUIRE_INTEGRATION') == '1'


def log(*a):
    print(time.strftime('%H:%M:%S'), *a, flush=True)


def skip_or_fail(why):
    if REQUIRED:
        print('FAIL: integration environment missing: %s (VMS_REQUIRE_INTEGRATION=1)' % why, flush=True)
        sys.exit(1)
    print('SKIP: %s' % why, flush=True)
    sys.exit(77)


def run(*cmd, check=True, env=None, timeout=600):
    e = dict(os.environ)
    e.pop('LIBVIRT_DEFAULT_URI', None)  # the unit tests' test driver
    if env:
        e.update(env)
    r = subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError('%s: exit %d\n%s%s' % (' '.join(cmd), r.returncode, r.stdout, r.stderr))
    return r


def vmlab(script, *args, env=None):
    return run('bash', os.path.join(VMLAB, script), *args, env=env)


def virsh(*args, check=True):
    return run('virsh', '-q', '-c', URI, *args, check=check, timeout=120)


_lock_fd = None


def lock():
    """One user of the lab at a time (tests/vmlab/session.sh): a test run
    alone takes the session lock itself, for its whole life; under
    session.sh (VMS_VMLAB_LOCKED=1) the session holds it already."""
    global _lock_fd
    if os.environ.get('VMS_VMLAB_LOCKED') == '1' or _lock_fd is not None:
        return
    import fcntl
    path = os.environ.get('VMLAB_LOCK', '/run/lock/vmsampler-vmlab.lock')
    os.makedirs(os.path.dirname(path), exist_ok=True)
    _lock_fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        fcntl.flock(_lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        log('another integration session holds %s; waiting for it' % path)
        fcntl.flock(_lock_fd, fcntl.LOCK_EX)


def need(guests=True, daemon=True):
    """The environment: root, tools, libvirtd and the stable guests
    (daemon False: neither the lab's libvirtd nor its guests, for a test
    that runs private daemons, tests/vmlab/migd.sh)."""
    if os.geteuid() != 0:
        skip_or_fail('not root')
    lock()
    if not os.access(BIN, os.X_OK) or not os.access(os.path.join(os.path.dirname(BIN), 'vmsampler-virt'), os.X_OK):
        skip_or_fail('vmsampler built without libvirt support')
    for tool in ('virsh', 'qemu-system-x86_64', 'libvirtd'):
        if run('sh', '-c', 'command -v %s || test -x /usr/sbin/%s' % (tool, tool), check=False).returncode:
            skip_or_fail('%s is not installed (run tests/vmlab/setup.sh)' % tool)
    if not os.path.exists('/var/lib/vmsampler-vmlab/guest/STAMP'):
        skip_or_fail('no vmlab guest image (run tests/vmlab/setup.sh)')
    if not daemon:
        return
    vmlab('daemon.sh', 'start')
    if guests:
        running = set(virsh('list', '--name').stdout.split())
        if not set(STABLE) <= running:
            log('starting the stable guests')
            vmlab('up.sh', '3', env={'LOAD': 'light'})


def transient(idx, load='light'):
    """A guest of our own (vms-9NN), booted and ready."""
    name = 'vms-%03d' % idx
    vmlab('down.sh', name)
    vmlab('up.sh', '1', str(idx), env={'LOAD': load})
    return name


def remove(name):
    run('bash', os.path.join(VMLAB, 'down.sh'), name, check=False)


def schedstat_sum(pid, field):
    """field (0: run ns, 1: run delay ns) of each thread's
    /proc/PID/task/TID/schedstat, summed over the process's threads (one
    that just left is not counted)"""
    t = 0
    base = '/proc/%d/task' % pid
    for tid in os.listdir(base):
        try:
            t += int(open('%s/%s/schedstat' % (base, tid)).read().split()[field])
        except (OSError, ValueError, IndexError):
            pass  # a thread that just left
    return t


def qemu_pid(name):
    return int(open('/run/libvirt/qemu/%s.pid' % name).read().strip())


def uuid_of(name):
    return virsh('domuuid', name).stdout.strip()


def domstats(name, *groups):
    """virsh domstats --raw as a dict of ints (strings kept as str)."""
    out = virsh('domstats', '--raw', *groups, name).stdout
    d = {}
    for line in out.splitlines():
        line = line.strip()
        if '=' not in line:
            continue
        k, v = line.split('=', 1)
        d[k] = int(v) if re.fullmatch(r'-?\d+', v) else v
    return d


CG = '/sys/fs/cgroup'


def vm_groups(pid, v1_ctl):
    """The VM's cgroup2 group and its v1 group of controller v1_ctl ('cpu',
    'memory'), as vmsampler finds them: QEMU's path in /proc/PID/cgroup
    without its trailing /emulator; None where there is none."""
    v2 = v1 = None
    for line in open('/proc/%d/cgroup' % pid):
        hid, ctl, path = line.rstrip('\n').split(':', 2)
        if path.endswith('/emulator'):
            path = path[:-len('/emulator')]
        if hid == '0' and ctl == '' and path != '/':
            for base in (CG, CG + '/unified'):
                if os.path.exists(base + path + '/cgroup.procs'):
                    v2 = base + path
        elif v1_ctl in ctl.split(',') and path != '/':
            for base in (CG + '/' + v1_ctl, CG + '/' + ctl):
                if os.path.exists(base + path):
                    v1 = base + path
    return v2, v1


def read_keyed(path):
    """A file of "key value" lines (cpu.stat, memory.stat, /proc/vmstat)."""
    d = {}
    for line in open(path):
        k, v = line.split()
        d[k] = int(v)
    return d


def proc_status(pid):
    """fd count and VmRSS (kB) of a process."""
    fds = len(os.listdir('/proc/%d/fd' % pid))
    rss = 0
    for line in open('/proc/%d/status' % pid):
        if line.startswith('VmRSS:'):
            rss = int(line.split()[1])
    return fds, rss


def fd_split(pid):
    """(perf_event fds, other fds) of a process: the perf source's counters
    follow QEMU's threads, which come and go; the others follow the VMs."""
    perf = other = 0
    for fd in os.listdir('/proc/%d/fd' % pid):
        try:
            target = os.readlink('/proc/%d/fd/%s' % (pid, fd))
        except OSError:
            continue  # closed meanwhile
        if target == 'anon_inode:[perf_event]':
            perf += 1
        else:
            other += 1
    return perf, other


def children(pid):
    try:
        return [int(p) for p in open('/proc/%d/task/%d/children' % (pid, pid)).read().split()]
    except OSError:
        return []


def proc_cpu_ns(pid):
    """utime + stime of a process, in ns."""
    f = open('/proc/%d/stat' % pid).read()
    rest = f[f.rindex(')') + 2:].split()
    return (int(rest[11]) + int(rest[12])) * 10**9 // os.sysconf('SC_CLK_TCK')


# ---- the sampler -----------------------------------------------------------------

class Sampler:
    """vmsampler as a child; CSV rows on stdout are parsed as they come."""

    def __init__(self, *args, config=None, csv=True, tmpdir='/tmp'):
        self.args = list(args)
        self.cfg = None
        if config:
            self.cfg = os.path.join(tmpdir, 'it-%d.yaml' % os.getpid())
            open(self.cfg, 'w').write(config)
            self.args = ['-c', self.cfg] + self.args
        self.errf = os.path.join(tmpdir, 'it-%d.err' % os.getpid())
        self.csv = csv
        self.header = None
        self.rows = []
        self.lock = threading.Lock()
        env = dict(os.environ)
        env.pop('LIBVIRT_DEFAULT_URI', None)
        self.p = subprocess.Popen([BIN] + self.args, stdout=subprocess.PIPE if csv else subprocess.DEVNULL,
                                  stderr=open(self.errf, 'w'), env=env, text=True)
        if csv:
            self.t = threading.Thread(target=self._read, daemon=True)
            self.t.start()

    def _read(self):
        import csv as csvmod
        for row in csvmod.reader(self.p.stdout):
            with self.lock:
                if self.header is None:
                    self.header = row
                    self.col = {c: i for i, c in enumerate(row)}
                else:
                    self.rows.append(row)

    def wait_rows(self, n, timeout=60):
        end = time.time() + timeout
        while time.time() < end:
            with self.lock:
                if len(self.rows) >= n:
                    return
            time.sleep(0.02)
        raise RuntimeError('only %d rows after %d s; stderr: %s' % (len(self.rows), timeout, self.stderr()))

    def value(self, row, name):
        """int, or None for an empty field; KeyError if no such column."""
        v = row[self.col[name]]
        return int(v) if v != '' else None

    def snapshot(self):
        with self.lock:
            return list(self.rows)

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        rc = self.p.wait(timeout=30)
        if self.csv:
            self.t.join(timeout=10)
        return rc

    def stderr(self):
        return open(self.errf).read()

    def agent_pid(self):
        for c in children(self.p.pid):
            try:
                if open('/proc/%d/comm' % c).read().strip().startswith('vmsampler-vir'):
                    return c
            except OSError:
                pass
        return None


# ---- the binary format (vmsampler-format(5)) ---------------------------------------

def _varint(b, o):
    v = 0
    s = 0
    while True:
        c = b[o]
        o += 1
        v |= (c & 0x7f) << s
        s += 7
        if c < 0x80:
            return v, o


def _str(b, o):
    n, o = _varint(b, o)
    return b[o:o + n].decode('utf-8', 'replace'), o + n


class Stream:
    """A decoded .vms file: schemas by generation, frames and events."""

    def __init__(self, path):
        b = open(path, 'rb').read()
        self.schemas = {}
        self.frames = []   # dicts: seq gen flags t_mono t_real missed lost late values{name: v}
        self.events = []   # dicts: type gen before_seq t_mono subject detail
        prev = {}
        o = 0
        while o < len(b):
            if b[o:o + 8] == b'VMSAMPL\x01':
                hsize = struct.unpack_from('<I', b, o + 12)[0]
                o += hsize
                prev = {}
                continue
            if o + 12 > len(b):
                break
            plen, typ, rflags, _ = struct.unpack_from('<IHHI', b, o)
            if o + 12 + plen + 4 > len(b):
                break  # a torn tail
            p = o + 12
            if typ == 1:
                gen, ncols, _t = struct.unpack_from('<IIq', b, p)
                q = p + 16
                cols = []
                for _ in range(ncols):
                    kind, unit, wrap, scale = struct.unpack_from('<BBBb', b, q)
                    q += 4
                    name, q = _str(b, q)
                    key, q = _str(b, q)
                    cols.append({'name': name, 'key': key, 'kind': kind, 'unit': unit})
                self.schemas[gen] = cols
                prev[gen] = [0] * ncols
            elif typ == 2:
                gen, flags, seq, tm, tr, missed, lost, cpu, late, ncols = struct.unpack_from('<IIQQqIIQQI', b, p)
                q = p + 60
                cols = self.schemas[gen]
                base = prev.setdefault(gen, [0] * ncols)
                vals = {}
                for i in range(ncols):
                    n, q = _varint(b, q)
                    if n == 0:
                        base[i] = 0
                        continue
                    if rflags & 1:
                        v = n - 1
                    else:
                        z = n - 1
                        d = (z >> 1) ^ -(z & 1)
                        v = (base[i] + d) % (1 << 64)
                    base[i] = v
                    vals[cols[i]['name']] = v
                self.frames.append({'seq': seq, 'gen': gen, 'flags': flags, 't_mono': tm, 't_real': tr,
                                    'missed': missed, 'lost': lost, 'late': late, 'self_cpu': cpu, 'v': vals})
            elif typ == 3:
                etype, gen, before, tm, tr = struct.unpack_from('<IIQQq', b, p)
                q = p + 32
                subj, q = _str(b, q)
                det, q = _str(b, q)
                self.events.append({'type': etype, 'gen': gen, 'before_seq': before, 't_mono': tm,
                                    'subject': subj, 'detail': det})
            o += 12 + plen + 4

    def key_of(self, gen, name):
        for c in self.schemas[gen]:
            if c['name'] == name:
                return c['key']
        return None


EV = {'VM_STARTED': 16, 'VM_STOPPED': 17, 'VM_CRASHED': 18, 'VM_PAUSED': 19, 'VM_RESUMED': 20,
      'VM_MIGRATED_IN': 21, 'VM_MIGRATED_OUT': 22, 'VM_DEFINED': 23, 'VM_UNDEFINED': 24, 'LIBVIRT_LOST': 32, 'LIBVIRT_BACK': 33}


class Checks:
    """Counts what was checked; fail() ends the test with exit 1."""

    def __init__(self, name):
        self.name = name
        self.n = 0

    def ok(self, cond, what):
        self.n += 1
        if not cond:
            self.fail(what)

    def fail(self, what):
        print('FAIL: %s: %s' % (self.name, what), flush=True)
        sys.exit(1)

    def done(self):
        print('%s: %d checks passed' % (self.name, self.n), flush=True)
        sys.exit(0)
