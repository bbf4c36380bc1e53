/* SPDX-License-Identifier: MIT */
/* bpf_interf.c - the interference program's loader (bpf_interf.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf_interf.h"
#include "grow.h"
#include "parse.h"
/* the skeleton holds the program's object as one string literal, and
 * bpftool declares a struct for each data section, empty for a section of
 * constants the compiler made (.rodata.cst16) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
#pragma GCC diagnostic ignored "-Wpedantic"
#include "interf.skel.h"
#pragma GCC diagnostic pop

#ifndef ENOTSUPP
#define ENOTSUPP 524 /* the kernel's, for a map type without an op */
#endif

struct vms_interf {
	struct interf *skel;
	int fd_threads, fd_vms, fd_acct, fd_stats, fd_waits, fd_tidbits, fd_tgidbits, fd_unwaits;
	uint32_t nbits; /* words in tidbits and tgidbits */
	/* a whole map as read (acct or waits), allocated at open: keys
	 * (bcap of the larger key) and their values */
	void *bkeys;
	uint64_t *bvals;
	uint32_t bcap;
	/* the threads map as read (vms_interf_read_threads), allocated at open */
	uint32_t *tkeys;
	struct interf_thread *tvals;
	uint32_t tcap;
	bool walk; /* the kernel refused batch ops (or a test asked): per entry */
	bool rq;   /* the program keeps rq_delay (vms_interf_read_rq) */
};

/* libbpf's own messages stay quiet: the reason is said once, by the
 * caller, from the error returned */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

int vms_interf_open(struct vms_interf **out, char *err, size_t errlen)
{
	return vms_interf_open_flags(out, 0, err, errlen);
}

/* every thread's run delay (field 2 of /proc/PID/task/TID/schedstat),
 * for rq_delay's start (interf.bpf.c, rqseed): TIDs and their delays, two
 * arrays as bpf_map_update_batch takes them */
struct rq_seed {
	uint32_t *tid;
	uint64_t *delay;
	uint32_t n, ctid, cdelay;
};

static void rq_seed_free(struct rq_seed *s)
{
	free(s->tid);
	free(s->delay);
	*s = (struct rq_seed){0};
}

static int rq_seed_add(struct rq_seed *s, uint32_t tid, uint64_t delay)
{
	uint32_t *t = vms_grow_array(s->tid, &s->ctid, s->n + 1, sizeof(*t), 1024);
	if (!t)
		return -ENOMEM;
	s->tid = t;
	uint64_t *d = vms_grow_array(s->delay, &s->cdelay, s->n + 1, sizeof(*d), 1024);
	if (!d)
		return -ENOMEM;
	s->delay = d;
	s->tid[s->n] = tid;
	s->delay[s->n++] = delay;
	return 0;
}

/* A thread gone meanwhile, or a file that does not parse, is left out
 * (it counts from its first switch-out). */
static int rq_seed_read(struct rq_seed *s)
{
	DIR *pd = opendir("/proc");
	if (!pd)
		return 0; /* no /proc: each task counts from its first switch-out */
	struct dirent *p;
	int r = 0;
	while (r == 0 && (p = readdir(pd))) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		char path[600], buf[128];
		snprintf(path, sizeof(path), "/proc/%s/task", p->d_name);
		DIR *td = opendir(path);
		struct dirent *t;
		while (r == 0 && td && (t = readdir(td))) {
			if (t->d_name[0] < '1' || t->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/task/%s/schedstat", p->d_name, t->d_name);
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
			struct vms_schedstat ss;
			if (n > 0 && vms_parse_schedstat(buf, (size_t)n, &ss) == 0)
				r = rq_seed_add(s, (uint32_t)strtoul(t->d_name, NULL, 10), ss.wait_ns);
			if (fd >= 0)
				close(fd);
		}
		if (td)
			closedir(td);
	}
	closedir(pd);
	if (r < 0)
		rq_seed_free(s);
	return r;
}

int vms_interf_open_flags(struct vms_interf **out, unsigned flags, char *err, size_t errlen)
{
	struct vms_interf *x = calloc(1, sizeof(*x));
	struct rq_seed seed = {0};
	int r;
	*out = NULL;
	if (!x) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	libbpf_set_print(quiet);
	x->rq = !(flags & VMS_INTERF_NO_RQ);
again:
	x->skel = interf__open();
	if (!x->skel) {
		r = -errno;
		snprintf(err, errlen, "cannot open the BPF program: %s", strerror(-r));
		goto fail;
	}
	x->skel->rodata->track_run = (flags & VMS_INTERF_RUN_TIME) != 0;
	x->skel->rodata->track_rq = x->rq;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	x->skel->rodata->rq_epoch = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (x->rq) {
		/* the host's threads (/proc/loadavg's fourth field), with room
		 * for those the read will find after the load */
		unsigned long run = 0, nthr = 0;
		FILE *la = fopen("/proc/loadavg", "re");
		if (!la || fscanf(la, "%*s %*s %*s %lu/%lu", &run, &nthr) != 2)
			nthr = 0;
		if (la)
			fclose(la);
		bpf_map__set_max_entries(x->skel->maps.rqseed, (uint32_t)(nthr < 1u << 20 ? 2 * nthr + 1024 : 1u << 21));
	} else { /* (the verifier drops rq_account's code: no maps for it) */
		bpf_map__set_autocreate(x->skel->maps.rqseen, false);
		bpf_map__set_autocreate(x->skel->maps.rqseed, false);
	}
	/* the per-CPU state: one entry per possible CPU */
	int ncpu = libbpf_num_possible_cpus();
	if (ncpu > 0 && ncpu <= INTERF_MAX_CPUS) {
		bpf_map__set_max_entries(x->skel->maps.cpus, (uint32_t)ncpu);
		bpf_map__set_max_entries(x->skel->maps.unwaits, (uint32_t)ncpu);
	}
	/* a bit per id up to pid_max (past it the program looks ids up) */
	unsigned long pid_max = 4194304; /* PID_MAX_LIMIT */
	FILE *pm = fopen("/proc/sys/kernel/pid_max", "r");
	if (pm) {
		if (fscanf(pm, "%lu", &pid_max) != 1 || pid_max > 4194304)
			pid_max = 4194304;
		fclose(pm);
	}
	x->nbits = (uint32_t)(pid_max / 64 + 1);
	bpf_map__set_max_entries(x->skel->maps.tidbits, x->nbits);
	bpf_map__set_max_entries(x->skel->maps.tgidbits, x->nbits);
	r = interf__load(x->skel);
	if (r && x->rq && r != -EPERM) {
		/* a kernel without task storage for tracepoint programs (or
		 * the kernel's BTF for sched_info): the rest without rq_delay */
		rq_seed_free(&seed);
		interf__destroy(x->skel);
		x->skel = NULL;
		x->rq = false;
		goto again;
	}
	if (r) {
		snprintf(err, errlen, "cannot load the BPF program: %s%s", strerror(-r),
			 r == -EPERM ? " (needs root, or CAP_BPF and CAP_PERFMON)" : "");
		goto fail;
	}
	/* the threads' run delay now, right before the attach: each counts
	 * its waits from here (a few more until the attach: its first
	 * switch-out adds them) */
	r = x->rq ? rq_seed_read(&seed) : 0;
	if (r < 0) {
		snprintf(err, errlen, "%s", strerror(-r));
		goto fail;
	}
	if (seed.n > bpf_map__max_entries(x->skel->maps.rqseed))
		seed.n = bpf_map__max_entries(x->skel->maps.rqseed); /* the rest from their first switch-out */
	if (x->rq && seed.n) {
		uint32_t cnt = seed.n;
		if (bpf_map_update_batch(bpf_map__fd(x->skel->maps.rqseed), seed.tid, seed.delay, &cnt, NULL) != 0)
			for (uint32_t i = 0; i < seed.n; i++) /* (a kernel without batch ops) */
				bpf_map_update_elem(bpf_map__fd(x->skel->maps.rqseed), &seed.tid[i], &seed.delay[i],
						    BPF_ANY);
	}
	rq_seed_free(&seed);
	r = interf__attach(x->skel);
	if (r) {
		snprintf(err, errlen, "cannot attach to the sched tracepoints: %s", strerror(-r));
		goto fail;
	}
	x->fd_threads = bpf_map__fd(x->skel->maps.threads);
	x->fd_vms = bpf_map__fd(x->skel->maps.vms);
	x->fd_acct = bpf_map__fd(x->skel->maps.acct);
	x->fd_stats = bpf_map__fd(x->skel->maps.stats);
	x->fd_waits = bpf_map__fd(x->skel->maps.waits);
	x->fd_tidbits = bpf_map__fd(x->skel->maps.tidbits);
	x->fd_tgidbits = bpf_map__fd(x->skel->maps.tgidbits);
	x->fd_unwaits = bpf_map__fd(x->skel->maps.unwaits);
	uint32_t ma = bpf_map__max_entries(x->skel->maps.acct), mw = bpf_map__max_entries(x->skel->maps.waits);
	x->bcap = ma > mw ? ma : mw;
	x->bkeys = calloc(x->bcap, sizeof(struct interf_key) > sizeof(struct interf_wkey) ? sizeof(struct interf_key)
											 : sizeof(struct interf_wkey));
	x->bvals = calloc(x->bcap, sizeof(*x->bvals));
	x->tcap = bpf_map__max_entries(x->skel->maps.threads);
	x->tkeys = calloc(x->tcap, sizeof(*x->tkeys));
	x->tvals = calloc(x->tcap, sizeof(*x->tvals));
	if (!x->bkeys || !x->bvals || !x->tkeys || !x->tvals) {
		r = -ENOMEM;
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		goto fail;
	}
	*out = x;
	return 0;
fail:
	rq_seed_free(&seed);
	vms_interf_close(x);
	return r < 0 ? r : -EINVAL;
}

void vms_interf_close(struct vms_interf *x)
{
	if (!x)
		return;
	interf__destroy(x->skel);
	free(x->bkeys);
	free(x->bvals);
	free(x->tkeys);
	free(x->tvals);
	free(x);
}

static int update(int fd, const void *k, const void *v)
{
	if (bpf_map_update_elem(fd, k, v, BPF_ANY) == 0)
		return 0;
	return errno == E2BIG || errno == ENOMEM ? -E2BIG : -errno;
}

/* id's bit in the array fd (tidbits or tgidbits) set or cleared; an id
 * past it is looked up by the program without one.  The loader is the
 * only writer (a word read, changed, written back). */
static int set_bit(struct vms_interf *x, int fd, uint32_t id, bool on)
{
	uint32_t w = id >> 6;
	uint64_t v;
	if (w >= x->nbits)
		return 0;
	if (bpf_map_lookup_elem(fd, &w, &v) != 0)
		return -errno;
	v = on ? v | 1ull << (id & 63) : v & ~(1ull << (id & 63));
	return bpf_map_update_elem(fd, &w, &v, BPF_ANY) == 0 ? 0 : -errno;
}

/* Thread tid's entry deleted (if any).  Had it begun a wait the program
 * will now never end, that wait is taken off its CPU's count of waits
 * (unwaits[cpu], which the program subtracts): else the CPU would keep
 * every segment in its ring for good. */
static int drop_thread(struct vms_interf *x, uint32_t tid)
{
	struct interf_thread t;
	if (bpf_map_lookup_and_delete_elem(x->fd_threads, &tid, &t) != 0) {
		if (errno == ENOENT)
			return 0;
		if (bpf_map_lookup_elem(x->fd_threads, &tid, &t) != 0)
			return errno == ENOENT ? 0 : -errno;
		if (bpf_map_delete_elem(x->fd_threads, &tid) != 0 && errno != ENOENT)
			return -errno;
	}
	if (t.role == INTERF_VICTIM && t.waiting) {
		uint64_t u;
		if (bpf_map_lookup_elem(x->fd_unwaits, &t.wait_cpu, &u) != 0)
			return errno == ENOENT ? 0 : -errno;
		u++;
		if (bpf_map_update_elem(x->fd_unwaits, &t.wait_cpu, &u, BPF_ANY) != 0)
			return -errno;
	}
	return 0;
}

int vms_interf_thread(struct vms_interf *x, uint32_t tid, uint32_t vm, bool victim)
{
	struct interf_thread t = {.vm = vm, .role = victim ? INTERF_VICTIM : INTERF_MEMBER};
	int r = drop_thread(x, tid); /* a wait it had begun is not counted again */
	if (r < 0)
		return r;
	r = update(x->fd_threads, &tid, &t);
	return r < 0 ? r : set_bit(x, x->fd_tidbits, tid, true);
}

int vms_interf_forget_thread(struct vms_interf *x, uint32_t tid)
{
	int r = set_bit(x, x->fd_tidbits, tid, false);
	return r < 0 ? r : drop_thread(x, tid);
}

int vms_interf_vm(struct vms_interf *x, uint32_t tgid, uint32_t vm)
{
	int r = update(x->fd_vms, &tgid, &vm);
	return r < 0 ? r : set_bit(x, x->fd_tgidbits, tgid, true);
}

int vms_interf_forget_vm(struct vms_interf *x, uint32_t tgid)
{
	int r = set_bit(x, x->fd_tgidbits, tgid, false);
	if (r < 0)
		return r;
	return bpf_map_delete_elem(x->fd_vms, &tgid) == 0 || errno == ENOENT ? 0 : -errno;
}

void vms_interf_walk_only(struct vms_interf *x, bool on)
{
	x->walk = on;
}

int vms_interf_account_add(struct vms_interf *x, const struct vms_interf_ent *e)
{
	struct interf_key k = {.victim = e->victim, .kind = e->kind, .id = e->id};
	return update(x->fd_acct, &k, &e->ns);
}

/* Where a whole map is read into: cap entries of keys of ks bytes and
 * values of vs bytes */
struct rbuf {
	void *keys, *vals;
	size_t ks, vs;
	uint32_t cap;
};

/* Map fd's entries one by one (two calls each) into b, *n of them: 0, or
 * -ENOSPC when there were more than it holds. */
static int walk_all(int fd, const struct rbuf *b, uint32_t *n)
{
	char *keys = b->keys, *vals = b->vals;
	const void *prev = NULL;
	uint32_t got = 0;
	while (bpf_map_get_next_key(fd, prev, keys + (size_t)got * b->ks) == 0) {
		if (got == b->cap)
			break; /* cannot happen: cap is the map's size */
		/* the next step starts from this key, kept even if it was deleted meanwhile */
		prev = keys + (size_t)got * b->ks;
		if (bpf_map_lookup_elem(fd, prev, vals + (size_t)got * b->vs) != 0)
			continue; /* deleted meanwhile: the slot is reused */
		if (++got == b->cap) {
			*n = got;
			return bpf_map_get_next_key(fd, prev, keys) == 0 ? -ENOSPC : 0;
		}
	}
	*n = got;
	return 0;
}

/* Map fd's entries into b, *n of them: by batches of buckets (one call for
 * the whole map, BPF_MAP_LOOKUP_BATCH, Linux 5.6), or per entry where the
 * kernel refuses batch ops.  0, -ENOSPC (more than b holds: the first
 * *n), or -errno. */
static int read_buf(struct vms_interf *x, int fd, const struct rbuf *b, uint32_t *n)
{
	if (x->walk)
		return walk_all(fd, b, n);
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	char *keys = b->keys, *vals = b->vals;
	uint32_t got = 0, in = 0, out = 0;
	bool first = true;
	while (got < b->cap) {
		uint32_t count = b->cap - got;
		int r = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys + (size_t)got * b->ks,
					     vals + (size_t)got * b->vs, &count, &o);
		int e = r < 0 ? errno : 0;
		got += count; /* set also with ENOENT, the end */
		if (r < 0) {
			if (e == ENOENT)
				break;
			if (first && !got && (e == EINVAL || e == ENOTSUP || e == EOPNOTSUPP || e == ENOTSUPP)) {
				x->walk = true; /* an older kernel: from now on, per entry */
				return walk_all(fd, b, n);
			}
			*n = got;
			return e == ENOSPC ? -ENOSPC : -e;
		}
		in = out;
		first = false;
	}
	*n = got;
	return 0;
}

/* Map fd's entries (keys of ks bytes, u64 values: acct or waits) into x's
 * buffers, as read_buf */
static int read_all(struct vms_interf *x, int fd, size_t ks, uint32_t *n)
{
	struct rbuf b = {x->bkeys, x->bvals, ks, sizeof(*x->bvals), x->bcap};
	return read_buf(x, fd, &b, n);
}

/* a key of the account that names VM vm, as victim or as culprit */
static bool names_vm(const struct interf_key *k, uint32_t vm)
{
	return k->victim == vm || (k->kind == INTERF_VM && k->id == vm);
}

/* Delete key k of map fd: its last value into *v (atomically where the
 * kernel can, Linux 5.14).  0, or -errno (-ENOENT: gone meanwhile). */
static int take(int fd, const void *k, uint64_t *v)
{
	if (bpf_map_lookup_and_delete_elem(fd, k, v) == 0)
		return 0;
	if (errno == ENOENT)
		return -ENOENT;
	if (bpf_map_lookup_elem(fd, k, v) != 0)
		return -errno;
	return bpf_map_delete_elem(fd, k) == 0 ? 0 : -errno;
}

int vms_interf_forget_account(struct vms_interf *x, uint32_t vm, uint64_t *carry, uint32_t ncarry)
{
	uint32_t n;
	int r = read_all(x, x->fd_acct, sizeof(struct interf_key), &n);
	if (r < 0 && r != -ENOSPC)
		return r;
	const struct interf_key *ak = x->bkeys;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t v;
		if (!names_vm(&ak[i], vm))
			continue;
		int t = take(x->fd_acct, &ak[i], &v);
		if (t == -ENOENT)
			continue;
		if (t < 0)
			return t;
		if (ak[i].victim != vm && ak[i].victim < ncarry)
			carry[ak[i].victim] += v;
	}
	r = read_all(x, x->fd_waits, sizeof(struct interf_wkey), &n);
	if (r < 0 && r != -ENOSPC)
		return r;
	const struct interf_wkey *wk = x->bkeys;
	for (uint32_t i = 0; i < n; i++)
		if (wk[i].vm == vm && bpf_map_delete_elem(x->fd_waits, &wk[i]) != 0 && errno != ENOENT)
			return -errno;
	return 0;
}

int vms_interf_read_waits(struct vms_interf *x, struct vms_interf_wait *out, unsigned cap, unsigned *n)
{
	uint32_t got;
	int r = read_all(x, x->fd_waits, sizeof(struct interf_wkey), &got);
	if (r < 0 && r != -ENOSPC) {
		*n = 0;
		return r;
	}
	const struct interf_wkey *k = x->bkeys;
	unsigned m = got < cap ? got : cap;
	for (unsigned i = 0; i < m; i++)
		out[i] = (struct vms_interf_wait){.vm = k[i].vm, .cpu = k[i].cpu, .ns = x->bvals[i]};
	*n = m;
	return r == -ENOSPC || got > cap ? -ENOSPC : 0;
}

int vms_interf_read(struct vms_interf *x, struct vms_interf_ent *out, unsigned cap, unsigned *n)
{
	uint32_t got;
	int r = read_all(x, x->fd_acct, sizeof(struct interf_key), &got);
	if (r < 0 && r != -ENOSPC) {
		*n = 0;
		return r;
	}
	const struct interf_key *k = x->bkeys;
	unsigned m = got < cap ? got : cap;
	for (unsigned i = 0; i < m; i++)
		out[i] = (struct vms_interf_ent){.victim = k[i].victim, .kind = k[i].kind, .id = k[i].id,
						 .ns = x->bvals[i]};
	*n = m;
	return r == -ENOSPC || got > cap ? -ENOSPC : 0;
}

int vms_interf_waited(struct vms_interf *x, uint32_t tid, uint64_t *ns)
{
	struct interf_thread t;
	if (bpf_map_lookup_elem(x->fd_threads, &tid, &t) != 0)
		return -errno;
	*ns = t.waited;
	return 0;
}

int vms_interf_ran(struct vms_interf *x, uint32_t tid, uint64_t *ns)
{
	struct interf_thread t;
	if (bpf_map_lookup_elem(x->fd_threads, &tid, &t) != 0)
		return -errno;
	*ns = t.ran;
	return 0;
}

int vms_interf_rq_ncpu(struct vms_interf *x)
{
	/* the mapped .bss (a kernel that can load the program maps arrays:
	 * 5.5), else a private copy that the program never writes */
	if (!x->rq || !(bpf_map__map_flags(x->skel->maps.bss) & BPF_F_MMAPABLE))
		return -ENODATA;
	return (int)bpf_map__max_entries(x->skel->maps.cpus);
}

int vms_interf_read_rq(struct vms_interf *x, uint64_t *out, unsigned cap)
{
	int r = vms_interf_rq_ncpu(x);
	if (r < 0)
		return r;
	unsigned n = (unsigned)r < cap ? (unsigned)r : cap;
	const volatile __u64 *v = x->skel->bss->rq_delay;
	for (unsigned i = 0; i < n; i++)
		out[i] = v[i];
	return (int)n;
}

int vms_interf_stats(struct vms_interf *x, uint64_t *lost_ns, uint64_t *overflows)
{
	uint32_t k0 = 0, k1 = 1;
	if (bpf_map_lookup_elem(x->fd_stats, &k0, lost_ns) != 0 ||
	    bpf_map_lookup_elem(x->fd_stats, &k1, overflows) != 0)
		return -errno;
	return 0;
}

int vms_interf_read_threads(struct vms_interf *x, struct vms_interf_thr *out, unsigned cap, unsigned *n)
{
	uint32_t got;
	struct rbuf b = {x->tkeys, x->tvals, sizeof(*x->tkeys), sizeof(*x->tvals), x->tcap};
	int r = read_buf(x, x->fd_threads, &b, &got);
	if (r < 0 && r != -ENOSPC) {
		*n = 0;
		return r;
	}
	unsigned m = got < cap ? got : cap;
	for (unsigned i = 0; i < m; i++)
		out[i] = (struct vms_interf_thr){.tid = x->tkeys[i], .vm = x->tvals[i].vm,
						 .waited = x->tvals[i].waited, .ran = x->tvals[i].ran};
	*n = m;
	return r == -ENOSPC || got > cap ? -ENOSPC : 0;
}

int vms_interf_prog_stats(struct vms_interf *x, struct vms_interf_prog *out, unsigned cap)
{
	struct bpf_program *p;
	unsigned n = 0;
	bpf_object__for_each_program(p, x->skel->obj) {
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);
		if (n == cap)
			break;
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len) != 0)
			return -errno;
		out[n++] = (struct vms_interf_prog){.name = bpf_program__name(p), .run_cnt = info.run_cnt,
						    .run_ns = info.run_time_ns};
	}
	return (int)n;
}
