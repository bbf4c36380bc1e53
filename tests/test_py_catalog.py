#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""python/vmsampler/catalog.py against the C catalogue (src/common/catalog.c,
printed by tests/catalog_dump.c):
  - the same groups, layouts and field lists;
  - derive() gives, name by name, the identity vms_catalog_derive() gives:
    every column of the recorded runs (format 1.0), of a run recorded now,
    and names the catalogue does not know;
  - rate_id() gives, name by name, the identity libvmsampler's rate plan
    gives each rate column (`dump --rates`' names) of the recorded runs and
    of a run recorded now, and names nothing when the catalogue does not
    know the name's layout;
  - the loader reads the identities of a format 1.2 file (what the sources
    declared), and they are what derive() gives for each name (what a 1.0 or 1.1
    file's columns get);
  - Parquet's entity and metric come from the identity."""
import os
import subprocess
import sys
import tempfile
import unittest

SRC = os.environ.get('VMS_SRCDIR', os.path.join(os.path.dirname(__file__), '..'))
BIN = os.environ.get('VMS_BIN', os.path.join(SRC, 'build', 'vmsampler'))
DUMP = os.environ.get('VMS_CATALOG_DUMP', os.path.join(SRC, 'build', 'tests', 'catalog_dump'))
FIXTURES = os.environ.get('VMS_FIXTURES', os.path.join(SRC, 'tests', 'fixtures'))
sys.path.insert(0, os.path.join(SRC, 'python'))
import vmsampler  # noqa: E402
from vmsampler import catalog  # noqa: E402

RUNS = os.path.join(FIXTURES, 'runs')
ODD = ['foo', 'foo.bar', 'cpu.x', 'disk.sda', 'vm.onlyname', 'vm..state', 'vm.x.vcpux.time',
       'vm.x.vcpu.time', 'vm.x.nosuch', '.x', 'disk.dm.0.rd_ios', 'net.eth0.100.rx_bytes',
       'vm.a.lv.vcpu3.delay', 'vm.a.cg.psi.io.full.total', 'psi.irq.full.total', 'mem.Active_anon',
       'vmstat.pgscan_kswapd_dma', 'perf.cpu3.kvm:kvm_exit', 'vm.a.perf.tp_time_enabled',
       'vm.a.net.vnet.0.rx_bytes', 'vm.a.block.vda.rd_bytes', 'vm.a.vcpu٣.time']


def c_derive(names):
    out = subprocess.run([DUMP, '-d'], input='\n'.join(names) + '\n', capture_output=True, text=True,
                         check=True).stdout
    return {l.split('\t')[0]: catalog.ColId(*l.split('\t')[1:]) for l in out.splitlines()}


def names_of(path):
    return [c.name for s in vmsampler.schemas(path) for c in s.cols]


class Catalog(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix='vms-pycat.')
        cls.new = os.path.join(cls.tmp, 'new.vms')
        subprocess.run([BIN, '-i', '10ms', '-n', '3', '-o', cls.new, '--proc-root',
                        os.path.join(FIXTURES, 'vms')], check=True, capture_output=True)

    @classmethod
    def tearDownClass(cls):
        subprocess.run(['rm', '-rf', cls.tmp])

    def test_tables(self):
        out = subprocess.run([DUMP], capture_output=True, text=True, check=True).stdout
        c = []
        for line in out.splitlines():
            g, head, mid, ent, sub, open_, fields = line.split('\t')
            c.append((g, head, mid, int(ent), int(sub), int(open_), tuple(f for f in fields.split(',') if f)))
        self.assertEqual(c, [tuple(g) for g in catalog.GROUPS])

    def test_derive_as_c(self):
        runs = [os.path.join(RUNS, f) for f in sorted(os.listdir(RUNS)) if f.endswith('.vms')]
        self.assertTrue(runs)
        names = ODD + [n for p in runs + [self.new] for n in names_of(p)]
        want = c_derive(names)
        for n in names:
            self.assertEqual(catalog.derive(n), want[n], n)
        # every column of the recorded runs has an identity
        for p in runs:
            for s in vmsampler.schemas(p):
                for col in s.cols:
                    self.assertTrue(col.id.group, col.name)

    def test_rate_id_as_c(self):
        host = os.path.join(self.tmp, 'host.vms')   # this host's /proc: meminfo, vmstat, (PSI)
        subprocess.run([BIN, '-i', '10ms', '-n', '3', '-o', host], check=True, capture_output=True)
        runs = [os.path.join(RUNS, f) for f in sorted(os.listdir(RUNS)) if f.endswith('.vms')] + [self.new, host]
        n = 0
        groups = set()
        for p in runs:
            out = subprocess.run([DUMP, '-r', p], capture_output=True, text=True, check=True).stdout
            for line in out.splitlines():
                name, *want = line.split('\t')
                self.assertEqual(catalog.rate_id(name), catalog.ColId(*want), name)
                groups.add(want[0])
                n += 1
        self.assertGreater(n, 500)
        # hosts' and VMs' groups, with and without entity and sub-entity
        self.assertTrue({'cpu', 'stat', 'load', 'mem', 'vmstat', 'disk', 'net', 'vm', 'vcpu', 'vmnet', 'vmio'} <= groups,
                        groups)
        for odd in ('foo', 'cpu.x', 'vm.onlyname', 'vm..x', 'vm.a.vcpux.%run', 'vm.a.net.tap'):
            self.assertEqual(catalog.rate_id(odd), catalog.ColId(), odd)
        self.assertEqual(catalog.rate_id('net.eth0.100.rxkB/s'), catalog.ColId('net', 'eth0.100', '', 'rxkB/s'))
        self.assertEqual(catalog.rate_id('vm.a.cg.psi.cpu.%some'), catalog.ColId('vmcg', 'a', '', 'psi.cpu.%some'))

    def test_declared_is_derived(self):
        with open(self.new, 'rb') as f:
            self.assertEqual(f.read(12)[10:12], b'\x02\x00')  # format 1.2
        n = 0
        for s in vmsampler.schemas(self.new):
            for col in s.cols:
                self.assertTrue(col.id.group, col.name)
                self.assertEqual(col.id, catalog.derive(col.name), col.name)
                self.assertEqual(catalog.colname(col.id.group, col.id.entity, col.id.sub, col.id.field),
                                 col.name)
                n += 1
        self.assertGreater(n, 10)
        # the frames decode as before
        self.assertEqual(len(list(vmsampler.read_frames(self.new))), 3)

    def test_parquet_entity_metric(self):
        try:
            from vmsampler import parquet
        except ImportError as e:  # numpy
            self.skipTest(str(e))
        for p in [self.new, os.path.join(RUNS, 'vmlab-3-plus-3-busy.vms')]:
            for name, ci in parquet.column_info(p).items():
                self.assertEqual(ci.entity + '.' + ci.metric, name)
        cases = {'cpu.all.user': ('cpu.all', 'user'), 'disk.dm.0.rd_ios': ('disk.dm.0', 'rd_ios'),
                 'psi.cpu.some.total': ('psi', 'cpu.some.total'), 'load.1m': ('load', '1m'),
                 'vm.a.vcpu0.delay': ('vm.a', 'vcpu0.delay'), 'vm.a.net.t.rx_bytes': ('vm.a', 'net.t.rx_bytes'),
                 'mem.MemTotal': ('mem', 'MemTotal'), 'perf.cpu1.cycles': ('perf.cpu1', 'cycles'),
                 'foo.bar': ('foo.bar', '')}
        for n, em in cases.items():
            self.assertEqual(parquet.entity_metric(n, catalog.derive(n)), em, n)


if __name__ == '__main__':
    unittest.main(verbosity=2)
