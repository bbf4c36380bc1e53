/* SPDX-License-Identifier: MIT */
/* priv.h - least privilege: which capabilities the enabled sources need,
 * the switch to the `user:` of the configuration, and the line that says
 * what a missing privilege turns off (vmsampler(1), PRIVILEGES).
 *
 * Measured on Linux 6.18 (tests/test_priv.py runs every case as a real
 * unprivileged user):
 *   host /proc files, cgroup files, /proc/<pid>/stat, schedstat, cgroup,
 *   /proc/net/dev (taps)              none (world-readable)
 *   /proc/<qemu>/io                    CAP_SYS_PTRACE (or QEMU's own uid)
 *   perf, host-wide and per VM         CAP_PERFMON (CAP_SYS_ADMIN before
 *                                      Linux 5.8) when perf_event_paranoid
 *                                      > -1 (per-CPU: > 0; a VM of another
 *                                      user: always, or CAP_SYS_PTRACE)
 *   tracepoint ids (tracefs 0700)      CAP_DAC_READ_SEARCH, at start only
 *   the interference program           CAP_BPF (CAP_SYS_ADMIN before 5.8)
 *                                      for every bpf(2) call when
 *                                      unprivileged_bpf_disabled is set;
 *                                      CAP_PERFMON and CAP_DAC_READ_SEARCH
 *                                      to load and attach it, at start only */
#ifndef VMS_PRIV_H
#define VMS_PRIV_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

/* Capabilities as bits (1 << CAP_x). */
struct vms_privs {
	unsigned long long keep;  /* for the whole run */
	unsigned long long start; /* only while the sources open (vms_priv_started drops them) */
};

/* What the enabled sources of c need. */
void vms_priv_needed(const struct vms_config *c, struct vms_privs *p);
/* Before anything is opened.  With c->user set and started as root: the
 * user's uid, gid and groups, keeping exactly p's capabilities (libcap-ng);
 * already that user: nothing to do.  0, or -errno with one line in err
 * (a configuration error: exit 2). */
int vms_priv_drop(const struct vms_config *c, const struct vms_privs *p, char *err, size_t errlen);
/* After the sources, the ring and the outputs are open: the start-only
 * capabilities are dropped (from every set, ambient too). */
void vms_priv_started(const struct vms_privs *p);
/* Whether the effective set holds cap (the capget system call). */
bool vms_priv_have(int cap);
/* Where a source met EACCES/EPERM (outside the tick): without cap in the
 * effective set, one line (once per run and capability) that names it and
 * what is off without it, and true; with it, false (the refusal is not
 * about privilege: the caller says why). */
bool vms_priv_missing(int cap, const char *what);
/* What perf loses without its capability (one line for host and VMs). */
extern const char vms_priv_perf_off[];
/* The capability perf needs: CAP_PERFMON, or CAP_SYS_ADMIN before 5.8. */
int vms_priv_perf_cap(void);
/* CAP_BPF, or CAP_SYS_ADMIN where the kernel has no CAP_BPF. */
int vms_priv_bpf_cap(void);
/* The capability's name as capabilities(7) spells it ("CAP_PERFMON"). */
const char *vms_priv_name(int cap);

#endif
