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
Timestamps are printed by the kernel in whole microseconds; truncation
errors are unbiased and average out over the window.
"""
import re
import sys

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
                switched = False
                blocked = False
            elif ev == 'sys_exit':
                if blocked:
                    wake += 1
                    if wake == skip:
                        acc = [0, 0, 0]
                    if acc is not None:
                        mark = (wake, list(acc))
                last_exit = t
                switched = False
                blocked = False
    if mark is None or mark[0] <= skip:
        print('tracesplit: fewer than %d wake-ups in %s' % (skip + 1, path), file=sys.stderr)
        sys.exit(1)
    n = mark[0] - skip
    u, c, d = mark[1]
    print('samples=%d user_us=%.3f syscalls=%.3f gap_us=%.4f dropped=%.4f' %
          (n, u / n / 1000, c / n, (u / c / 1000) if c else 0, d / n))


if __name__ == '__main__':
    main()
