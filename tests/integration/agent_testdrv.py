#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""agent_testdrv - the fallback path through the real agent, with
libvirt's test driver (test:///FILE, no daemon needed, runs anywhere the
build has libvirt): its domains have no QEMU process, so every value
comes from libvirt and vm.NAME.path says so.

The driver's bulk stats hold only the state group, so the agent must
notice that and switch to per-domain calls (virDomainGetCPUStats,
GetVcpus, InterfaceStats every tick; MemoryStats and BlockStats in the
slow path).  Checked: the 5 domains' columns from the first frame, keyed
by their UUID; from the second frame on, cpu, vcpu and net values in
every frame with path bits 0x700 (cpu, vcpu, net from libvirt, nothing
from the kernel), counters that never go back; balloon and block values
in some frames with path bits 0x6000 and slow_t, every domain at least
twice in 6 s with a 2 s refresh; the balloon values equal what
`virsh dommemstat` says for the same driver file (they are constants of
the test driver).
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from itlib import BIN, Checks, Stream, log

N = 5


def node_xml(path):
    with open(path, 'w') as f:
        f.write('<node>\n  <cpu><mhz>2400</mhz><nodes>1</nodes><sockets>1</sockets><cores>2</cores>'
                '<threads>1</threads></cpu>\n  <memory>25165824</memory>\n')
        for i in range(1, N + 1):
            f.write('''  <domain type='test'>
    <name>tdom-%03d</name>
    <uuid>00000000-0000-4000-8000-%012d</uuid>
    <memory unit='MiB'>128</memory>
    <vcpu>1</vcpu>
    <os><type arch='x86_64'>hvm</type></os>
    <devices>
      <disk type='file' device='disk'><source file='/nonexistent/tdom-%03d.qcow2'/><target dev='vda' bus='virtio'/></disk>
      <interface type='bridge'><mac address='52:54:00:00:00:%02x'/><source bridge='br0'/><target dev='tvnet%d'/><model type='virtio'/></interface>
      <memballoon model='virtio'/>
    </devices>
  </domain>
''' % (i, i, i, i, i))
        f.write('</node>\n')


def main():
    c = Checks('agent_testdrv')
    if not os.access(os.path.join(os.path.dirname(BIN), 'vmsampler-virt'), os.X_OK):
        print('SKIP: built without libvirt')
        sys.exit(77)
    tmp = tempfile.mkdtemp()
    node = os.path.join(tmp, 'node.xml')
    node_xml(node)
    uri = 'test://' + node
    cfg = os.path.join(tmp, 'c.yaml')
    # the host's interfaces: lo only, so that guests of a real libvirtd
    # starting beside this test (their taps: a new schema, and its line on
    # stderr) do not change what it checks
    open(cfg, 'w').write('sources:\n  libvirt:\n    uri: "%s"\n    refresh: 2s\n  netdev: {include: [lo]}\n' % uri)
    out = os.path.join(tmp, 'o.vms')
    env = dict(os.environ)
    env.pop('LIBVIRT_DEFAULT_URI', None)
    r = subprocess.run([BIN, '-c', cfg, '-i', '200ms', '-n', '30', '-o', out], capture_output=True, text=True,
                       env=env, timeout=120)
    c.ok(r.returncode == 0, 'exit %d: %s' % (r.returncode, r.stderr))
    c.ok(r.stderr == '', 'messages: %r' % r.stderr)
    st = Stream(out)
    fr = st.frames
    c.ok(len(fr) == 30, '%d frames' % len(fr))
    names = ['tdom-%03d' % i for i in range(1, N + 1)]
    for i, name in enumerate(names):
        pre = 'vm.%s.' % name
        c.ok(st.key_of(fr[0]['gen'], pre + 'cpu_time') == '00000000-0000-4000-8000-%012d' % (i + 1),
             '%s key' % name)
        last = {}
        slow = 0
        for f in fr[1:]:
            v = f['v']
            for col in ('cpu_time', 'cpu_user', 'cpu_system', 'vcpu0.time', 'net.tvnet%d.rx_bytes' % (i + 1),
                        'net.tvnet%d.tx_packets' % (i + 1)):
                c.ok(pre + col in v, '%s%s missing in frame %d' % (pre, col, f['seq']))
                c.ok(v[pre + col] >= last.get(col, 0), '%s%s went back' % (pre, col))
                last[col] = v[pre + col]
            c.ok(pre + 'vcpu0.slices' not in v, 'slices from nowhere')
            c.ok(v[pre + 'state'] == 1, 'state %s' % v.get(pre + 'state'))
            path = v[pre + 'path']
            c.ok(path & 0xff == 0 and path & 0x700 == 0x700, '%s path %#x' % (name, path))
            if pre + 'slow_t' in v:
                slow += 1
                c.ok(path & 0x6000 == 0x6000, '%s slow path bits %#x' % (name, path))
                c.ok(pre + 'block.vda.rd_reqs' in v and pre + 'block.vda.wr_bytes' in v, 'no block values')
                mem = subprocess.run(['virsh', '-c', uri, 'dommemstat', name], capture_output=True, text=True,
                                     env=env).stdout
                ms = dict((k, int(x)) for k, x in re.findall(r'^(\w+) (\d+)$', mem, re.M))
                c.ok(v[pre + 'balloon.current'] == ms['actual'], 'balloon.current %d vs %d' %
                     (v[pre + 'balloon.current'], ms['actual']))
                c.ok(v[pre + 'balloon.rss'] == ms['rss'], 'balloon.rss')
                c.ok(v[pre + 'balloon.usable'] == ms['usable'], 'balloon.usable')
        c.ok(slow >= 2, '%s: %d slow refreshes in 6 s' % (name, slow))
        log('%s: %d slow refreshes, cpu_time %d' % (name, slow, last['cpu_time']))
    c.done()


if __name__ == '__main__':
    main()
