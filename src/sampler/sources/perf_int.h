/* SPDX-License-Identifier: MIT */
/* perf_int.h - the perf source's own header (perf_group.c, perf_vm.c,
 * source_perf.c): perf_event counters through libperf, host-wide per CPU,
 * and per VM on the threads of its QEMU process.
 *
 * Groups.  Events are split by PMU in up to three classes, each opened as
 * one event group per instance (a CPU, or a thread) and read with ONE
 * read(2) per tick (PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED |
 * TOTAL_TIME_RUNNING | ID):
 *   sw  software events: always running (time_running == time_enabled);
 *   tp  tracepoints: the same;
 *   hw  hardware events: they share the PMU's few counters and may be
 *       multiplexed.  Kept apart so that multiplexing never scales the
 *       software counts, which are exact.
 * Software events and tracepoints are not mixed in one group: measured on
 * Linux 6.18, in a group that mixes the two PMUs some members count
 * nothing ([sched:sched_switch, context-switches] reads 0 for the second,
 * [cs, cpu-migrations, sched:sched_switch] 0 for the third), while
 * groups of one PMU count right.  Measured again on 2026-11-27 (6.18, to
 * save the second read per VM thread): per CPU, [cs, sched:sched_switch]
 * counted 0 switches for the tracepoint; per thread, a vCPU of a minimal
 * KVM guest making 5000 port-I/O exits gave kvm:kvm_pio 1508 in [cs,
 * cpu-migrations, kvm:kvm_pio] and 5000 alone (5000 with the tracepoint
 * as leader, but that order failed in the first measurement).  So the
 * second read stays.
 *
 * Raw counts, and marks.  Values are the kernel's cumulative counts, never
 * scaled.  Each group has time_enabled and time_running columns.  When a
 * group ran only part of an interval (multiplexed: the increase of
 * time_running is smaller than that of time_enabled) the frame gets
 * VMS_FRAME_SCALED; a reader estimates the count over the interval as
 * dvalue * dtime_enabled / dtime_running.  A group that was enabled but
 * never ran (time_running 0) has no estimate: its values are VMS_NONE.
 *
 * libperf.  libperf (6.1) opens and owns the events: a perf_evlist of the
 * group's perf_evsels, perf_evlist__set_leader, perf_evsel__open of each
 * on a perf_cpu_map of the online CPUs (host) or a one-thread
 * perf_thread_map (per VM), perf_evlist__delete.  (Not set_maps +
 * perf_evlist__open: in 6.1 each evsel then holds references to the maps
 * that perf_evsel__delete never drops, a leak per VM thread; later
 * versions drop them.  Given to perf_evsel__open, the maps stay ours.)
 * Its public API cannot do the tick's read: perf_evsel__read with
 * PERF_FORMAT_GROUP callocs a buffer on every call and returns the
 * leader's value only, and there is no accessor for the fds it opened.  So at open, the event ids are taken
 * through libperf (perf_evsel__read with PERF_FORMAT_ID, where allocating
 * is fine), the fds carrying those ids are found with PERF_EVENT_IOC_ID
 * among the fds the open created (libperf opens them without O_CLOEXEC;
 * we set it), and the tick does its one read(2) per group on the leader's
 * fd.  The order of the values in a group read is checked against the ids
 * once, at open.
 *
 * Threads of a VM.  When a VM is first seen (declare), its groups are
 * opened on every thread in /proc/PID/task, with inherit (and
 * inherit_thread, Linux 5.13+, so that forked processes are not): threads
 * the VM creates later are counted by the kernel from their first
 * instruction in the group of the thread that created them, and what they
 * counted stays there when they exit.  So new threads need no discovery,
 * short-lived ones are not missed, and the per-VM sum is monotonic without
 * any work here.  What remains: a thread we opened groups on that exits
 * keeps its fds, since its groups still collect the counts of threads it
 * created.  Each tick one fstat(2) of /proc/PID/task (its link count is
 * 2 + the number of threads; the fd is kept open) tells whether threads
 * came or went; then idle() looks, and closes the groups of exited threads
 * as soon as every live thread of the VM is one that has groups of its own
 * (no thread can be counting into the exited ones), after adding their
 * final counts to the VM's retired totals.  When QEMU exits, all its groups
 * are retired that way: the VM's columns keep their last values until the
 * VM leaves the VM table.  Not covered: a thread created while the VM's
 * threads are being opened, by one not opened yet (a window of well under
 * a millisecond, once per VM), is not counted.
 *
 * Only open and declare log; sample allocates nothing and never logs;
 * idle only reads and closes. */
#ifndef VMS_PERF_INT_H
#define VMS_PERF_INT_H

#include <linux/perf_event.h>
#include <perf/core.h>
#include <perf/cpumap.h>
#include <perf/evlist.h>
#include <perf/threadmap.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "perfev.h"
#include "source.h"
#include "vmtab.h"

#define MAXEV VMS_PERF_MAX_EVENTS
#define NCLS 3 /* enum vms_perf_class: software, tracepoints, hardware */
#define RBUF (3 + 2 * MAXEV)
/* fds left for everything else when the soft limit is computed */
#define FD_RESERVE 64
#define PERF_FD_LINK "anon_inode:[perf_event]"


struct pev {
	struct vms_perf_evspec spec;
	struct perf_event_attr attr;
	bool required;
	bool ok;      /* opened in the probe at open: it has columns */
	int cls;
	unsigned col; /* column within a block */
};

/* The events of one kind (host-wide or per VM). */
struct evset {
	const char *what; /* "host" or "per-VM", for messages */
	struct pev ev[MAXEV];
	unsigned n;
	unsigned cls_n[NCLS];            /* available events per class */
	uint8_t cls_ev[NCLS][MAXEV];     /* class member -> index in ev */
	unsigned nok;
	unsigned width;                  /* columns of a block */
	unsigned tcol[NCLS];             /* time_enabled of the class (+1: time_running) */
};

/* One group of one class, opened by libperf on ninst instances. */
struct grp {
	struct perf_evlist *el; /* NULL: not open */
	unsigned ninst, nev;
	int *fd;                /* the leader's fd of each instance */
	uint64_t (*prev)[2];    /* time_enabled, time_running at the last read */
	uint8_t pos[MAXEV];     /* position in a group read -> class member */
};

struct vthr {
	pid_t tid;
	struct grp g[NCLS];
};

struct pvm {
	char uuid[VMS_UUID_LEN + 1];
	char *name;
	pid_t pid;
	int taskfd;             /* /proc/PID/task, -1 if not attached */
	nlink_t nlink;
	bool check;             /* the thread count changed: idle() looks */
	bool seen;
	bool logged;            /* its attach failure was logged */
	int err;                /* why it has no counters, 0 if it has */
	struct vthr *thr;
	unsigned nthr;
	uint64_t retired[NCLS][MAXEV + 2]; /* closed groups: values, enabled, running */
	uint64_t prev[NCLS][2];
};

struct perf {
	int proc_dirfd;
	int selffd;             /* /proc/self/fd: finding libperf's fds */
	bool per_cpu;
	bool inherit_thread;    /* the kernel has attr.inherit_thread */
	struct perf_cpu_map *cpus, *nocpu;
	struct perf_thread_map *nothread;
	unsigned ncpu;
	struct evset host, vm;
	struct grp hg[NCLS];    /* host groups: one instance per CPU */
	/* VMs, in VM table order */
	struct pvm **vms;
	unsigned nvm, capvm;
	uint32_t vm_every;      /* ticks between two reads of a VM's groups (sources.perf.vm_interval) */
	uint64_t vmgen;
	bool check;
	/* file descriptors */
	unsigned nfds;          /* perf fds we hold */
	unsigned fds_now;       /* fds of the process (valid if fds_counted) */
	bool fds_counted;       /* this open or declare counted them */
	bool fd_warned;
	/* tracefs */
	char tracefs[64];
	int tracefs_err;
	/* the tick */
	uint64_t rbuf[RBUF];
	uint64_t vals[MAXEV];
	uint64_t acc[MAXEV + 2 * NCLS];
	bool none[MAXEV + 2 * NCLS];
};

/* ---- perf_group.c: helpers, event groups, the configured events -------- */

const char *perf_errname(int err);
int perf_libperf_print(enum libperf_print_level level, const char *fmt, va_list ap);
int perf_cpu_of(const struct perf *p, unsigned i);
/* Make room for n more fds: within the soft RLIMIT_NOFILE, raised up to
 * the hard limit when needed.  True if they fit. */
bool perf_fd_reserve(struct perf *p, unsigned n);
void perf_grp_close(struct perf *p, struct grp *g);
/* One read(2): the values of the group's members (in class member order)
 * into vals, its enabled and running times.  0 or -errno. */
int perf_grp_read(struct perf *p, const struct grp *g, unsigned inst, uint64_t *vals, uint64_t *ena,
		    uint64_t *run);
/* Open the available events of class c of es as one group on every
 * (cpu, thread) of the maps.  0, or -errno with nothing left open. */
int perf_grp_open(struct perf *p, struct grp *g, const struct evset *es, int c, struct perf_cpu_map *cpus,
		    struct perf_thread_map *threads, bool inherit);
/* Parse the configured events of one kind, look tracepoints up and probe
 * each: what cannot be opened is left out with one line, or stops the run
 * when it is required. */
int perf_evset_init(struct perf *p, struct evset *es, const struct vms_perf_events *conf, bool per_thread);
void perf_evset_drop(struct evset *es, unsigned keep);

/* ---- perf_vm.c: the VMs and their threads --------------------------------- */

void perf_vm_free(struct perf *p, struct pvm *v);
/* Bring p->vms in line with the VM set tab (declare; NULL: none). */
int perf_vms_sync(struct perf *p, const struct vms_vmtab *tab);
/* Close the groups of exited threads when nothing can count into them any
 * more: every live thread of the process is one with groups of its own.
 * Returns false when exited threads' groups had to stay open (a thread is
 * not reaped yet, or threads created by exited ones are alive): idle()
 * looks again later. */
bool perf_vm_reap(struct perf *p, struct pvm *v);

#endif
