#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""it_compare - vmsampler's per-VM values against `virsh domstats` taken in
the same tick window, on real guests.

The sampler runs as a user would (`vmsampler -i 100ms -o -`, CSV), with a
2 s slow refresh and the detail files read every tick
(sources.libvirt.detail_interval 0: mem.rss, read every 5 s by default, is
then in both frames of each bracket).  For each comparison, virsh runs
between two frames: `before` is the last frame whose reads started 20 ms
or more before virsh started, `after` the first one whose reads started
after virsh ended.
  running guests (vms-001..003):
    cpu_time/user/system, vcpu0.delay, net (guest view)
                              before <= libvirt <= after
    mem.rss vs balloon.rss * 1024   within [min, max] of before and after
  a suspended guest (vms-950, ours):
    vcpu0.delay               exactly equal, every round
    net                       in the bracket, and exactly equal to
                              `before` in a majority of rounds (a
                              broadcast on the bridge still reaches a
                              paused guest's tap)
    cpu_time/user/system      in the bracket, and exactly equal to
                              `before` whenever QEMU did not run between
                              the two reads (its idle timers sometimes do:
                              the test needs a majority of exact rounds)
    balloon.*, block.vda.*    the values of the slow batch taken after the
                              suspension equal virsh's, every field but
                              balloon.rss: that is QEMU's own RSS, read
                              by libvirt at the call, and QEMU's threads
                              still allocate while the guest is paused;
                              it is checked as the running guests' is
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from itlib import (STABLE, Checks, Sampler, domstats, log, need, remove, transient, uuid_of, virsh)

NET = [('rx_bytes', 'net.0.rx.bytes'), ('rx_packets', 'net.0.rx.pkts'), ('rx_errs', 'net.0.rx.errs'),
       ('rx_drop', 'net.0.rx.drop'), ('tx_bytes', 'net.0.tx.bytes'), ('tx_packets', 'net.0.tx.pkts'),
       ('tx_errs', 'net.0.tx.errs'), ('tx_drop', 'net.0.tx.drop')]
CPU = [('cpu_time', 'cpu.time'), ('cpu_user', 'cpu.user'), ('cpu_system', 'cpu.system')]
GROUPS = ('--cpu-total', '--vcpu', '--interface', '--balloon', '--block')


def bracket(s, t0, t1):
    """The frames before and after a virsh call that ran from t0 to t1."""
    while True:
        rows = s.snapshot()
        after = [r for r in rows if int(r[s.col['t_mono_ns']]) > t1]
        if after:
            break
        time.sleep(0.02)
    before = [r for r in rows if int(r[s.col['t_mono_ns']]) < t0 - 20 * 10**6]
    return before[-1], after[0]


def timed_domstats(name, *groups):
    t0 = time.monotonic_ns()
    d = domstats(name, *groups)
    t1 = time.monotonic_ns()
    return d, t0, t1


def main():
    c = Checks('it_compare')
    need()
    guest = transient(950)
    cfg = 'sources:\n  libvirt:\n    refresh: 2s\n    detail_interval: 0\n'
    s = Sampler('-i', '100ms', '-o', '-', config=cfg)
    try:
        s.wait_rows(5)
        tap = {}
        for name in STABLE + [guest]:
            c.ok('vm.%s.cpu_time' % name in s.col, 'no columns for %s' % name)
            d = domstats(name, '--interface')
            tap[name] = d['net.0.name']
            c.ok('vm.%s.net.%s.rx_bytes' % (name, tap[name]) in s.col, 'no tap column for %s' % name)
            # keyed by UUID: in CSV the key is not shown, the name is
        # ---- running guests: the bracket ----
        rounds = 0
        for rnd in range(4):
            for name in STABLE:
                d, t0, t1 = timed_domstats(name, *GROUPS)
                b, a = bracket(s, t0, t1)
                pre = 'vm.%s.' % name
                for ours, theirs in CPU:
                    vb, va = s.value(b, pre + ours), s.value(a, pre + ours)
                    c.ok(vb is not None and vb <= d[theirs] <= va,
                         '%s %s: libvirt %d not in [%s, %s]' % (name, ours, d[theirs], vb, va))
                vb, va = s.value(b, pre + 'vcpu0.delay'), s.value(a, pre + 'vcpu0.delay')
                c.ok(vb <= d['vcpu.0.delay'] <= va, '%s vcpu0.delay %d not in [%d, %d]' %
                     (name, d['vcpu.0.delay'], vb, va))
                for ours, theirs in NET:
                    col = '%snet.%s.%s' % (pre, tap[name], ours)
                    vb, va = s.value(b, col), s.value(a, col)
                    c.ok(vb <= d[theirs] <= va, '%s %s: %d not in [%d, %d]' % (name, col, d[theirs], vb, va))
                rb, ra = s.value(b, pre + 'mem.rss'), s.value(a, pre + 'mem.rss')
                c.ok(min(rb, ra) <= d['balloon.rss'] * 1024 <= max(rb, ra),
                     '%s mem.rss: %d not between %d and %d' % (name, d['balloon.rss'] * 1024, rb, ra))
                c.ok(s.value(a, pre + 'path') & 0x1f == 0x1f, '%s: not all from the kernel' % name)
                rounds += 1
        log('running guests: %d rounds in the bracket' % rounds)

        # ---- a suspended guest: exact ----
        virsh('suspend', guest)
        t_susp = time.time_ns()
        time.sleep(0.5)
        pre = 'vm.%s.' % guest
        exact = exact_net = 0
        n = 10
        for rnd in range(n):
            d, t0, t1 = timed_domstats(guest, '--cpu-total', '--vcpu', '--interface')
            b, a = bracket(s, t0, t1)
            for ours, theirs in CPU:
                vb, va = s.value(b, pre + ours), s.value(a, pre + ours)
                c.ok(vb <= d[theirs] <= va, '%s %s: %d not in [%d, %d]' % (guest, ours, d[theirs], vb, va))
            exact += s.value(b, pre + 'cpu_time') == d['cpu.time']
            c.ok(s.value(b, pre + 'vcpu0.delay') == d['vcpu.0.delay'] == s.value(a, pre + 'vcpu0.delay'),
                 'suspended vcpu0.delay: %d vs %d' % (s.value(b, pre + 'vcpu0.delay'), d['vcpu.0.delay']))
            # the tap still counts what reaches it while the guest is
            # paused (a broadcast on the bridge, an ARP of another guest):
            # in the bracket always, equal to `before` when nothing came
            net_exact = True
            for ours, theirs in NET:
                col = '%snet.%s.%s' % (pre, tap[guest], ours)
                vb, va = s.value(b, col), s.value(a, col)
                c.ok(vb <= d[theirs] <= va, 'suspended %s: libvirt %d not in [%d, %d]' % (col, d[theirs], vb, va))
                net_exact &= vb == d[theirs]
            exact_net += net_exact
            c.ok(s.value(a, pre + 'state') == 3, 'state is %s, not 3 (paused)' % s.value(a, pre + 'state'))
            time.sleep(0.15)
        log('suspended: cpu_time exactly equal in %d of %d rounds' % (exact, n))
        c.ok(exact * 2 > n, 'cpu_time exact in only %d of %d rounds' % (exact, n))
        log('suspended: net counters exactly equal in %d of %d rounds' % (exact_net, n))
        c.ok(exact_net * 2 > n, 'net counters exact in only %d of %d rounds' % (exact_net, n))

        # slow values: the first batch after the suspension, against virsh
        deadline = time.time() + 30
        slow = None
        while time.time() < deadline and not slow:
            for r in s.snapshot():
                t = s.value(r, pre + 'slow_t')
                if t and t > t_susp + 10**9:
                    slow = r
                    break
            time.sleep(0.1)
        c.ok(slow is not None, 'no slow values for %s within 30 s' % guest)
        d, t0, t1 = timed_domstats(guest, '--balloon', '--block')
        b, a = bracket(s, t0, t1)
        rb, ra = s.value(b, pre + 'mem.rss'), s.value(a, pre + 'mem.rss')
        c.ok(min(rb, ra) <= d['balloon.rss'] * 1024 <= max(rb, ra),
             'suspended mem.rss: %d not between %d and %d' % (d['balloon.rss'] * 1024, rb, ra))
        fields = 0
        for k, v in d.items():
            if not isinstance(v, int) or k == 'balloon.rss':
                continue
            if k.startswith('balloon.'):
                col = pre + 'balloon.' + k[8:].replace('-', '_')
            elif k.startswith('block.0.') and k.count('.') >= 3:
                col = pre + 'block.vda.' + k[8:].replace('.', '_')
            else:
                continue
            if col not in s.col:
                continue
            c.ok(s.value(slow, col) == v, '%s: ours %s, libvirt %d' % (col, s.value(slow, col), v))
            fields += 1
        c.ok(fields >= 20, 'only %d balloon/block fields compared' % fields)
        c.ok(s.value(slow, pre + 'path') >> 8 & 0x60 == 0x60, 'slow frame lacks the libvirt path bits')
        log('suspended: %d balloon and block fields equal to virsh' % fields)
        virsh('resume', guest)
        c.ok(s.stop() == 0, 'vmsampler exit status')
        err = s.stderr()
        c.ok(err == '', 'unexpected messages: %s' % err)
    finally:
        if s.p.poll() is None:
            s.stop()
        remove(guest)
    c.done()


if __name__ == '__main__':
    main()
