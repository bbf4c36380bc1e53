#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tracesplit.py - the user-space share of one process's CPU time, from ftrace.

    tracesplit.py TRACEFILE PID SKIP

Why: this kernel accounts CPU time by ticks (CONFIG_TICK_CPU_ACCOUNTING,
HZ=250).  getrusage()'s utime+stime is exact, but the split between them
is decided by which timer ticks landed while the task ran; a sampler that
runs ~50 us every 10 ms, phase-locked to the 4 ms tick, gets all or none of
them, so ru_utime/ru_stime come out as "all user" or "all system".

TRACEFILE is the text `trace` of an ftrace instance that recorded
raw_syscalls:sys_enter, raw_syscalls:sys_exit and sched:sched_switch,
filtered to PID, with trace_clock=mono (bench/runner.c -T).

User time is the time between a sys_exit and the next sys_enter of the
task, i.e. everything it runs outside system calls.  A gap during which the
task was switched out (preempted in user space) is left out and counted in
`dropped`.  (Switches INTO the task cannot be used: on this kernel the
switch from the idle task of CPU 1 into the task is not recorded.)

A "sample" ends at the sys_exit of a system call during which the task
blocked (a switch-out with state S/D inside it): one per tick for a sampler
that sleeps once per tick.  The steady-state window runs from the SKIP-th
such wake-up to the last one, so start-up and exit are left out.

Prints key=value pairs, per sample:
  samples   wake-ups in the window
  user_us   user-space time (uncorrected; see gap_us)
  syscalls  system calls
  gap_us    user_us / syscalls.  For the calibration program (a loop of
            getppid() calls: no user work) this is what one kernel
            entry+exit adds to the measured user time, because the
            tracepoints fire inside the kernel's entry and exit paths;
            run.sh subtracts syscalls * gap_us(calibration) from user_us.
  dropped   gaps left out (preempted in user space), per sample
  kernel    per system call that did not block (read, pread64 and write
            per file descriptor, e.g. pread64[5]): name:calls per
            sample:mean traced time in the kernel in us (it includes the
            tracepoints' own cost, so it is for comparing calls and
            samplers):mean return value (bytes for read/pread64/write)
Timestamps are printed by the kernel in whole microseconds; truncation
errors are unbiased and average out over the window.
"""
import re
import sys

NAMES = {0: 'read', 1: 'write', 2: 'open', 3: 'close', 4: 'stat', 5: 'fstat', 7: 'poll',
         8: 'lseek', 21: 'access', 13: 'rt_sigaction', 14: 'rt_sigprocmask', 15: 'rt_sigreturn',
         17: 'pread64', 34: 'pause', 37: 'alarm', 72: 'fcntl', 201: 'time',
         228: 'clock_gettime', 257: 'openat', 262: 'newfstatat', 271: 'ppoll',
         286: 'timerfd_settime'}
NR = re.compile(r'NR (\d+) \(([0-9a-f]+)')
RET = re.compile(r'= (-?\d+)')
PER_FD = {0, 1, 17}
LINE = re.compile(r'^\s*(.*?)-(\d+)\s+\[(\d+)\]\s+\S+\s+(\d+)\.(\d+): (\w+): (.*)$')
SW = re.compile(r'prev_pid=(\d+) .*prev_state=(\S+) ==>')


def main():
    path, pid, skip = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    last_exit = None     # time of the last sys_exit, None if unknown
    switched = False     # switched out since last_exit / since sys_enter
    blocked = False      # blocked inside the current system call
    wake = 0
    acc = None           # [user_ns, syscalls, dropped] from wake-up SKIP on
    mark = None          # (wake-up count, acc) at the last wake-up
    enter = None         # (time, NR) of the current system call
    kern = {}            # name -> [calls, ns, sum of returns] (calls that did not block)
    kmark = {}
    with open(path, errors='replace') as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            t = int(m.group(4)) * 1000000000 + int(m.group(5)) * 1000
            ev, rest = m.group(6), m.group(7)
            if ev == 'sched_switch':
                s = SW.search(rest)
                if s and int(s.group(1)) == pid:
                    switched = True
                    if s.group(2)[0] in 'SDI':
                        blocked = True
                continue
            if int(m.group(2)) != pid:
                continue
            if ev == 'sys_enter':
                if acc is not None and last_exit is not None:
                    if switched:
                        acc[2] += 1
                    else:
                        acc[0] += t - last_exit
                if acc is not None:
                    acc[1] += 1
                nr = NR.match(rest)
                if nr:
                    k = int(nr.group(1))
                    name = NAMES.get(k, str(k))
                    if k in PER_FD:
                        name += '[%d]' % int(nr.group(2), 16)
                    enter = (t, name)
                else:
                    enter = None
                switched = False
                blocked = False
            elif ev == 'sys_exit':
                if acc is not None and enter is not None and not switched:
                    k = kern.setdefault(enter[1], [0, 0, 0])
                    k[0] += 1
                    k[1] += t - enter[0]
                    ret = RET.search(rest)
                    k[2] += int(ret.group(1)) if ret else 0
                enter = None
                if blocked:
                    wake += 1
                    if wake == skip:
                        acc = [0, 0, 0]
                        kern = {}
                    if acc is not None:
                        mark = (wake, list(acc))
                        kmark = {k: list(v) for k, v in kern.items()}
                last_exit = t
                switched = False
                blocked = False
    if mark is None or mark[0] <= skip:
        print('tracesplit: fewer than %d wake-ups in %s' % (skip + 1, path), file=sys.stderr)
        sys.exit(1)
    n = mark[0] - skip
    u, c, d = mark[1]
    ks = ','.join('%s:%.2f:%.2f:%.0f' % (k, v[0] / n, v[1] / v[0] / 1000, v[2] / v[0])
                  for k, v in sorted(kmark.items(), key=lambda kv: -kv[1][1]))
    print('samples=%d user_us=%.3f syscalls=%.3f gap_us=%.4f dropped=%.4f kernel=%s' %
          (n, u / n / 1000, c / n, (u / c / 1000) if c else 0, d / n, ks or '-'))


if __name__ == '__main__':
    main()
