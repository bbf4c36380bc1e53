#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A fleet of hosts into one time-series engine (issue 25 items 2, 6, 8),
with the real receivers from Debian started here on 127.0.0.1 on free
ports with temporary directories (test_tsdb's servers): VictoriaMetrics
1.79 and Prometheus 2.42 (--web.enable-remote-write-receiver); with
VMS_VICTORIA=PATH, the VictoriaMetrics binary at PATH instead (v1.151
built from its Go module: doc/export.md, "A fleet").

Hosts are real samplers, each reading a proc root of its own whose
sys/kernel/hostname names it (the HOST record takes the hostname from the
proc root; the other files are links to this machine's /proc, so the
values are live).  The reference is `vmsampler dump` (and `dump --info`)
of each host's own file.  Checked:
  - two hosts stay two hosts: runs recorded as host-a and host-b, 10
    frames each, pushed into one VictoriaMetrics: two series per family,
    instance="host-a" and "host-b", 10 samples each with dump's values
    (on main: one series holding 20 samples);
  - --label: external labels on every series, a series' own label of the
    same name wins (Prometheus' external_labels), instance overridable;
    vmsampler_host_info carries dump --info's pairs as labels, value 1;
    bad names, reserved __ names, empty values, repeats: one line, exit 2;
  - tail --format influx: the host tag is the recorded hostname;
  - /metrics: no instance or job label (the scraper's), host_info there,
    no timestamps unless --timestamps;
  - staleness (item 6): a synthetic run (bench/report/report_gen, frames
    stamped from now) replayed into a growing file at its own pace;
    Prometheus scrapes export at 1 s and export pushes to it: when a VM
    stops, an instant query 2.5 s after its last sample answers nothing,
    pulled and pushed (on main the pulled series, stamped with the frames'
    times, is still there: 5 minutes of lookback);
  - the fleet (item 8): N hosts (default 50) sampling at 1 s for D
    seconds (default 20), each with an exporter per receiver (export
    --file --remote-write --rw-cursor); mid-run both receivers are
    killed and restarted and a few exporters are killed (SIGKILL) and
    restarted with their cursor; at the end every frame of every host is
    in each receiver exactly once under its own instance, value for value
    with dump.  VMS_FLEET_HOSTS and VMS_FLEET_SECONDS change the size;
    `tests/test_fleet.py --full` is the documented long run (bench/fleet/run.sh).
Without the servers: SKIP (77), a failure with VMS_REQUIRE_TSDB=1."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import unittest
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_tsdb  # noqa: E402
from test_tsdb import BIN, BUILD, Prometheus, ServerCase, Victoria, fetch, us_of, wait_for  # noqa: E402

FULL = '--full' in sys.argv
if FULL:
    sys.argv.remove('--full')
HOSTS = int(os.environ.get('VMS_FLEET_HOSTS', '50'))
SECONDS = int(os.environ.get('VMS_FLEET_SECONDS', '120' if FULL else '20'))


def check_prereqs():
    miss = [b for b in ('prometheus', test_tsdb.VICTORIA) if not shutil.which(b)]
    if miss:
        test_tsdb.skip_or_fail('no %s (Debian packages prometheus, victoria-metrics)' % ', '.join(miss))
    r = subprocess.run([BIN, 'export', '--file', '/nonexistent', '--remote-write', 'http://127.0.0.1:9/',
                        '--no-follow'], capture_output=True, text=True, timeout=30)
    if 'no remote write' in r.stderr or 'no HTTP server' in r.stderr:
        test_tsdb.skip_or_fail('this build has no remote write: ' + r.stderr.strip())


def proc_root(base, name):
    """A proc root for host NAME: this machine's /proc files (links: live
    values) and a sys/kernel of its own naming it."""
    root = os.path.join(base, 'proc-' + name)
    os.makedirs(os.path.join(root, 'sys', 'kernel', 'random'))
    os.makedirs(os.path.join(root, 'net'))
    for f in ('stat', 'loadavg', 'diskstats', 'meminfo', 'vmstat'):
        os.symlink('/proc/' + f, os.path.join(root, f))
    os.symlink('/proc/net/dev', os.path.join(root, 'net', 'dev'))
    for f, v in (('hostname', name), ('osrelease', os.uname().release),
                 ('random/boot_id', '00000000-0000-4000-8000-%012d' % (abs(hash(name)) % 10 ** 12))):
        with open(os.path.join(root, 'sys', 'kernel', f), 'w') as fo:
            fo.write(v + '\n')
    return root


def dump_frames(path):
    """[{column: cell}] of dump's CSV, in frame order."""
    out = subprocess.run([BIN, 'dump', path], capture_output=True, text=True, timeout=120, check=True).stdout
    lines = out.splitlines()
    head = lines[0].split(',')
    return [dict(zip(head, ln.split(','))) for ln in lines[1:]]


def dump_info(path):
    out = subprocess.run([BIN, 'dump', '--info', '--json', path], capture_output=True, text=True, timeout=60,
                         check=True).stdout
    return json.loads(out)


def ctxt_of(path):
    """{t_ms: stat.ctxt} of a host's file: the reference of node_context_switches_total."""
    return {us_of(f['time']) // 1000: float(f['stat.ctxt']) for f in dump_frames(path) if f['stat.ctxt'] != ''}


def vm_series(vm, match):
    """{frozenset(labels without __name__): [(t_ms, value)]} from VictoriaMetrics' raw export."""
    fetch(vm.url('/internal/force_flush'))
    st, body = fetch(vm.url('/api/v1/export?' + urllib.parse.urlencode({'match[]': match, 'start': '0'})))
    assert st == 200, body[:300]
    out = {}
    for line in body.decode().splitlines():
        s = json.loads(line)
        m = dict(s['metric'])
        m.pop('__name__')
        out.setdefault(frozenset(m.items()), []).extend(zip(s['timestamps'], s['values']))
    return {k: sorted(v) for k, v in out.items()}


def prom_series(prom, query, t_s=None):
    st, body = fetch(prom.url('/api/v1/query?' + urllib.parse.urlencode(
        {'query': query, 'time': '%.3f' % (t_s or time.time())})))
    assert st == 200, body[:300]
    out = {}
    for s in json.loads(body)['data']['result']:
        m = dict(s['metric'])
        m.pop('__name__', None)
        if 'values' in s:
            out[frozenset(m.items())] = [(round(float(t) * 1000), float(v)) for t, v in s['values']]
        else:
            out[frozenset(m.items())] = [(round(float(s['value'][0]) * 1000), float(s['value'][1]))]
    return out


def export_push(url, path, *extra, check=True):
    r = subprocess.run([BIN, 'export', '--file', path, '--remote-write', url, '--no-follow'] + list(extra),
                       capture_output=True, text=True, timeout=120)
    if check:
        assert r.returncode == 0, (r.returncode, r.stderr)
    return r


class Labels(ServerCase):
    """Item 2: the recorded host, --label, vmsampler_host_info."""

    @classmethod
    def setUpClass(cls):
        check_prereqs()
        import tempfile
        cls.base = tempfile.mkdtemp(prefix='vms-fleet.')
        cls.files = {}
        for name in ('host-a', 'host-b'):
            root = proc_root(cls.base, name)
            path = os.path.join(cls.base, name + '.vms')
            subprocess.run([BIN, '-q', '--proc-root', root, '-i', '100ms', '-n', '10', '-o', path],
                           check=True, timeout=60)
            cls.files[name] = path

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.base, ignore_errors=True)

    def test_two_hosts_stay_two_hosts(self):
        vm = self.server(Victoria)
        for name in ('host-a', 'host-b'):
            export_push(vm.url('/api/v1/write'), self.files[name])
        want = {frozenset({('instance', n)}): sorted(ctxt_of(p).items()) for n, p in self.files.items()}
        # acknowledged, and yet the last 3 samples of one host were missing
        # from the export right after once (CI): 10 s to show, a sample
        # never sent still fails below
        end = time.monotonic() + 10
        while True:
            got = vm_series(vm, 'node_context_switches_total')
            if all(len(got.get(k, ())) >= len(v) for k, v in want.items()) or time.monotonic() > end:
                break
            time.sleep(0.2)
        self.assertEqual(len(got), 2, {tuple(sorted(k)): len(v) for k, v in got.items()})
        for k, pts in want.items():
            self.assertEqual(len(pts), 10)
            self.assertEqual(got.get(k), pts, k)
        # every family: one series per host at most, never one holding both
        load = vm_series(vm, 'node_load1')
        self.assertEqual(sorted(dict(k)['instance'] for k in load), ['host-a', 'host-b'])
        self.assertEqual([len(v) for v in load.values()], [10, 10])
        print('two hosts: 2 series of node_context_switches_total, 10 samples each, = dump')

    def test_labels_precedence_and_host_info(self):
        vm = self.server(Victoria)
        path = self.files['host-a']
        export_push(vm.url('/api/v1/write'), path, '--label', 'job=vmhost', '--label', 'dc=par1',
                    '--label', 'device=ext')
        # a series without a device label takes the external one...
        load = vm_series(vm, 'node_load1')
        self.assertEqual(list(load), [frozenset({('instance', 'host-a'), ('job', 'vmhost'), ('dc', 'par1'),
                                                 ('device', 'ext')})])
        # ...one with its own keeps it (Prometheus: external labels never override)
        disks = vm_series(vm, 'node_disk_reads_completed_total')
        self.assertTrue(disks)
        for k in disks:
            d = dict(k)
            self.assertNotEqual(d['device'], 'ext')
            self.assertEqual((d['instance'], d['job'], d['dc']), ('host-a', 'vmhost', 'par1'))
        # vmsampler_host_info: dump --info's pairs as labels, 1 at every frame
        info = dump_info(path)
        self.assertEqual(info['hostname'], 'host-a')
        hi = vm_series(vm, 'vmsampler_host_info')
        self.assertEqual(len(hi), 1, hi)
        (labels, pts), = hi.items()
        want = {k: v for k, v in info.items() if v != ''}
        want.update(instance='host-a', job='vmhost', dc='par1', device='ext')
        self.assertEqual(dict(labels), want)
        self.assertEqual([v for _, v in pts], [1.0] * 10)
        # instance given: it replaces the recorded hostname
        export_push(vm.url('/api/v1/write'), self.files['host-b'], '--label', 'instance=b.example:9100')
        self.assertEqual(list(vm_series(vm, 'node_load1{instance="b.example:9100"}')),
                         [frozenset({('instance', 'b.example:9100')})])

    def test_label_usage(self):
        path = self.files['host-a']
        for args, what in ((['--label', '1job=x'], 'KEY must match'), (['--label', 'a-b=x'], 'KEY must match'),
                           (['--label', '__name__=x'], 'reserved'), (['--label', 'job='], 'empty VALUE'),
                           (['--label', 'job'], 'KEY=VALUE'), (['--label', '=x'], 'KEY=VALUE'),
                           (['--label', 'job=a', '--label', 'job=b'], 'the same KEY twice')):
            r = export_push('http://127.0.0.1:9/api/v1/write', path, *args, check=False)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn(what, r.stderr)
        r = subprocess.run([BIN, 'export', '--file', path, '--label', 'job=x'], capture_output=True, text=True,
                           timeout=30)
        self.assertEqual(r.returncode, 2)
        self.assertIn('--label goes with --remote-write', r.stderr)

    def test_influx_host_tag_is_the_recorded_host(self):
        out = subprocess.run([BIN, 'tail', '--no-follow', '--format', 'influx', self.files['host-b']],
                             capture_output=True, text=True, timeout=60, check=True).stdout
        hosts = set(re.findall(r',host=([^, ]+)', out))
        self.assertEqual(hosts, {'host-b'})
        out = subprocess.run([BIN, 'dump', '--format', 'influx', '--host', 'other', self.files['host-b']],
                             capture_output=True, text=True, timeout=60, check=True).stdout
        self.assertEqual(set(re.findall(r',host=([^, ]+)', out)), {'other'})

    def test_metrics_pull(self):
        """/metrics: no instance nor job (the scraper sets them), the host's
        identity in vmsampler_host_info, no timestamps unless asked."""
        path = self.files['host-a']
        info = dump_info(path)
        for extra, stamped in (([], False), (['--timestamps'], True)):
            p = subprocess.Popen([BIN, 'export', '--file', path, '--listen', '127.0.0.1:0'] + extra,
                                 stderr=subprocess.PIPE, text=True)
            self.procs.append(p)
            port = None
            while port is None:
                ln = p.stderr.readline()
                self.assertTrue(ln, 'export ended')
                m = re.search(r'127\.0\.0\.1:(\d+)/metrics', ln)
                port = m and int(m.group(1))
            url = 'http://127.0.0.1:%d/metrics' % port
            wait_for(lambda: fetch(url)[0] == 200, 20, 'a frame')
            text = fetch(url)[1].decode()
            p.terminate()
            p.wait()
            samples = [ln for ln in text.splitlines() if ln and not ln.startswith('#')]
            self.assertFalse([s for s in samples if re.search(r'[{,](instance|job)=', s)])
            hi = [s for s in samples if s.startswith('vmsampler_host_info{')]
            self.assertEqual(len(hi), 1, hi)
            for k, v in info.items():
                if v:
                    self.assertIn('%s="%s"' % (k, v.replace('\\', '\\\\').replace('"', '\\"')), hi[0])
            last = dump_frames(path)[-1]
            t_ms = us_of(last['time']) // 1000
            for s in samples:
                fields = s.rsplit('}', 1)[-1].split() if '}' in s else s.split()[1:]
                self.assertEqual(len(fields), 2 if stamped else 1, s)
                if stamped:
                    self.assertEqual(int(fields[1]), t_ms)


class Staleness(ServerCase):
    """Item 6: a VM that stops ends its series at once, pulled and pushed."""

    def test_stopped_vm_ends_at_once(self):
        check_prereqs()
        gen = os.path.join(BUILD, 'report_gen')
        if not os.access(gen, os.X_OK):
            test_tsdb.skip_or_fail('report_gen is not built')
        # db-02 stops at frame 9 and starts again at frame 34
        src = os.path.join(self.tmp, 'src.vms')
        t0 = int(time.time())
        subprocess.run([gen, '-n', '40', '-m', '3', '-i', '1000', '-t', str(t0), '--stop-frames', '25', src],
                       check=True, capture_output=True, timeout=60)
        ev = subprocess.run([BIN, 'dump', '--events', src], capture_output=True, text=True, check=True).stdout
        stop = [ln.split(',') for ln in ev.splitlines() if ',vm_stopped,' in ln]
        self.assertEqual([(s[0], s[6]) for s in stop], [('9', 'db-02')])
        data = open(src, 'rb').read()
        live = os.path.join(self.tmp, 'live.vms')
        # the first frame (the header, HOST, the schema) at once
        with open(live, 'wb') as f:
            f.write(data[:len(data) // 40])
        prom = self.server(Prometheus, start=False)
        exp_port = test_tsdb.free_port()
        with open(prom.conf, 'w') as f:
            f.write('global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n'
                    '  - job_name: pull\n    static_configs:\n      - targets: ["127.0.0.1:%d"]\n' % exp_port)
        prom.start()
        exp = subprocess.Popen([BIN, 'export', '--file', live, '--listen', '127.0.0.1:%d' % exp_port,
                                '--remote-write', prom.url('/api/v1/write'), '--rw-batch', '1',
                                '--label', 'job=push'],
                               stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.tmp, 'export.log'), 'w'))
        self.procs.append(exp)
        # the rest over 30 s (a record cut in two waits for its end in the
        # reader); db-02 leaves /metrics with the schema of frame 9
        url = 'http://127.0.0.1:%d/metrics' % exp_port
        start, done, gone = time.time(), len(data) // 40, None
        with open(live, 'ab') as f:
            while time.time() < start + 60:
                upto = min(len(data), int(len(data) * (time.time() - start + 1) / 30))
                if upto > done:
                    f.write(data[done:upto])
                    f.flush()
                    done = upto
                try:
                    st, body = fetch(url, timeout=5)
                except OSError:
                    st, body = 0, b''
                if st == 200 and b'vmsampler_frame_sequence' in body and b'db-02' not in body:
                    gone = gone or time.time()
                if gone and time.time() > gone + 3:
                    break
                time.sleep(0.25)
        self.assertTrue(gone, 'db-02 never left /metrics')
        self.check_ended(prom)

    def check_ended(self, prom):
        q = 'libvirt_domain_info_cpu_time_seconds_total{domain="db-02"}'
        for job in ('pull', 'push'):
            got = prom_series(prom, '%s[5m]' % q.replace('}', ',job="%s"}' % job))
            self.assertEqual(len(got), 1, (job, got))
            last = max(t for t, _ in list(got.values())[0]) / 1000
            wait_for(lambda: time.time() > last + 2.5, 10, 'time')
            now = prom_series(prom, q.replace('}', ',job="%s"}' % job), last + 2.5)
            self.assertEqual(now, {}, '%s: the stopped VM still answers 2.5 s after its last sample' % job)
            print('%s: db-02 ended at %.3f, nothing 2.5 s later' % (job, last))


def cpu_s(pid):
    """utime + stime of a process, seconds (0 once it is gone)."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            st = f.read().rsplit(')', 1)[1].split()
        return (int(st[11]) + int(st[12])) / os.sysconf('SC_CLK_TCK')
    except OSError:
        return 0.0


def rss_kib(pid):
    try:
        with open('/proc/%d/status' % pid) as f:
            for ln in f:
                if ln.startswith('VmRSS:'):
                    return int(ln.split()[1])
    except OSError:
        pass
    return 0


def du(path):
    n = 0
    for d, _, fs in os.walk(path):
        for f in fs:
            try:
                n += os.lstat(os.path.join(d, f)).st_blocks * 512
            except OSError:
                pass
    return n


def restart_victoria(vm):
    # SIGTERM: VictoriaMetrics acknowledges a request before its samples
    # are on disk (it flushes every second or so), so a SIGKILL loses what
    # it acknowledged last (measured: the first 4-5 s of every host, all
    # it had); no sender can make that good.  Prometheus (below) writes
    # its WAL before it answers: SIGKILL loses nothing.
    vm.proc.terminate()
    vm.proc.wait(30)
    vm.start()


def restart_prometheus(prom):
    prom.proc.kill()
    prom.proc.wait()
    prom.start()


class Fleet(ServerCase):
    """Item 8: HOSTS samplers at 1 s, each pushed into one VictoriaMetrics
    and one Prometheus; receivers and exporters killed mid-run."""

    def test_fleet(self):
        check_prereqs()
        import test_py_lib
        env = test_py_lib.host_env()
        # deduplication on, as a fleet runs it: an exporter killed between
        # a request the receiver took and its acknowledgement sends it again
        # (at least once; vmsampler(1), --rw-cursor), which VictoriaMetrics
        # would otherwise keep twice (Prometheus drops the repeat itself)
        vm = self.server(Victoria, '-dedup.minScrapeInterval=1ms')
        prom = self.server(Prometheus)
        names = ['fleet-%03d' % i for i in range(HOSTS)]
        files = {n: os.path.join(self.tmp, n + '.vms') for n in names}
        samplers, exporters = {}, {}
        # receivers' CPU from here on (their start-up left out), across restarts
        rx_base = {'vm': cpu_s(vm.proc.pid), 'prom': cpu_s(prom.proc.pid)}
        rx_used = {'vm': 0.0, 'prom': 0.0}

        def export(n, rx):
            url = (vm if rx == 'vm' else prom).url('/api/v1/write')
            log = open(os.path.join(self.tmp, '%s.%s.log' % (n, rx)), 'ab')
            p = subprocess.Popen([BIN, 'export', '--file', files[n], '--remote-write', url,
                                  '--rw-cursor', os.path.join(self.tmp, '%s.%s.cursor' % (n, rx)),
                                  '--label', 'job=fleet'], stdout=subprocess.DEVNULL, stderr=log)
            log.close()
            self.procs.append(p)
            exporters[(n, rx)] = p

        t_start = time.time()
        for n in names:
            root = proc_root(self.tmp, n)
            p = subprocess.Popen([BIN, '-q', '--proc-root', root, '-i', '1s', '-o', files[n]], env=env)
            self.procs.append(p)
            samplers[n] = p
        wait_for(lambda: all(os.path.exists(f) for f in files.values()), 30, 'the samplers\' files')
        for n in names:
            for rx in ('vm', 'prom'):
                export(n, rx)
        kill_at = {SECONDS * 0.3: 'receivers', SECONDS * 0.5: 'exporters'}
        killed = names[1:HOSTS:max(1, HOSTS // 5)][:5]
        while time.time() < t_start + SECONDS:
            el = time.time() - t_start
            for at in sorted(kill_at):
                if el >= at:
                    what = kill_at.pop(at)
                    if what == 'receivers':
                        for k, srv in (('vm', vm), ('prom', prom)):
                            rx_used[k] += cpu_s(srv.proc.pid) - rx_base[k]
                            rx_base[k] = 0.0
                        restart_victoria(vm)
                        restart_prometheus(prom)
                        print('%.1f s: VictoriaMetrics stopped (SIGTERM), Prometheus killed (SIGKILL), both '
                              'restarted' % el)
                    else:
                        for n in killed:
                            for rx in ('vm', 'prom'):
                                exporters[(n, rx)].kill()
                                exporters[(n, rx)].wait()
                        time.sleep(2)
                        for n in killed:
                            for rx in ('vm', 'prom'):
                                export(n, rx)
                        print('%.1f s: the exporters of %s killed (SIGKILL) and restarted with their cursors'
                              % (el, ' '.join(killed)))
            time.sleep(0.2)
        for p in samplers.values():
            p.terminate()
        for p in samplers.values():
            p.wait(30)
        t_stop = time.time()
        refs = {n: {us_of(f['time']) // 1000: f for f in dump_frames(files[n])} for n in names}
        nframes = sum(len(r) for r in refs.values())

        def seqs_vm():
            got = vm_series(vm, 'vmsampler_frame_sequence')
            return {dict(k)['instance']: v for k, v in got.items()}

        def seqs_prom():
            got = prom_series(prom, 'vmsampler_frame_sequence[1h]')
            return {dict(k)['instance']: v for k, v in got.items()}

        for rx, get in (('vm', seqs_vm), ('prom', seqs_prom)):
            try:
                wait_for(lambda: sum(len(v) for v in get().values()) >= nframes, 60,
                         '%s to hold every frame' % rx)
            except AssertionError:
                got = get()
                short = {n: (len(got.get(n, [])), len(refs[n])) for n in names
                         if len(got.get(n, [])) != len(refs[n])}
                logs = ''.join(open(os.path.join(self.tmp, '%s.%s.log' % (n, rx))).read()[-600:]
                               for n in list(short)[:2])
                raise AssertionError('%s: hosts short of frames (got, written): %s\n%s' % (rx, short, logs))
        ex_cpu = [cpu_s(p.pid) for p in exporters.values()]
        ex_rss = [rss_kib(p.pid) for p in exporters.values()]
        rx_cpu = {k: rx_used[k] + cpu_s(srv.proc.pid) - rx_base[k] for k, srv in (('vm', vm), ('prom', prom))}
        for p in exporters.values():
            p.terminate()
        for p in exporters.values():
            p.wait(30)
        # every frame of every host once, under its own instance, with dump's values
        for rx, get in (('vm', seqs_vm), ('prom', seqs_prom)):
            got = get()
            self.assertEqual(sorted(got), names, rx)
            for n in names:
                want = sorted((t, float(f['seq'])) for t, f in refs[n].items())
                self.assertEqual(got[n], want, (rx, n))
        ctxt_vm = {dict(k)['instance']: v for k, v in vm_series(vm, 'node_context_switches_total').items()}
        ctxt_prom = {dict(k)['instance']: v for k, v in
                     prom_series(prom, 'node_context_switches_total[1h]').items()}
        for n in names:
            want = sorted((t, float(f['stat.ctxt'])) for t, f in refs[n].items())
            self.assertEqual(ctxt_vm[n], want, n)
            self.assertEqual(ctxt_prom[n], want, n)
        # what it cost
        st, body = fetch(prom.url('/api/v1/query?' + urllib.parse.urlencode(
            {'query': 'count({job="fleet"})'})))
        series = int(float(json.loads(body)['data']['result'][0]['value'][1]))
        per_frame = series / HOSTS
        samples = per_frame * nframes
        fetch(vm.url('/internal/force_flush'))
        dur = t_stop - t_start
        res = {
            'victoria_metrics': vm.version(), 'hosts': HOSTS, 'seconds': round(dur, 1), 'frames': nframes, 'series': series,
            'samples': int(samples), 'samples_per_s': round(samples / dur),
            'vm_cpu_s': round(rx_cpu['vm'], 2), 'prom_cpu_s': round(rx_cpu['prom'], 2),
            'vm_cpu_us_per_sample': round(rx_cpu['vm'] / samples * 1e6, 2),
            'prom_cpu_us_per_sample': round(rx_cpu['prom'] / samples * 1e6, 2),
            'vm_disk_bytes_per_sample': round(du(vm.dir + '/data') / samples, 2),
            'prom_disk_bytes_per_sample': round(du(prom.dir + '/data') / samples, 2),
            'export_cpu_ms_per_frame': round(sum(ex_cpu) / len(ex_cpu) / (nframes / HOSTS) * 1e3, 3),
            'export_rss_kib_median': sorted(ex_rss)[len(ex_rss) // 2],
        }
        print('\nFLEET ' + json.dumps(res))


class SixtyVMs(ServerCase):
    """Item 8 at 60 VMs per host: a synthetic host (report_gen -m 60)
    pushed with export --file --no-follow into VictoriaMetrics; every
    frame's sequence arrives once; export's CPU per frame and peak RSS,
    samples per frame, VictoriaMetrics' disk per sample."""

    def test_sixty_vms(self):
        check_prereqs()
        gen = os.path.join(BUILD, 'report_gen')
        if not os.access(gen, os.X_OK):
            test_tsdb.skip_or_fail('report_gen is not built')
        frames = 3600 if FULL else 300
        src = os.path.join(self.tmp, 'h60.vms')
        subprocess.run([gen, '-n', str(frames), '-m', '60', '-t', str(int(time.time()) - frames - 60), src],
                       check=True, capture_output=True, timeout=300)
        vm = self.server(Victoria)
        cpu0 = cpu_s(vm.proc.pid)
        import resource
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.time()
        r = subprocess.run(['/usr/bin/time', '-f', 'maxrss_kib %M', BIN, 'export', '--file', src, '--remote-write',
                            vm.url('/api/v1/write'), '--no-follow', '--label', 'instance=h60'],
                           capture_output=True, text=True, timeout=1200)
        wall = time.time() - t0
        self.assertEqual(r.returncode, 0, r.stderr)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        ex_cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        rss = int(re.search(r'maxrss_kib (\d+)', r.stderr).group(1))
        # what VictoriaMetrics took becomes searchable within seconds (its
        # buffers of raw rows; force_flush in vm_series): 180 of 300 frames
        # at the first query once, on a machine at a load of 12
        def seq_points():
            got = vm_series(vm, 'vmsampler_frame_sequence{instance="h60"}')
            return list(got.values())[0] if len(got) == 1 else []
        try:
            wait_for(lambda: len(seq_points()) >= frames, 30, 'every frame searchable')
        except AssertionError:
            pass  # the assertion below says what is missing
        pts = seq_points()
        self.assertEqual([v for _, v in pts], [float(i) for i in range(1, frames + 1)])
        st, body = fetch(vm.url('/api/v1/series/count'))
        nser = json.loads(body)['data'][0]
        samples = nser * frames  # an upper bound: slow values are pushed at every frame (held)
        rx_cpu = cpu_s(vm.proc.pid) - cpu0
        res = {'victoria_metrics': vm.version(), 'frames': frames, 'series': nser, 'export_cpu_ms_per_frame': round(ex_cpu / frames * 1e3, 3),
               'export_maxrss_kib': rss, 'export_wall_s': round(wall, 1),
               'vm_cpu_us_per_sample': round(rx_cpu / samples * 1e6, 3),
               'vm_disk_bytes_per_sample': round(du(vm.dir + '/data') / samples, 3)}
        print('\nSIXTY ' + json.dumps(res))


if __name__ == '__main__':
    unittest.main(verbosity=2)
