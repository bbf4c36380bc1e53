/* SPDX-License-Identifier: MIT */
/* perf_group.c - the perf source's event groups (perf_int.h): fd
 * accounting, opening a class's group through libperf on CPUs or threads
 * and finding its fds, the tick's one read(2) per group; and the
 * configured events (tracefs, the probe at open, what is dropped). */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/capability.h>
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
#include "perf_int.h"
#include "priv.h"

/* ---- small helpers ---------------------------------------------------- */

const char *perf_errname(int err)
{
	const char *n = strerrorname_np(err < 0 ? -err : err);
	return n ? n : "E?";
}

int perf_libperf_print(enum libperf_print_level level, const char *fmt, va_list ap)
{
	char buf[256];
	if (level > LIBPERF_INFO)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	buf[strcspn(buf, "\n")] = '\0';
	vms_debug("perf: libperf: %s", buf);
	return 0;
}

int perf_cpu_of(const struct perf *p, unsigned i)
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
bool perf_fd_reserve(struct perf *p, unsigned n)
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

void perf_grp_close(struct perf *p, struct grp *g)
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
int perf_grp_read(struct perf *p, const struct grp *g, unsigned inst, uint64_t *vals, uint64_t *ena,
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
int perf_grp_open(struct perf *p, struct grp *g, const struct evset *es, int c, struct perf_cpu_map *cpus,
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
	perf_grp_close(p, g);
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
	/* a privilege the run lacks: one line for all the events it turns off */
	if (!e->required && (err == -EACCES || err == -EPERM)) {
		if (why[0] && e->cls == VMS_PERF_TRACEPOINT &&
		    vms_priv_missing(CAP_DAC_READ_SEARCH, "perf tracepoints (kvm:kvm_exit) are off: their ids are in "
							   "tracefs (mode 0700), read at start"))
			return;
		if (!why[0] && vms_priv_missing(vms_priv_perf_cap(), vms_priv_perf_off))
			return;
	}
	if (!why[0] && (err == -EACCES || err == -EPERM)) {
		int paranoid = -9;
		FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
		if (f) {
			if (fscanf(f, "%d", &paranoid) != 1)
				paranoid = -9;
			fclose(f);
		}
		if (paranoid > 2) /* Debian's and Ubuntu's patch: CAP_PERFMON is not enough */
			snprintf(hint, sizeof(hint),
				 ": perf_event_paranoid is %d (a Debian or Ubuntu kernel's setting): only CAP_SYS_ADMIN "
				 "opens perf events; kernel.perf_event_paranoid=2 lets CAP_PERFMON open them",
				 paranoid);
		else
			snprintf(hint, sizeof(hint), ": needs root or CAP_PERFMON (perf_event_paranoid is %d)",
				 paranoid);
	} else if (!why[0] && e->cls == VMS_PERF_HARDWARE && (err == -ENOENT || err == -EOPNOTSUPP)) {
		snprintf(hint, sizeof(hint), ": this machine has no hardware PMU that counts it");
	} else if (why[0]) {
		snprintf(hint, sizeof(hint), ": %.390s", why);
	}
	if (e->required)
		vms_err("perf: required %s event %s is unavailable: %s (%s)%s", es->what, e->spec.name,
			perf_errname(err), strerror(-err), hint);
	else
		vms_warn("perf: %s event %s is unavailable, its columns are left out: %s (%s)%s", es->what,
			 e->spec.name, perf_errname(err), strerror(-err), hint);
}

/* Parse the configured events of one kind, look tracepoints up and probe
 * each: what cannot be opened is left out with one line, or stops the run
 * when it is required. */
int perf_evset_init(struct perf *p, struct evset *es, const struct vms_perf_events *conf, bool per_thread)
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

void perf_evset_drop(struct evset *es, unsigned keep)
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
