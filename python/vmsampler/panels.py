# SPDX-License-Identifier: MIT
"""The panels of `plot`, by name and title (no numpy here: the command line
lists them in its --help without importing the plotting code)."""

TITLES = {
    'cpu': 'Host CPU: cpu.all (% of all CPUs, as sar -u ALL)',
    'load': 'Run queue, blocked tasks and load average',
    'cswch': 'Context switches and interrupts per second',
    'disk-util': 'Disk %util',
    'disk-aqu': 'Disk aqu-sz (average request queue length)',
    'net': 'Network throughput, kB/s (rx solid, tx dashed)',
    'vm-cpu': 'VM CPU (% of one CPU), busiest first',
    'vm-steal': 'VM steal (% of the interval, mean over vCPUs), most first',
}
PANELS = list(TITLES)
