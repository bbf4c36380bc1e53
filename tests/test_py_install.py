#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The package as `pip install ./python` installs it, in the test venv that
scripts/test.sh makes (build/pyvenv: python3 -m venv, pip install
'./python[parquet,duckdb]' from PyPI), used from another directory so that
nothing comes from the source tree:
  - `import vmsampler` is the installed copy, and vmsampler.load() reads a
    recorded run into a DataFrame equal to the source tree's loader's rows;
  - the console script `vmsampler-py` and `python3 -m vmsampler` both run:
    plot writes a PNG, parquet a file pyarrow reads with one row per frame
    and column, sweep a CSV;
  - the installed files are those of python/vmsampler/ (not stale)."""
import filecmp
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_py_lib as L  # noqa: E402

PY = L.venv_python()
if PY is None:
    msg = 'no test venv (scripts/test.sh makes it in build/pyvenv: python3 -m venv, pip install ./python[parquet])'
    if L.REQUIRE:
        print('FAIL (VMS_REQUIRE_PY=1): ' + msg, file=sys.stderr)
        sys.exit(1)
    print('SKIP: ' + msg)
    sys.exit(77)
BINDIR = os.path.dirname(PY)
TMP = None
RUN = None


def setUpModule():
    global TMP, RUN
    TMP = tempfile.mkdtemp(prefix='vms-pyinstall.')
    RUN = L.record(os.path.join(TMP, 'run.vms'), '-i', '10ms', '-n', '50')


def tearDownModule():
    subprocess.run(['rm', '-rf', TMP])


def venv(*argv, **kw):
    env = dict(os.environ)
    env.pop('PYTHONPATH', None)
    env['PATH'] = BINDIR + os.pathsep + os.path.dirname(L.BIN) + os.pathsep + env.get('PATH', '')
    env.pop('VMS_BIN', None)   # vmsampler from PATH, as a user has it
    return subprocess.run(list(argv), capture_output=True, text=True, cwd=TMP, env=env, timeout=300, **kw)


class Installed(unittest.TestCase):
    def test_installed_package_is_the_source(self):
        r = venv(PY, '-c', 'import vmsampler, os; print(os.path.dirname(vmsampler.__file__))')
        self.assertEqual(r.returncode, 0, r.stderr)
        inst = r.stdout.strip()
        self.assertIn('site-packages', inst)
        src = os.path.join(L.SRC, 'python', 'vmsampler')
        names = sorted(f for f in os.listdir(src) if f.endswith('.py'))
        self.assertIn('__init__.py', names)
        match, mismatch, errors = filecmp.cmpfiles(src, inst, names, shallow=False)
        self.assertEqual((mismatch, errors), ([], []), 'installed copy differs: rerun scripts/test.sh')

    def test_load(self):
        code = ('import vmsampler, sys\n'
                'df = vmsampler.load(sys.argv[1])\n'
                'print(type(df).__name__, len(df), df["cpu.all.user"].dtype, int(df["cpu.all.user"].iloc[-1]))\n')
        r = venv(PY, '-c', code, RUN)
        self.assertEqual(r.returncode, 0, r.stderr)
        import vmsampler
        rows = vmsampler.load(RUN, pandas=False)
        self.assertEqual(r.stdout.split(), ['DataFrame', '50', 'UInt64', str(rows[-1]['cpu.all.user'])])

    def test_commands(self):
        r = venv(os.path.join(BINDIR, 'vmsampler-py'), '--version')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('vmsampler-py', r.stdout)
        r = venv(PY, '-m', 'vmsampler', 'plot', 'run.vms', '-o', 'run.png')
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(TMP, 'run.png'), 'rb') as f:
            self.assertEqual(f.read(4), b'\x89PNG')
        r = venv(os.path.join(BINDIR, 'vmsampler-py'), 'parquet', 'run.vms', 'run.parquet')
        self.assertEqual(r.returncode, 0, r.stderr)
        h, rows = L.dump_csv(RUN)
        r = venv(PY, '-c', 'import pyarrow.parquet as pq; print(pq.read_table("run.parquet").num_rows)')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(int(r.stdout), len(rows) * (len(h) - 9))
        r = venv(PY, '-m', 'vmsampler', 'sweep', 'run.vms', '--csv', 'sweep.csv', '--label', '1')
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(TMP, 'sweep.csv')) as f:
            self.assertTrue(f.readline().startswith('run,label,metric,n,mean,p5,p95'))


if __name__ == '__main__':
    L.main()
