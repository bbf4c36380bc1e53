#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""it_churn - a guest destroyed, started, paused, resumed, undefined and
defined again in a loop (VMS_IT_CHURN_SECONDS, default 60) under a
running sampler (200 ms ticks, binary output), next to the stable guests.

Checked:
  - no crash: exit status 0 on SIGTERM, seq contiguous, no missed tick;
  - no growth: the sampler's and the agent's open fds, counted at the same
    point of every round (the guest just started again), do not trend up.
    The sampler's perf_event fds are counted apart: the perf source keeps a
    counter per QEMU thread, and QEMU starts and ends worker threads as it
    likes (CI saw the total swing between 112 and 130 from one round to the
    next), so for them the smallest count of the last third of the rounds
    must stay within the range of the first third (a leak of one VM's
    counters per round, ~6 per thread, leaves it after a few rounds).  The
    other fds (kernel files, sockets) follow the VMs alone: the smallest of
    the last third is at most the smallest of the first third plus 2 (a
    leak of even one fd per round lifts the minimum by a third of the
    rounds, >= 3).  Their RSS grew by less than 2 MiB and 4 MiB;
  - columns appear and vanish cleanly: the churned guest's columns are in
    a generation exactly when it runs, keyed by its UUID (a new one after
    each undefine and define: its XML has no <uuid>); frames of those
    generations carry its cpu_time, except the one or two frames in which
    it just went away; the stable guests are in every frame;
  - the lifecycle events: started, stopped, paused, resumed, defined and
    undefined each at least as often as the loop did them (minus the
    ones in flight at the end), with the guest's UUID and name;
  - the state column is 3 (paused) in frames after a pause event and
    before the next resume or stop.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from itlib import (EV, STABLE, Checks, Sampler, Stream, fd_split, log, need, proc_status, remove,
                   transient, uuid_of, virsh)

XML = '/var/lib/vmsampler-vmlab/xml/%s.xml'


def main():
    c = Checks('it_churn')
    need()
    seconds = int(os.environ.get('VMS_IT_CHURN_SECONDS', '60'))
    guest = transient(952)
    uuids = {uuid_of(guest).lower()}  # a define without <uuid> makes a new one
    out = '/tmp/it-churn-%d.vms' % os.getpid()
    s = Sampler('-i', '200ms', '-o', out, csv=False)
    ops = {'start': 0, 'destroy': 0, 'suspend': 0, 'resume': 0, 'undefine': 0, 'define': 0}
    try:
        time.sleep(3)
        # warm up: a first round so that every buffer has its size
        virsh('suspend', guest)
        virsh('resume', guest)
        virsh('destroy', guest)
        virsh('start', guest)
        time.sleep(3)
        agent = s.agent_pid()
        c.ok(agent is not None, 'no agent process')
        fd0, rss0 = proc_status(s.p.pid)
        afd0, arss0 = proc_status(agent)
        log('after warm-up: sampler %d fds %d kB, agent %d fds %d kB' % (fd0, rss0, afd0, arss0))
        end = time.time() + seconds
        n = 0
        pfds, fds, afds = [], [], []
        while time.time() < end:
            n += 1
            virsh('suspend', guest)
            ops['suspend'] += 1
            time.sleep(0.4)
            virsh('resume', guest)
            ops['resume'] += 1
            time.sleep(0.4)
            virsh('destroy', guest)
            ops['destroy'] += 1
            time.sleep(0.4)
            if n % 3 == 0:
                virsh('undefine', guest)
                ops['undefine'] += 1
                time.sleep(0.3)
                virsh('define', XML % guest)
                ops['define'] += 1
                uuids.add(uuid_of(guest).lower())
            virsh('start', guest)
            ops['start'] += 1
            time.sleep(1.0)
            perf, other = fd_split(s.p.pid)
            pfds.append(perf)
            fds.append(other)
            afds.append(proc_status(agent)[0])
        time.sleep(2)
        fd1, rss1 = proc_status(s.p.pid)
        c.ok(s.agent_pid() == agent, 'the agent was restarted')
        afd1, arss1 = proc_status(agent)
        log('after %d rounds (%d s): sampler %d fds %d kB, agent %d fds %d kB' %
            (n, seconds, fd1, rss1, afd1, arss1))
        log('fds per round: sampler perf_event %s, other %s; agent %s' % (pfds, fds, afds))
        c.ok(n >= 9, 'only %d rounds: too few to see a trend' % n)
        third = n // 3
        for who, xs in (('sampler', fds), ('agent', afds)):
            c.ok(min(xs[-third:]) <= min(xs[:third]) + 2,
                 '%s fds grow: first rounds %s, last rounds %s' % (who, xs[:third], xs[-third:]))
        c.ok(min(pfds[-third:]) <= max(pfds[:third]),
             'sampler perf_event fds grow: first rounds %s, last rounds %s' % (pfds[:third], pfds[-third:]))
        c.ok(rss1 - rss0 < 2048, 'sampler RSS grew %d kB' % (rss1 - rss0))
        c.ok(arss1 - arss0 < 4096, 'agent RSS grew %d kB' % (arss1 - arss0))
        c.ok(s.stop() == 0, 'vmsampler exit status')
    finally:
        if s.p.poll() is None:
            s.stop()
        remove(guest)
    log('stderr: %r' % s.stderr()[-500:])
    log('operations: %s' % ops)

    st = Stream(out)
    fr = st.frames
    col = 'vm.%s.cpu_time' % guest
    for i, f in enumerate(fr):
        c.ok(f['seq'] == i + 1, 'seq %d at %d' % (f['seq'], i))
        c.ok(f['missed'] == 0, 'frame %d missed %d ticks' % (f['seq'], f['missed']))
        for name in STABLE:
            c.ok('vm.%s.cpu_time' % name in f['v'], '%s missing in frame %d' % (name, f['seq']))
    gens_with = {g for g, cols in st.schemas.items() if any(x['name'] == col for x in cols)}
    gens_without = set(st.schemas) - gens_with
    log('%d frames, %d generations (%d with %s)' % (len(fr), len(st.schemas), len(gens_with), guest))
    c.ok(len(gens_with) >= ops['start'] and len(gens_without) >= ops['destroy'] // 2,
         'generations: %d with, %d without, for %d starts' % (len(gens_with), len(gens_without), ops['start']))
    for g in gens_with:
        c.ok(st.key_of(g, col).lower() in uuids, 'generation %d: key %s' % (g, st.key_of(g, col)))
    c.ok(len(uuids) == ops['define'] + 1, '%d UUIDs for %d defines' % (len(uuids), ops['define']))
    # within a generation that has the guest, its values are missing only
    # at the very end (it went away just before the next declare)
    missing_run = 0
    for i, f in enumerate(fr):
        if f['gen'] in gens_with and col not in f['v']:
            missing_run += 1
            c.ok(missing_run <= 3, 'frame %d: %s missing for %d frames in a generation that has it' %
                 (f['seq'], guest, missing_run))
        else:
            missing_run = 0
    ev = [e for e in st.events if e['subject'].lower() in uuids]
    count = {k: sum(1 for e in ev if e['type'] == EV[k]) for k in
             ('VM_STARTED', 'VM_STOPPED', 'VM_PAUSED', 'VM_RESUMED', 'VM_DEFINED', 'VM_UNDEFINED')}
    log('events for %s: %s' % (guest, count))
    c.ok(count['VM_STARTED'] >= ops['start'], 'started events %d < %d' % (count['VM_STARTED'], ops['start']))
    c.ok(count['VM_STOPPED'] >= ops['destroy'], 'stopped events %d < %d' % (count['VM_STOPPED'], ops['destroy']))
    c.ok(count['VM_PAUSED'] >= ops['suspend'], 'paused events %d < %d' % (count['VM_PAUSED'], ops['suspend']))
    c.ok(count['VM_RESUMED'] >= ops['resume'], 'resumed events %d < %d' % (count['VM_RESUMED'], ops['resume']))
    c.ok(count['VM_DEFINED'] >= ops['define'], 'defined events %d' % count['VM_DEFINED'])
    c.ok(count['VM_UNDEFINED'] >= ops['undefine'], 'undefined events %d' % count['VM_UNDEFINED'])
    c.ok(all(e['detail'].startswith(guest + ': ') for e in ev), 'an event detail lacks the name')
    # the state column follows the events
    state = 'vm.%s.state' % guest
    paused_frames = 0
    for k, e in enumerate(ev):
        if e['type'] != EV['VM_PAUSED']:
            continue
        # the next event in the stream (it may come before the same frame)
        nxt = [x for x in ev[k + 1:] if x['type'] != EV['VM_PAUSED']]
        stop = nxt[0]['before_seq'] if nxt else fr[-1]['seq'] + 1
        for f in fr:
            if e['before_seq'] <= f['seq'] < stop and state in f['v']:
                c.ok(f['v'][state] == 3, 'frame %d: state %d after a pause' % (f['seq'], f['v'][state]))
                paused_frames += 1
    c.ok(paused_frames >= ops['suspend'] // 2, 'only %d paused frames' % paused_frames)
    os.unlink(out)
    c.done()


if __name__ == '__main__':
    main()
