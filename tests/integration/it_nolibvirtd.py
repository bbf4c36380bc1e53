#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""it_nolibvirtd - no libvirtd at all: the URI names a socket nobody
listens on (qemu:///system?socket=...), which is what a host without
libvirtd looks like to a client (the daemon itself is not stopped here:
it_libvirtd does that).

Checked: exit 0; every frame has the host columns, seq contiguous, no
missed tick; virt.connected 0 and no VM columns; one LIBVIRT_LOST event;
exactly one line on stderr, saying that per-VM statistics are
unavailable and that vmsampler keeps trying.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from itlib import EV, Checks, Sampler, Stream, log, need


def main():
    c = Checks('it_nolibvirtd')
    need(guests=False)
    out = '/tmp/it-nolibvirtd-%d.vms' % os.getpid()
    cfg = 'sources:\n  libvirt:\n    uri: "qemu:///system?socket=/run/vmsampler-it-nonexistent.sock"\n'
    s = Sampler('-i', '100ms', '-o', out, config=cfg, csv=False)
    time.sleep(8)  # the agent retries for a while meanwhile
    c.ok(s.stop() == 0, 'exit status')
    err = s.stderr()
    log('stderr: %r' % err)
    c.ok(err.count('\n') == 1, 'not exactly one line: %r' % err)
    c.ok('per-VM statistics unavailable' in err and 'keeps trying' in err, 'unclear line: %r' % err)
    st = Stream(out)
    c.ok(len(st.frames) >= 60, 'only %d frames' % len(st.frames))
    for i, f in enumerate(st.frames):
        c.ok(f['seq'] == i + 1 and f['missed'] == 0, 'frame %d: seq or missed ticks' % f['seq'])
        c.ok('cpu.all.user' in f['v'] and 'load.1m' in f['v'], 'frame %d: host columns' % f['seq'])
        c.ok(f['v'].get('virt.connected') == 0 and f['v'].get('virt.domains') == 0, 'frame %d: connected' % f['seq'])
        c.ok(not any(k.startswith('vm.') for k in f['v']), 'frame %d: VM columns' % f['seq'])
    c.ok(len(st.schemas) == 1, '%d generations' % len(st.schemas))
    c.ok([e['type'] for e in st.events] == [EV['LIBVIRT_LOST']], 'events: %s' % st.events)
    os.unlink(out)
    c.done()


if __name__ == '__main__':
    main()
