/* SPDX-License-Identifier: MIT */
/* source_perf.c - perf_event counters through libperf: host-wide per CPU,
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
 * groups of one PMU count right.
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
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <perf/core.h>
#include <perf/cpumap.h>
#include <perf/evlist.h>
#include <perf/evsel.h>
#include <perf/threadmap.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "perfev.h"
#include "source.h"
#include "vmtab.h"

#define MAXEV VMS_PERF_MAX_EVENTS
#define NCLS 3 /* enum vms_perf_class: software, tracepoints, hardware */
#define RBUF (3 + 2 * MAXEV)
/* fds left for everything else when the soft limit is computed */
#define FD_RESERVE 64
#define PERF_FD_LINK "anon_inode:[perf_event]"

/* time columns of each class's group: time_enabled, tp_time_enabled, ... */
static const char *const cls_prefix[NCLS] = {"", "tp_", "hw_"};
static const char *const cls_name[NCLS] = {"software", "tracepoint", "hardware"};
_Static_assert(VMS_PERF_SOFTWARE == 0 && VMS_PERF_TRACEPOINT == 1 && VMS_PERF_HARDWARE == 2,
	       "classes index cls_prefix");

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

/* ---- small helpers ---------------------------------------------------- */

static const char *errname(int err)
{
	const char *n = strerrorname_np(err < 0 ? -err : err);
	return n ? n : "E?";
}

static int libperf_print(enum libperf_print_level level, const char *fmt, va_list ap)
{
	char buf[256];
	if (level > LIBPERF_INFO)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	buf[strcspn(buf, "\n")] = '\0';
	vms_debug("perf: libperf: %s", buf);
	return 0;
}

static int cpu_of(const struct perf *p, unsigned i)
{
	return perf_cpu_map__cpu(p->cpus, (int)i).cpu;
}

/* Open fds of this process (declare and open only). */
static unsigned count_fds(struct perf *p)
{
	int d = dup(p->selffd);
	unsigned n = 0;
	if (d < 0)
		return 0;
	DIR *dir = fdopendir(d);
	if (!dir) {
		close(d);
		return 0;
	}
	rewinddir(dir);
	for (struct dirent *e; (e = readdir(dir));)
		if (e->d_name[0] != '.')
			n++;
	closedir(dir);
	return n;
}

/* Make room for n more fds: within the soft RLIMIT_NOFILE, raised up to
 * the hard limit when needed.  True if they fit. */
static bool fd_reserve(struct perf *p, unsigned n)
{
	struct rlimit rl;
	if (!p->fds_counted) {
		p->fds_now = count_fds(p);
		p->fds_counted = true;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return false;
	uint64_t need = (uint64_t)p->fds_now + n + FD_RESERVE;
	if (rl.rlim_cur != RLIM_INFINITY && need > rl.rlim_cur) {
		if (rl.rlim_max != RLIM_INFINITY && need > rl.rlim_max)
			return false;
		/* twice as much as now, so that the next VMs fit too */
		rlim_t want = rl.rlim_cur * 2 > need + n ? rl.rlim_cur * 2 : need + n;
		if (rl.rlim_max != RLIM_INFINITY && want > rl.rlim_max)
			want = rl.rlim_max;
		rlim_t old = rl.rlim_cur;
		rl.rlim_cur = want;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			return false;
		vms_info("perf: raised the soft limit of open files (RLIMIT_NOFILE) from %llu to %llu "
			 "(hard limit %llu) for perf counters",
			 (unsigned long long)old, (unsigned long long)want,
			 (unsigned long long)rl.rlim_max);
	}
	p->fds_now += n;
	return true;
}

static bool is_perf_fd(struct perf *p, int fd)
{
	char name[16], link[sizeof(PERF_FD_LINK) + 1];
	if (fcntl(fd, F_GETFD) < 0)
		return false;
	snprintf(name, sizeof(name), "%d", fd);
	ssize_t n = readlinkat(p->selffd, name, link, sizeof(link));
	return n == (ssize_t)sizeof(PERF_FD_LINK) - 1 && memcmp(link, PERF_FD_LINK, (size_t)n) == 0;
}

/* fd `fd` is a perf event of ours with an id in ids[0..n): record it. */
static void fd_match(int fd, uint64_t id, const uint64_t *ids, int *fds, unsigned n, unsigned *next,
		     unsigned *found)
{
	unsigned k = *next;
	if (k >= n || ids[k] != id)
		for (k = 0; k < n && ids[k] != id; k++)
			;
	if (k == n || fds[k] >= 0)
		return;
	fds[k] = fd;
	(*found)++;
	*next = k + 1;
}

/* The fds that libperf just opened for the events with ids[0..n), in the
 * order it opened them.  The kernel hands out the lowest free fd, and the
 * process is single-threaded, so they are the n lowest free fds from `lo`
 * on; if another thread opened fds in between, a scan of /proc/self/fd
 * finds them.  0, or -EBADF if some id has no fd. */
static int fd_find(struct perf *p, int lo, const uint64_t *ids, int *fds, unsigned n)
{
	unsigned found = 0, next = 0;
	uint64_t id;
	for (unsigned k = 0; k < n; k++)
		fds[k] = -1;
	for (int fd = lo; found < n && fd < lo + (int)n + 256; fd++)
		if (is_perf_fd(p, fd) && ioctl(fd, PERF_EVENT_IOC_ID, &id) == 0)
			fd_match(fd, id, ids, fds, n, &next, &found);
	if (found < n) {
		int d = dup(p->selffd);
		DIR *dir = d >= 0 ? fdopendir(d) : NULL;
		if (!dir) {
			if (d >= 0)
				close(d);
			return -EBADF;
		}
		rewinddir(dir);
		for (struct dirent *e; found < n && (e = readdir(dir));) {
			int fd = atoi(e->d_name);
			if (e->d_name[0] != '.' && fd != dirfd(dir) && is_perf_fd(p, fd) &&
			    ioctl(fd, PERF_EVENT_IOC_ID, &id) == 0)
				fd_match(fd, id, ids, fds, n, &next, &found);
		}
		closedir(dir);
	}
	if (found < n)
		return -EBADF;
	for (unsigned k = 0; k < n; k++)
		fcntl(fds[k], F_SETFD, FD_CLOEXEC);
	return 0;
}

/* ---- groups ------------------------------------------------------------ */

static void grp_close(struct perf *p, struct grp *g)
{
	if (g->el) {
		perf_evlist__delete(g->el);
		p->nfds -= g->nev * g->ninst;
	}
	free(g->fd);
	free(g->prev);
	memset(g, 0, sizeof(*g));
}

/* One read(2): the values of the group's members (in class member order)
 * into vals, its enabled and running times.  0 or -errno. */
static int grp_read(struct perf *p, const struct grp *g, unsigned inst, uint64_t *vals, uint64_t *ena,
		    uint64_t *run)
{
	uint64_t *b = p->rbuf;
	size_t want = (3 + 2 * (size_t)g->nev) * sizeof(uint64_t);
	ssize_t n = read(g->fd[inst], b, want);
	if (n < 0)
		return -errno;
	if ((size_t)n != want || b[0] != g->nev)
		return -EIO;
	*ena = b[1];
	*run = b[2];
	for (unsigned j = 0; j < g->nev; j++)
		vals[g->pos[j]] = b[3 + 2 * j];
	return 0;
}

/* Open the available events of class c of es as one group on every
 * (cpu, thread) of the maps.  0, or -errno with nothing left open. */
static int grp_open(struct perf *p, struct grp *g, const struct evset *es, int c, struct perf_cpu_map *cpus,
		    struct perf_thread_map *threads, bool inherit)
{
	unsigned nev = es->cls_n[c];
	unsigned ninst = (unsigned)perf_cpu_map__nr(cpus) * (unsigned)perf_thread_map__nr(threads);
	uint64_t *ids = NULL;
	int *fds = NULL;
	struct perf_evsel *evs[MAXEV];
	int r;

	memset(g, 0, sizeof(*g));
	if (!nev || !ninst)
		return -EINVAL;
again:
	g->el = perf_evlist__new();
	if (!g->el)
		return -ENOMEM;
	for (unsigned k = 0; k < nev; k++) {
		struct perf_event_attr a = es->ev[es->cls_ev[c][k]].attr;
		a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;
		if (k == 0)
			a.read_format |= PERF_FORMAT_GROUP;
		a.inherit = inherit;
		a.inherit_thread = inherit && p->inherit_thread;
		evs[k] = perf_evsel__new(&a);
		if (!evs[k]) {
			r = -ENOMEM;
			goto fail;
		}
		perf_evlist__add(g->el, evs[k]);
	}
	perf_evlist__set_leader(g->el);
	/* the lowest free fd: where the kernel puts the first one */
	int lo = fcntl(p->selffd, F_DUPFD_CLOEXEC, 0);
	if (lo < 0) {
		r = -errno;
		goto fail;
	}
	close(lo);
	/* leader first: the members join its group on each cpu and thread */
	unsigned failed = nev;
	for (unsigned k = 0; k < nev && failed == nev; k++) {
		r = perf_evsel__open(evs[k], cpus, threads);
		if (r < 0) {
			perf_evlist__close(g->el);
			failed = k;
		}
	}
	if (r == -EINVAL && failed == 0 && inherit && p->inherit_thread) {
		/* a kernel before 5.13: no inherit_thread (forked processes
		 * are counted too) */
		perf_evlist__delete(g->el);
		g->el = NULL;
		p->inherit_thread = false;
		goto again;
	}
	if (r < 0)
		goto fail;
	g->nev = nev;
	g->ninst = ninst;
	p->nfds += nev * ninst;

	/* the ids, in the order libperf opened them: member by member, each
	 * on every cpu and thread */
	ids = calloc((size_t)nev * ninst, sizeof(*ids));
	fds = calloc((size_t)nev * ninst, sizeof(*fds));
	g->fd = calloc(ninst, sizeof(*g->fd));
	g->prev = calloc(ninst, sizeof(*g->prev));
	if (!ids || !fds || !g->fd || !g->prev) {
		r = -ENOMEM;
		goto fail;
	}
	unsigned nthr = (unsigned)perf_thread_map__nr(threads);
	for (unsigned k = 0; k < nev; k++) {
		for (unsigned i = 0; i < ninst; i++) {
			struct perf_counts_values cv;
			r = perf_evsel__read(evs[k], (int)(i / nthr), (int)(i % nthr), &cv);
			if (r < 0)
				goto fail;
			ids[k * ninst + i] = cv.id;
		}
	}
	r = fd_find(p, lo, ids, fds, nev * ninst);
	if (r < 0)
		goto fail;
	/* a group read lists the members in the order they joined the
	 * group: check it against the ids once */
	for (unsigned i = 0; i < ninst; i++) {
		g->fd[i] = fds[i];
		ssize_t n = read(g->fd[i], p->rbuf, (3 + 2 * nev) * sizeof(uint64_t));
		if (n != (ssize_t)((3 + 2 * nev) * sizeof(uint64_t)) || p->rbuf[0] != nev) {
			r = n < 0 ? -errno : -EIO;
			goto fail;
		}
		for (unsigned j = 0; j < nev; j++) {
			unsigned k;
			for (k = 0; k < nev && ids[k * ninst + i] != p->rbuf[4 + 2 * j]; k++)
				;
			if (k == nev || (i > 0 && g->pos[j] != k)) {
				r = -EIO;
				goto fail;
			}
			g->pos[j] = (uint8_t)k;
		}
		g->prev[i][0] = p->rbuf[1];
		g->prev[i][1] = p->rbuf[2];
	}
	free(ids);
	free(fds);
	return 0;
fail:
	free(ids);
	free(fds);
	if (g->el && !g->nev) {
		perf_evlist__delete(g->el);
		g->el = NULL;
	}
	grp_close(p, g);
	return r;
}

/* ---- events ----------------------------------------------------------- */

/* Where tracefs is (mounting it, as perf does, when it is nowhere). */
static int tracefs_find(struct perf *p)
{
	static const char *const dirs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	char path[96];
	struct stat st;

	if (p->tracefs[0] || p->tracefs_err)
		return p->tracefs_err;
	for (size_t i = 0; i < VMS_ARRAY_SIZE(dirs); i++) {
		snprintf(path, sizeof(path), "%s/events", dirs[i]);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			snprintf(p->tracefs, sizeof(p->tracefs), "%s", dirs[i]);
			return 0;
		}
		if (errno != ENOENT) {
			/* there, but not for us (tracefs is 0700) */
			snprintf(p->tracefs, sizeof(p->tracefs), "%s", dirs[i]);
			p->tracefs_err = -errno;
			return p->tracefs_err;
		}
	}
	if (mount("nodev", dirs[0], "tracefs", 0, NULL) == 0) {
		vms_info("perf: mounted tracefs on %s to look up tracepoint ids", dirs[0]);
		snprintf(p->tracefs, sizeof(p->tracefs), "%s", dirs[0]);
		return 0;
	}
	p->tracefs_err = -errno;
	return p->tracefs_err;
}

/* A tracepoint's id from tracefs; why: a hint for the message. */
static int tracepoint_id(struct perf *p, const struct vms_perf_evspec *s, uint64_t *id, char *why,
			 size_t whylen)
{
	char path[256], buf[32];
	int r = tracefs_find(p);
	if (r < 0) {
		if (p->tracefs[0])
			snprintf(why, whylen, "cannot look up tracepoint ids in %s", p->tracefs);
		else
			snprintf(why, whylen, "tracefs is not mounted on /sys/kernel/tracing and could not be");
		return r;
	}
	snprintf(path, sizeof(path), "%s/events/%s/%s/id", p->tracefs, s->tp_sys, s->tp_event);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		if (r == -ENOENT)
			snprintf(why, whylen, "no such tracepoint in %s/events (is its module loaded?)",
				 p->tracefs);
		else
			snprintf(why, whylen, "cannot read %s", path);
		return r;
	}
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0) {
		snprintf(why, whylen, "cannot read %s", path);
		return n < 0 ? -errno : -EIO;
	}
	buf[n] = '\0';
	char *end;
	unsigned long long v = strtoull(buf, &end, 10);
	if (end == buf || (*end != '\n' && *end != '\0')) {
		snprintf(why, whylen, "%s does not hold a number", path);
		return -EIO;
	}
	*id = v;
	return 0;
}

/* Can the event be opened: host-wide on every CPU, or per thread (on
 * this thread, with the VM's inherit flags)? */
static int probe(struct perf *p, const struct pev *e, bool per_thread)
{
	struct perf_thread_map *self = NULL;
	int r;
	if (per_thread) {
		pid_t tid = gettid();
		self = perf_thread_map__new_array(1, &tid);
		if (!self)
			return -ENOMEM;
	}
	for (;;) {
		struct perf_event_attr a = e->attr;
		a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		a.inherit = per_thread;
		a.inherit_thread = per_thread && p->inherit_thread;
		struct perf_evsel *ev = perf_evsel__new(&a);
		if (!ev) {
			r = -ENOMEM;
			break;
		}
		r = per_thread ? perf_evsel__open(ev, p->nocpu, self) : perf_evsel__open(ev, p->cpus, p->nothread);
		if (r == 0)
			perf_evsel__close(ev);
		perf_evsel__delete(ev);
		if (r == -EINVAL && a.inherit_thread) {
			p->inherit_thread = false;
			continue;
		}
		break;
	}
	perf_thread_map__put(self);
	return r;
}

static void log_unavailable(const struct evset *es, const struct pev *e, int err, const char *why)
{
	char hint[400] = "";
	if (!why[0] && (err == -EACCES || err == -EPERM)) {
		int paranoid = -9;
		FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
		if (f) {
			if (fscanf(f, "%d", &paranoid) != 1)
				paranoid = -9;
			fclose(f);
		}
		snprintf(hint, sizeof(hint), ": needs root or CAP_PERFMON (perf_event_paranoid is %d)", paranoid);
	} else if (!why[0] && e->cls == VMS_PERF_HARDWARE && (err == -ENOENT || err == -EOPNOTSUPP)) {
		snprintf(hint, sizeof(hint), ": this machine has no hardware PMU that counts it");
	} else if (why[0]) {
		snprintf(hint, sizeof(hint), ": %.390s", why);
	}
	if (e->required)
		vms_err("perf: required %s event %s is unavailable: %s (%s)%s", es->what, e->spec.name,
			errname(err), strerror(-err), hint);
	else
		vms_warn("perf: %s event %s is unavailable, its columns are left out: %s (%s)%s", es->what,
			 e->spec.name, errname(err), strerror(-err), hint);
}

/* Parse the configured events of one kind, look tracepoints up and probe
 * each: what cannot be opened is left out with one line, or stops the run
 * when it is required. */
static int evset_init(struct perf *p, struct evset *es, const struct vms_perf_events *conf, bool per_thread)
{
	char msg[256];
	es->what = per_thread ? "per-VM" : "host";
	for (unsigned i = 0; conf && i < conf->n && es->n < MAXEV; i++) {
		struct pev *e = &es->ev[es->n];
		if (vms_perf_event_parse(conf->v[i].name, &e->spec, msg, sizeof(msg)) < 0) {
			/* the loader checked it: only a config built by hand */
			vms_err("perf: %s", msg);
			return -EINVAL;
		}
		e->required = conf->v[i].required;
		e->cls = (int)e->spec.cls;
		e->attr = (struct perf_event_attr){
			.type = e->spec.type,
			.size = sizeof(struct perf_event_attr),
			.config = e->spec.config,
		};
		es->n++;
		int r = 0;
		char why[384] = "";
		if (e->spec.cls == VMS_PERF_TRACEPOINT) {
			uint64_t id = 0;
			r = tracepoint_id(p, &e->spec, &id, why, sizeof(why));
			e->attr.config = id;
		}
		if (r == 0)
			r = probe(p, e, per_thread);
		if (r < 0) {
			log_unavailable(es, e, r, why);
			if (e->required)
				return r == -EINVAL ? -EOPNOTSUPP : r;
			continue;
		}
		e->ok = true;
	}
	/* columns of a block: the events in configured order, then the time
	 * columns of each class that has events */
	for (unsigned i = 0; i < es->n; i++) {
		struct pev *e = &es->ev[i];
		if (!e->ok)
			continue;
		e->col = es->nok++;
		es->cls_ev[e->cls][es->cls_n[e->cls]++] = (uint8_t)i;
	}
	es->width = es->nok;
	for (int c = 0; c < NCLS; c++) {
		if (!es->cls_n[c])
			continue;
		es->tcol[c] = es->width;
		es->width += 2;
	}
	return 0;
}

static void evset_drop(struct evset *es, unsigned keep)
{
	/* keep the first `keep` available events (configured order) */
	unsigned seen = 0;
	for (unsigned i = 0; i < es->n; i++)
		if (es->ev[i].ok && seen++ >= keep)
			es->ev[i].ok = false;
	struct evset t = *es;
	memset(t.cls_n, 0, sizeof(t.cls_n));
	t.nok = 0;
	for (unsigned i = 0; i < t.n; i++) {
		struct pev *e = &t.ev[i];
		if (!e->ok)
			continue;
		e->col = t.nok++;
		t.cls_ev[e->cls][t.cls_n[e->cls]++] = (uint8_t)i;
	}
	t.width = t.nok;
	for (int c = 0; c < NCLS; c++) {
		if (!t.cls_n[c])
			continue;
		t.tcol[c] = t.width;
		t.width += 2;
	}
	*es = t;
}

/* ---- VMs ------------------------------------------------------------- */

static void thr_close(struct perf *p, struct vthr *t)
{
	for (int c = 0; c < NCLS; c++)
		grp_close(p, &t->g[c]);
}

static void vm_detach(struct perf *p, struct pvm *v)
{
	for (unsigned i = 0; i < v->nthr; i++)
		thr_close(p, &v->thr[i]);
	free(v->thr);
	v->thr = NULL;
	v->nthr = 0;
	if (v->taskfd >= 0)
		close(v->taskfd);
	v->taskfd = -1;
}

static void vm_free(struct perf *p, struct pvm *v)
{
	if (!v)
		return;
	vm_detach(p, v);
	free(v->name);
	free(v);
}

/* Add a thread's groups' current counts to the VM's retired totals and
 * close them. */
static void thr_retire(struct perf *p, struct pvm *v, struct vthr *t)
{
	for (int c = 0; c < NCLS; c++) {
		struct grp *g = &t->g[c];
		uint64_t ena = 0, run = 0;
		if (g->el && grp_read(p, g, 0, p->vals, &ena, &run) == 0) {
			for (unsigned k = 0; k < g->nev; k++)
				v->retired[c][k] += p->vals[k];
			v->retired[c][MAXEV] += ena;
			v->retired[c][MAXEV + 1] += run;
		}
	}
	thr_close(p, t);
}

static int tid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

/* The threads of the VM's process now. */
static int list_tids(int taskfd, pid_t **out, unsigned *n)
{
	int d = dup(taskfd);
	pid_t *v = NULL;
	unsigned cnt = 0, cap = 0;
	if (d < 0)
		return -errno;
	DIR *dir = fdopendir(d);
	if (!dir) {
		close(d);
		return -errno;
	}
	rewinddir(dir);
	for (struct dirent *e; (e = readdir(dir));) {
		char *end;
		long t = strtol(e->d_name, &end, 10);
		if (*end || t <= 0)
			continue;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 16;
			pid_t *nv = realloc(v, cap * sizeof(*nv));
			if (!nv) {
				free(v);
				closedir(dir);
				return -ENOMEM;
			}
			v = nv;
		}
		v[cnt++] = (pid_t)t;
	}
	closedir(dir);
	if (cnt)
		qsort(v, cnt, sizeof(*v), tid_cmp);
	*out = v;
	*n = cnt;
	return 0;
}

/* Open the VM's groups on every thread of its process.  All or nothing:
 * a thread left out would make the sums silently low (a thread that
 * exited meanwhile is no loss). */
static int vm_attach(struct perf *p, struct pvm *v)
{
	char path[32];
	struct stat st;
	pid_t *tids = NULL;
	unsigned ntid = 0;
	int r;

	snprintf(path, sizeof(path), "%d/task", (int)v->pid);
	v->taskfd = openat(p->proc_dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (v->taskfd < 0)
		return -errno;
	if (fstat(v->taskfd, &st) < 0) {
		r = -errno;
		goto fail;
	}
	v->nlink = st.st_nlink;
	r = list_tids(v->taskfd, &tids, &ntid);
	if (r < 0)
		goto fail;
	if (!fd_reserve(p, ntid * p->vm.nok)) {
		r = -EMFILE;
		goto fail;
	}
	v->thr = calloc(ntid ? ntid : 1, sizeof(*v->thr));
	if (!v->thr) {
		r = -ENOMEM;
		goto fail;
	}
	for (unsigned i = 0; i < ntid; i++) {
		struct vthr *t = &v->thr[v->nthr];
		struct perf_thread_map *tm = perf_thread_map__new_array(1, &tids[i]);
		if (!tm) {
			r = -ENOMEM;
			goto fail;
		}
		t->tid = tids[i];
		r = 0;
		for (int c = 0; c < NCLS && r == 0; c++)
			if (p->vm.cls_n[c])
				r = grp_open(p, &t->g[c], &p->vm, c, p->nocpu, tm, true);
		perf_thread_map__put(tm);
		if (r == -ESRCH) {
			thr_close(p, t); /* it exited since the listing */
			continue;
		}
		if (r < 0) {
			thr_close(p, t);
			goto fail;
		}
		v->nthr++;
	}
	free(tids);
	if (!v->nthr) {
		vm_detach(p, v);
		return -ESRCH;
	}
	return 0;
fail:
	free(tids);
	vm_detach(p, v);
	return r;
}

static struct pvm *vm_find(struct perf *p, const char *uuid)
{
	for (unsigned i = 0; i < p->nvm; i++)
		if (p->vms[i] && strcmp(p->vms[i]->uuid, uuid) == 0)
			return p->vms[i];
	return NULL;
}

static void vm_attach_log(struct perf *p, struct pvm *v)
{
	v->err = vm_attach(p, v);
	if (!v->err) {
		v->logged = false;
		return;
	}
	if (v->err == -EMFILE) {
		if (!p->fd_warned) {
			struct rlimit rl = {0, 0};
			getrlimit(RLIMIT_NOFILE, &rl);
			vms_warn("perf: too few file descriptors for the per-VM counters of VM %s (hard limit "
				 "%llu): its perf columns stay empty, and so do those of any later VM that "
				 "does not fit (raise the hard limit, e.g. LimitNOFILE=)",
				 v->name, (unsigned long long)rl.rlim_max);
			p->fd_warned = true;
		}
		v->logged = true;
	} else if (!v->logged && v->err != -ESRCH && v->err != -ENOENT) {
		/* ESRCH, ENOENT: the process is gone already, nothing to say */
		vms_warn("perf: cannot open the per-VM counters of VM %s (pid %d): %s (%s)", v->name,
			 (int)v->pid, errname(v->err), strerror(-v->err));
		v->logged = true;
	}
}

/* Bring p->vms in line with the VM set tab (declare; NULL: none). */
static int vms_sync(struct perf *p, const struct vms_vmtab *tab)
{
	static const struct vms_vmtab none;
	if (!tab)
		tab = &none;
	struct pvm **nv = NULL;
	unsigned n = 0;

	if (!p->vm.nok) {
		/* no per-VM events: nothing to keep */
		for (unsigned i = 0; i < p->nvm; i++)
			vm_free(p, p->vms[i]);
		p->nvm = 0;
		return 0;
	}
	if (tab->n) {
		nv = calloc(tab->n, sizeof(*nv));
		if (!nv)
			return -ENOMEM;
	}
	for (unsigned i = 0; i < p->nvm; i++)
		p->vms[i]->seen = false;
	for (unsigned i = 0; i < tab->n; i++) {
		const struct vms_vm *t = &tab->vm[i];
		if (t->pid <= 0)
			continue; /* no process to count (remote, Xen, not running) */
		struct pvm *v = vm_find(p, t->uuid);
		if (!v) {
			v = calloc(1, sizeof(*v));
			if (!v)
				goto nomem;
			memcpy(v->uuid, t->uuid, sizeof(v->uuid));
			v->uuid[VMS_UUID_LEN] = '\0';
			v->taskfd = -1;
			v->pid = t->pid;
			v->name = strdup(t->name ? t->name : "");
			if (!v->name) {
				free(v);
				goto nomem;
			}
			vm_attach_log(p, v);
		} else if (v->pid != t->pid || (v->err && v->err != -ESRCH)) {
			/* a new QEMU process under the same UUID: the old one's
			 * counts stay in the totals, which keep growing */
			for (unsigned k = 0; k < v->nthr; k++)
				thr_retire(p, v, &v->thr[k]);
			vm_detach(p, v);
			v->pid = t->pid;
			vm_attach_log(p, v);
		}
		if (strcmp(v->name, t->name ? t->name : "") != 0) {
			char *s = strdup(t->name ? t->name : "");
			if (!s)
				goto nomem;
			free(v->name);
			v->name = s;
		}
		v->seen = true;
		nv[n++] = v;
	}
	for (unsigned i = 0; i < p->nvm; i++)
		if (!p->vms[i]->seen)
			vm_free(p, p->vms[i]);
	free(p->vms);
	p->vms = nv;
	p->nvm = n;
	p->capvm = tab->n;
	return 0;
nomem:
	/* keep the old list; VMs made here and not in it are freed */
	for (unsigned i = 0; i < n; i++) {
		bool old = false;
		for (unsigned j = 0; j < p->nvm; j++)
			old |= p->vms[j] == nv[i];
		if (!old)
			vm_free(p, nv[i]);
	}
	free(nv);
	return -ENOMEM;
}

/* Close the groups of exited threads when nothing can count into them any
 * more: every live thread of the process is one with groups of its own.
 * Returns false when exited threads' groups had to stay open (a thread is
 * not reaped yet, or threads created by exited ones are alive): idle()
 * looks again later. */
static bool vm_reap(struct perf *p, struct pvm *v)
{
	struct stat st;
	char name[16];
	unsigned alive = 0, dead = 0;

	if (v->taskfd < 0 || fstat(v->taskfd, &st) < 0)
		return true;
	unsigned threads = st.st_nlink > 2 ? (unsigned)(st.st_nlink - 2) : 0;
	for (unsigned i = 0; i < v->nthr; i++) {
		snprintf(name, sizeof(name), "%d", (int)v->thr[i].tid);
		if (faccessat(v->taskfd, name, F_OK, 0) == 0)
			alive++;
		else
			dead++;
	}
	/* threads is counted before the look at each thread: a thread
	 * created meanwhile comes from a live one */
	if (!dead)
		return true;
	if (threads != alive)
		return false;
	unsigned k = 0;
	for (unsigned i = 0; i < v->nthr; i++) {
		snprintf(name, sizeof(name), "%d", (int)v->thr[i].tid);
		if (faccessat(v->taskfd, name, F_OK, 0) == 0)
			v->thr[k++] = v->thr[i];
		else
			thr_retire(p, v, &v->thr[i]);
	}
	v->nthr = k;
	return true;
}

/* ---- the source -------------------------------------------------------- */

static int perf_open(struct vms_source *src)
{
	struct perf *p = src->priv;
	const struct vms_source_conf *sc = src->sconf;
	int r;

	p->selffd = -1;
	p->proc_dirfd = src->proc_dirfd;
	p->inherit_thread = true;
	if (!sc)
		return -EINVAL;
	p->per_cpu = sc->per_cpu;
	libperf_init(libperf_print);
	p->selffd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (p->selffd < 0)
		return -errno;
	p->cpus = perf_cpu_map__new(NULL);
	p->nocpu = perf_cpu_map__dummy_new();
	p->nothread = perf_thread_map__new_dummy();
	if (!p->cpus || !p->nocpu || !p->nothread)
		return -ENOMEM;
	p->ncpu = (unsigned)perf_cpu_map__nr(p->cpus);

	r = evset_init(p, &p->host, &sc->host, false);
	if (r == 0)
		r = evset_init(p, &p->vm, &sc->vm, true);
	if (r < 0) {
		src->fatal = true;
		return r;
	}

	/* host groups: ncpu fds per event */
	p->fds_counted = false;
	if (p->host.nok) {
		unsigned keep = p->host.nok;
		while (keep && !fd_reserve(p, keep * p->ncpu))
			keep--;
		if (keep < p->host.nok) {
			vms_warn("perf: too few file descriptors for %u host events on %u CPUs: only the "
				 "first %u are counted",
				 p->host.nok, p->ncpu, keep);
			for (unsigned i = 0; i < p->host.n; i++)
				if (p->host.ev[i].required && p->host.ev[i].ok && p->host.ev[i].col >= keep) {
					src->fatal = true;
					return -EMFILE;
				}
			evset_drop(&p->host, keep);
		}
	}
	for (int c = 0; c < NCLS; c++) {
		if (!p->host.cls_n[c])
			continue;
		r = grp_open(p, &p->hg[c], &p->host, c, p->cpus, p->nothread, false);
		if (r < 0) {
			/* each event opened alone: the group as a whole did not
			 * (more hardware events than the PMU has counters) */
			bool req = false;
			for (unsigned k = 0; k < p->host.cls_n[c]; k++)
				req |= p->host.ev[p->host.cls_ev[c][k]].required;
			vms_log(req ? VMS_LOG_ERR : VMS_LOG_WARN,
				"perf: the %s host events cannot be counted as one group: %s (%s)%s",
				cls_name[c], errname(r), strerror(-r),
				req ? "" : "; their columns are left out");
			if (req) {
				src->fatal = true;
				return r == -EINVAL ? -EOPNOTSUPP : r;
			}
			for (unsigned k = 0; k < p->host.cls_n[c]; k++)
				p->host.ev[p->host.cls_ev[c][k]].ok = false;
			evset_drop(&p->host, MAXEV);
		}
	}
	return 0;
}

/* The columns of one block: "perf.<a>.<col>", or "vm.<a>.perf.<col>"
 * with the VM's UUID as key. */
static void declare_col(struct vms_schema_builder *b, const struct vms_coldef *d, const char *a,
			const char *col)
{
	if (d->key)
		vms_schema_addf(b, d, "vm.%s.perf.%s", a, col);
	else
		vms_schema_addf(b, d, "perf.%s.%s", a, col);
}

static void declare_block(struct vms_schema_builder *b, const struct evset *es, const char *key,
			  const char *a)
{
	for (unsigned i = 0; i < es->n; i++) {
		const struct pev *e = &es->ev[i];
		if (!e->ok)
			continue;
		struct vms_coldef d = {.kind = VMS_KIND_COUNTER, .unit = e->spec.unit, .wrap_bits = 64, .key = key};
		declare_col(b, &d, a, e->spec.name);
	}
	for (int c = 0; c < NCLS; c++) {
		if (!es->cls_n[c])
			continue;
		struct vms_coldef d = {.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_NS, .wrap_bits = 64, .key = key};
		char n1[32], n2[32];
		snprintf(n1, sizeof(n1), "%stime_enabled", cls_prefix[c]);
		snprintf(n2, sizeof(n2), "%stime_running", cls_prefix[c]);
		declare_col(b, &d, a, n1);
		declare_col(b, &d, a, n2);
	}
}

static int perf_declare(struct vms_source *src, struct vms_schema_builder *b)
{
	struct perf *p = src->priv;
	char cpu[16];

	p->vmgen = vms_vmtab_gen(src->vms);
	p->fds_counted = false; /* counted when a VM is attached */
	int r = vms_sync(p, src->vms);
	if (r < 0)
		return r;
	if (p->host.nok) {
		for (unsigned i = 0; p->per_cpu && i < p->ncpu; i++) {
			snprintf(cpu, sizeof(cpu), "cpu%d", cpu_of(p, i));
			declare_block(b, &p->host, NULL, cpu);
		}
		declare_block(b, &p->host, NULL, "all");
	}
	for (unsigned i = 0; i < p->nvm; i++)
		declare_block(b, &p->vm, p->vms[i]->uuid, p->vms[i]->name);
	return b->err;
}

/* Time columns and the multiplexing mark of one group read. */
static void times_out(uint64_t *blk, unsigned tcol, uint64_t ena, uint64_t run, uint64_t prev[2],
		      struct vms_tick_ctx *t)
{
	if (blk) {
		blk[tcol] = ena;
		blk[tcol + 1] = run;
	}
	if (ena - prev[0] > run - prev[1])
		t->flags |= VMS_FRAME_SCALED;
	prev[0] = ena;
	prev[1] = run;
}

static void sample_host(struct perf *p, uint64_t *slots, struct vms_tick_ctx *t)
{
	const struct evset *es = &p->host;
	unsigned w = es->width;
	uint64_t *all = slots + (p->per_cpu ? p->ncpu * w : 0);

	memset(p->acc, 0, w * sizeof(p->acc[0]));
	memset(p->none, 0, w * sizeof(p->none[0]));
	for (int c = 0; c < NCLS; c++) {
		struct grp *g = &p->hg[c];
		if (!es->cls_n[c])
			continue;
		for (unsigned i = 0; i < p->ncpu; i++) {
			uint64_t *blk = p->per_cpu ? slots + i * w : NULL;
			uint64_t ena = 0, run = 0;
			bool ok = grp_read(p, g, i, p->vals, &ena, &run) == 0;
			if (ok)
				times_out(blk, es->tcol[c], ena, run, g->prev[i], t);
			/* enabled but never on a counter: no estimate */
			bool known = ok && !(ena > 0 && run == 0);
			for (unsigned k = 0; k < g->nev; k++) {
				unsigned col = es->ev[es->cls_ev[c][k]].col;
				if (blk)
					blk[col] = known ? p->vals[k] : VMS_NONE;
				if (known)
					p->acc[col] += p->vals[k];
				else
					p->none[col] = true;
			}
			if (!ok) {
				if (blk)
					blk[es->tcol[c]] = blk[es->tcol[c] + 1] = VMS_NONE;
				p->none[es->tcol[c]] = p->none[es->tcol[c] + 1] = true;
			} else {
				p->acc[es->tcol[c]] += ena;
				p->acc[es->tcol[c] + 1] += run;
			}
		}
	}
	for (unsigned k = 0; k < w; k++)
		all[k] = p->none[k] ? VMS_NONE : p->acc[k];
}

static void sample_vm(struct perf *p, struct pvm *v, uint64_t *blk, struct vms_tick_ctx *t)
{
	const struct evset *es = &p->vm;
	unsigned w = es->width;
	struct stat st;

	if (v->taskfd < 0 && !v->nthr) {
		vms_slots_none(blk, w);
		return;
	}
	if (v->taskfd >= 0 && fstat(v->taskfd, &st) == 0 && st.st_nlink != v->nlink) {
		v->nlink = st.st_nlink;
		v->check = true;
		p->check = true;
	}
	for (int c = 0; c < NCLS; c++) {
		bool none = false;
		if (!es->cls_n[c])
			continue;
		uint64_t ena = v->retired[c][MAXEV], run = v->retired[c][MAXEV + 1];
		for (unsigned k = 0; k < es->cls_n[c]; k++)
			p->acc[k] = v->retired[c][k];
		for (unsigned i = 0; i < v->nthr; i++) {
			struct grp *g = &v->thr[i].g[c];
			uint64_t e = 0, r = 0;
			if (!g->el)
				continue;
			if (grp_read(p, g, 0, p->vals, &e, &r) < 0) {
				none = true;
				continue;
			}
			/* enabled but never on a counter: no estimate */
			if (e > 0 && r == 0)
				none = true;
			ena += e;
			run += r;
			for (unsigned k = 0; k < g->nev; k++)
				p->acc[k] += p->vals[k];
		}
		for (unsigned k = 0; k < es->cls_n[c]; k++)
			blk[es->ev[es->cls_ev[c][k]].col] = none ? VMS_NONE : p->acc[k];
		times_out(blk, es->tcol[c], ena, run, v->prev[c], t);
	}
}

static int perf_sample(struct vms_source *src, uint64_t *slots, struct vms_tick_ctx *t)
{
	struct perf *p = src->priv;
	if (vms_vmtab_gen(t->vms) != p->vmgen)
		return VMS_RESCHEMA;
	if (p->host.nok) {
		sample_host(p, slots, t);
		slots += (p->per_cpu ? p->ncpu + 1 : 1) * p->host.width;
	}
	for (unsigned i = 0; i < p->nvm; i++) {
		sample_vm(p, p->vms[i], slots, t);
		slots += p->vm.width;
	}
	return 0;
}

static void perf_idle(struct vms_source *src, uint64_t until_ns)
{
	struct perf *p = src->priv;
	(void)until_ns;
	if (!p->check)
		return;
	p->check = false;
	for (unsigned i = 0; i < p->nvm; i++) {
		struct pvm *v = p->vms[i];
		if (v->check && vm_reap(p, v))
			v->check = false;
		p->check |= v->check;
	}
}

static void perf_close(struct vms_source *src)
{
	struct perf *p = src->priv;
	for (unsigned i = 0; i < p->nvm; i++)
		vm_free(p, p->vms[i]);
	free(p->vms);
	p->vms = NULL;
	p->nvm = 0;
	for (int c = 0; c < NCLS; c++)
		grp_close(p, &p->hg[c]);
	perf_cpu_map__put(p->cpus);
	perf_cpu_map__put(p->nocpu);
	perf_thread_map__put(p->nothread);
	p->cpus = p->nocpu = NULL;
	p->nothread = NULL;
	if (p->selffd >= 0)
		close(p->selffd);
	p->selffd = -1;
}

VMS_SOURCE_OPS(perf, perf, .idle = perf_idle);
