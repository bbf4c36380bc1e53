/* SPDX-License-Identifier: MIT */
/* source_intfest.c - interference without BPF: an estimate (source
 * "intfest", doc/interference.md, "Without BPF: the estimate").
 *
 * Each tick, for every thread of every local VM's QEMU process (its vCPUs
 * are the victims, all its threads culprits), the run time and run delay
 * of /proc/PID/task/TID/schedstat and the CPU it last ran on (field 39 of
 * .../stat); per CPU the busy and interrupt time of /proc/stat.  A vCPU's
 * run delay in the tick, D, is put on the CPU it last ran on, c, and
 * split over what ran on c in the tick in proportion to its time there:
 *   each other watched thread w that last ran on c   run(w)
 *   the host's other tasks      busy(c) - irq(c) - the watched threads' run on c
 *   interrupts and softirqs     irq(c) (/proc/stat irq + softirq)
 * (busy: user + nice + system + irq + softirq, in USER_HZ ticks; guest
 * time is inside user).  D * part / (sum of the parts); what the integer
 * split leaves, and all of D when nothing else ran on c, is `unknown`.
 * Exact when every thread on c is pinned there (a thread that ran on
 * several CPUs in the tick is counted on the last); an estimate
 * otherwise, and so named: group vmintfest, vm.NAME.intfest.*, counters
 * in ns since the VM appeared in the run:
 *   wait vms own host irq unknown   (wait = the sum of the other five =
 *                                    the vCPUs' run delay in the ticks)
 * and, sparse, vm.NAME.intfest.by.OTHER (group vmintfestby) for each
 * other VM it was estimated to wait behind, declared when the pair first
 * appears (a new schema generation).
 *
 * The tick allocates nothing: the thread table, the per-CPU arrays and
 * the matrix are sized in declare (and the thread table again in idle,
 * every IE_THREADS_NS, for threads QEMU started since). */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpuirq.h"
#include "grow.h"
#include "parse.h"
#include "source.h"
#include "vmtab.h"

enum { E_WAIT, E_VMS, E_OWN, E_HOST, E_IRQ, E_UNKNOWN, IE_COLS };
static const char *const ie_cols[IE_COLS] = {"wait", "vms", "own", "host", "irq", "unknown"};

#define IE_THREADS_NS (5 * 1000000000ull) /* idle looks for new threads this often */
#define IE_BUF 2048 /* a stat or schedstat line */

/* a watched thread */
struct ie_thr {
	pid_t tid;
	uint32_t k;          /* its VM's known index */
	bool vcpu;           /* a victim */
	bool have;           /* prev values are set */
	int fd_sched, fd_stat;
	uint64_t run, delay; /* as last read */
	uint64_t drun, ddelay; /* this tick's */
	int32_t cpu;         /* last ran on, this tick; -1: not read */
};

/* a VM this run has seen (by UUID, never forgotten: its totals go on if
 * it comes back, as a counter should) */
struct ie_known {
	char uuid[VMS_UUID_LEN + 1];
	int32_t vm;          /* its position in the current set, -1: gone */
	pid_t pid;
	uint64_t tot[IE_COLS];
	uint64_t *by;        /* [nby]: behind known VM i, ns */
	unsigned nby;
};

struct intfest {
	uint64_t vmgen;
	struct ie_known *known;
	uint32_t nknown, capknown;
	struct ie_thr *thr;
	unsigned nthr;
	struct vms_cpuirq cpus;  /* each CPU's busy and irq time this tick */
	uint64_t *wrun;          /* [ncpu] this tick's run of the watched threads there */
	uint64_t done_idx;       /* the tick whose estimate is in the totals */
	/* the columns */
	uint32_t *base;          /* per known: first column, UINT32_MAX: none */
	uint32_t *pfirst, *pn;   /* per known: its pairs pcul[pfirst .. +pn) */
	uint32_t *pcul;          /* a pair's culprit (known index) */
	uint32_t *setk;          /* per VM of the set: its known index */
	unsigned npair;
	uint64_t next_threads;   /* the loop's clock (idle's until_ns) */
	char buf[IE_BUF];
};

static void thr_close(struct ie_thr *t)
{
	if (t->fd_sched >= 0)
		close(t->fd_sched);
	if (t->fd_stat >= 0)
		close(t->fd_stat);
	t->fd_sched = t->fd_stat = -1;
}

static void free_thr(struct intfest *p)
{
	for (unsigned i = 0; i < p->nthr; i++)
		thr_close(&p->thr[i]);
	free(p->thr);
	p->thr = NULL;
	p->nthr = 0;
}

static int ie_open(struct vms_source *src, const struct vms_source_env *env)
{
	(void)env;
	struct intfest *p = src->priv;
	p->done_idx = UINT64_MAX;
	int r = vms_cpuirq_open(&p->cpus, src->proc_dirfd);
	if (r < 0)
		return r; /* -ENOENT: no per-CPU lines, nothing to split over */
	p->wrun = calloc(p->cpus.ncpu, sizeof(*p->wrun));
	return p->wrun ? 0 : -ENOMEM;
}

static void free_cols(struct intfest *p)
{
	free(p->base);
	free(p->pfirst);
	free(p->pn);
	free(p->pcul);
	free(p->setk);
	p->base = p->pfirst = p->pn = p->pcul = p->setk = NULL;
}

static void ie_close(struct vms_source *src)
{
	struct intfest *p = src->priv;
	if (!p)
		return;
	free_thr(p);
	for (unsigned i = 0; i < p->nknown; i++)
		free(p->known[i].by);
	free(p->known);
	free_cols(p);
	free(p->wrun);
	vms_cpuirq_close(&p->cpus);
	memset(p, 0, sizeof(*p));
}

static struct ie_known *known_find(struct intfest *p, const char *uuid)
{
	for (unsigned i = 0; i < p->nknown; i++)
		if (strcmp(p->known[i].uuid, uuid) == 0)
			return &p->known[i];
	return NULL;
}

static struct ie_thr *thr_find(struct ie_thr *a, unsigned n, pid_t tid)
{
	for (unsigned i = 0; i < n; i++)
		if (a[i].tid == tid)
			return &a[i];
	return NULL;
}

static int open_at(int dirfd, pid_t pid, pid_t tid, const char *file)
{
	char path[96];
	snprintf(path, sizeof(path), "%d/task/%d/%s", (int)pid, (int)tid, file);
	return openat(dirfd, path, O_RDONLY | O_CLOEXEC);
}

/* The thread table again, from /proc/PID/task of each local VM of the
 * set: a thread already watched keeps its files and last values. */
static int rebuild_threads(struct vms_source *src, const struct vms_vmtab *t)
{
	struct intfest *p = src->priv;
	struct ie_thr *n = NULL;
	unsigned nn = 0, cap = 0;
	int r = 0;
	for (unsigned i = 0; t && i < t->n && r == 0; i++) {
		const struct vms_vm *vm = &t->vm[i];
		const struct ie_known *k = known_find(p, vm->uuid);
		if (vm->pid <= 0 || !k)
			continue;
		char path[48];
		snprintf(path, sizeof(path), "%d/task", (int)vm->pid);
		int dfd = openat(src->proc_dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
		if (!d) {
			if (dfd >= 0)
				close(dfd);
			continue; /* gone: the VM set will say so */
		}
		struct dirent *e;
		while ((e = readdir(d))) {
			char *end;
			long tid = strtol(e->d_name, &end, 10);
			if (*end || tid <= 0)
				continue;
			if (nn == cap) {
				cap = cap ? 2 * cap : 64;
				struct ie_thr *g = realloc(n, cap * sizeof(*g));
				if (!g) {
					r = -ENOMEM;
					break;
				}
				n = g;
			}
			struct ie_thr *x = &n[nn];
			struct ie_thr *old = thr_find(p->thr, p->nthr, (pid_t)tid);
			if (old && old->k == (uint32_t)(k - p->known)) {
				*x = *old;
				old->fd_sched = old->fd_stat = -1; /* the old table's entry gives up its files */
			} else {
				*x = (struct ie_thr){.tid = (pid_t)tid, .k = (uint32_t)(k - p->known), .cpu = -1};
				x->fd_sched = open_at(src->proc_dirfd, vm->pid, x->tid, "schedstat");
				x->fd_stat = open_at(src->proc_dirfd, vm->pid, x->tid, "stat");
				if (x->fd_sched < 0 || x->fd_stat < 0) {
					thr_close(x);
					continue; /* exited meanwhile */
				}
			}
			x->vcpu = false;
			for (unsigned c = 0; c < vm->nvcpu; c++)
				if (vm->vcpu_tid[c] == x->tid)
					x->vcpu = true;
			nn++;
		}
		closedir(d);
	}
	if (r < 0) {
		for (unsigned i = 0; i < nn; i++)
			thr_close(&n[i]);
		free(n);
		return r;
	}
	free_thr(p);
	p->thr = n;
	p->nthr = nn;
	return 0;
}

static int ie_declare(struct vms_source *src, struct vms_schema_builder *b, const struct vms_source_env *env)
{
	struct intfest *p = src->priv;
	const struct vms_vmtab *t = env->vms;
	p->vmgen = vms_vmtab_gen(t);
	for (unsigned i = 0; i < p->nknown; i++)
		p->known[i].vm = -1;
	for (unsigned i = 0; t && i < t->n; i++) {
		struct ie_known *k = known_find(p, t->vm[i].uuid);
		if (!k) {
			struct ie_known *n = vms_grow_array(p->known, &p->capknown, p->nknown + 1, sizeof(*n), 16);
			if (!n)
				return -ENOMEM;
			p->known = n;
			k = &p->known[p->nknown++];
			memset(k, 0, sizeof(*k));
			snprintf(k->uuid, sizeof(k->uuid), "%s", t->vm[i].uuid);
		}
		k->vm = (int32_t)i;
		k->pid = t->vm[i].pid;
	}
	/* every known VM's row of the matrix covers every known VM */
	for (unsigned i = 0; i < p->nknown; i++) {
		struct ie_known *k = &p->known[i];
		if (k->nby == p->nknown)
			continue;
		uint64_t *n = realloc(k->by, p->nknown * sizeof(*n));
		if (!n)
			return -ENOMEM;
		memset(n + k->nby, 0, (p->nknown - k->nby) * sizeof(*n));
		k->by = n;
		k->nby = p->nknown;
	}
	int r = rebuild_threads(src, t);
	if (r < 0)
		return r;
	free_cols(p);
	size_t nk = p->nknown ? p->nknown : 1;
	p->base = malloc(nk * sizeof(*p->base));
	p->pfirst = calloc(nk, sizeof(*p->pfirst));
	p->pn = calloc(nk, sizeof(*p->pn));
	p->pcul = malloc(nk * nk * sizeof(*p->pcul));
	p->setk = malloc((t && t->n ? t->n : 1) * sizeof(*p->setk));
	if (!p->base || !p->pfirst || !p->pn || !p->pcul || !p->setk)
		return -ENOMEM;
	for (unsigned i = 0; i < p->nknown; i++)
		p->base[i] = UINT32_MAX;
	p->npair = 0;
	uint32_t col = 0;
	for (unsigned i = 0; t && i < t->n; i++) {
		struct ie_known *k = known_find(p, t->vm[i].uuid);
		uint32_t v = (uint32_t)(k - p->known);
		struct vms_coldef d = {.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_NS, .wrap_bits = 64,
				       .key = t->vm[i].uuid};
		p->base[v] = col;
		p->setk[i] = v;
		p->pfirst[v] = p->npair;
		for (unsigned c = 0; c < IE_COLS; c++)
			vms_schema_addc(b, &d, VMS_G_VMINTFEST, t->vm[i].name, NULL, ie_cols[c]);
		col += IE_COLS;
		for (unsigned c = 0; c < k->nby; c++) {
			if (!k->by[c] || p->known[c].vm < 0 || c == v)
				continue;
			vms_schema_addc(b, &d, VMS_G_VMINTFESTBY, t->vm[i].name, NULL, t->vm[p->known[c].vm].name);
			p->pcul[p->npair++] = c;
			p->pn[v]++;
			col++;
		}
	}
	return b->err;
}

/* pread a small file into p->buf: its length, or -errno */
static ssize_t rd(struct intfest *p, int fd)
{
	ssize_t n = pread(fd, p->buf, sizeof(p->buf) - 1, 0);
	if (n < 0)
		return -errno;
	p->buf[n] = '\0';
	return n;
}

/* each thread's run, delay and CPU: this tick's deltas */
static void read_threads(struct intfest *p, struct vms_tick_ctx *t)
{
	for (unsigned i = 0; i < p->cpus.ncpu; i++)
		p->wrun[i] = 0;
	for (unsigned i = 0; i < p->nthr; i++) {
		struct ie_thr *x = &p->thr[i];
		struct vms_schedstat ss;
		struct vms_taskstat ts;
		ssize_t n;
		x->drun = x->ddelay = 0;
		x->cpu = -1;
		if ((n = rd(p, x->fd_sched)) < 0)
			continue; /* exited */
		if (vms_parse_schedstat(p->buf, (size_t)n, &ss) < 0) {
			t->parse_errors++;
			continue;
		}
		if ((n = rd(p, x->fd_stat)) < 0)
			continue;
		if (vms_parse_taskstat(p->buf, (size_t)n, &ts) < 0 || ts.nfields < 39) {
			t->parse_errors++;
			continue;
		}
		if (x->have && ss.run_ns >= x->run && ss.wait_ns >= x->delay) {
			x->drun = ss.run_ns - x->run;
			x->ddelay = ss.wait_ns - x->delay;
		}
		x->run = ss.run_ns;
		x->delay = ss.wait_ns;
		x->have = true;
		if (ts.f[39] < p->cpus.ncpu) {
			x->cpu = (int32_t)ts.f[39];
			p->wrun[x->cpu] += x->drun;
		}
	}
}

__extension__ typedef unsigned __int128 u128;

/* a * b / c without overflow (c > 0, b <= c) */
static uint64_t part(uint64_t a, uint64_t b, uint64_t c)
{
	return (uint64_t)((u128)a * b / c);
}

static void estimate(struct intfest *p, struct vms_tick_ctx *t)
{
	bool cpus = vms_cpuirq_read(&p->cpus, t->idx, &t->parse_errors);
	read_threads(p, t);
	for (unsigned i = 0; i < p->nthr; i++) {
		const struct ie_thr *v = &p->thr[i];
		if (!v->vcpu || !v->ddelay)
			continue;
		struct ie_known *kv = &p->known[v->k];
		uint64_t d = v->ddelay, placed = 0;
		kv->tot[E_WAIT] += d;
		if (v->cpu < 0 || !cpus) {
			kv->tot[E_UNKNOWN] += d;
			continue;
		}
		unsigned c = (unsigned)v->cpu;
		uint64_t others = p->wrun[c] - v->drun;
		uint64_t irq = p->cpus.dirq[c], busy = p->cpus.dbusy[c];
		uint64_t host = busy > p->wrun[c] + irq ? busy - p->wrun[c] - irq : 0;
		uint64_t sum = others + irq + host;
		if (!sum) {
			kv->tot[E_UNKNOWN] += d;
			continue;
		}
		for (unsigned j = 0; j < p->nthr; j++) {
			const struct ie_thr *w = &p->thr[j];
			if (j == i || w->cpu != v->cpu || !w->drun)
				continue;
			uint64_t e = part(d, w->drun, sum);
			placed += e;
			if (w->k == v->k) {
				kv->tot[E_OWN] += e;
			} else {
				kv->tot[E_VMS] += e;
				kv->by[w->k] += e;
			}
		}
		uint64_t eh = part(d, host, sum), ei = part(d, irq, sum);
		kv->tot[E_HOST] += eh;
		kv->tot[E_IRQ] += ei;
		placed += eh + ei;
		kv->tot[E_UNKNOWN] += d - placed; /* the integer split's remainder */
	}
}

static int ie_sample(struct vms_source *src, uint64_t *slots, struct vms_tick_ctx *t)
{
	struct intfest *p = src->priv;
	if (vms_vmtab_gen(t->vms) != p->vmgen)
		return VMS_RESCHEMA;
	/* once per tick: a new pair makes the loop declare and sample the
	 * same tick again */
	if (p->done_idx != t->idx) {
		estimate(p, t);
		p->done_idx = t->idx;
	}
	for (unsigned i = 0; t->vms && i < t->vms->n; i++) {
		uint32_t v = p->setk[i];
		const struct ie_known *k = &p->known[v];
		uint64_t *s = slots + p->base[v];
		if (k->pid <= 0) {
			vms_slots_none(s, IE_COLS + p->pn[v]);
			continue;
		}
		memcpy(s, k->tot, sizeof(k->tot));
		unsigned have = 0;
		for (uint32_t q = 0; q < p->pn[v]; q++)
			s[IE_COLS + q] = k->by[p->pcul[p->pfirst[v] + q]];
		for (unsigned c = 0; c < k->nby; c++)
			if (k->by[c] && c != v && p->known[c].vm >= 0)
				have++;
		if (have != p->pn[v])
			return VMS_RESCHEMA; /* a new pair */
	}
	return 0;
}

/* Threads QEMU started since the last look (an I/O thread, a vCPU
 * hot-plugged) join the table outside the tick. */
static void ie_idle(struct vms_source *src, uint64_t until_ns, const struct vms_source_env *env)
{
	struct intfest *p = src->priv;
	/* until_ns, the next tick's deadline, is the clock here */
	if (until_ns < p->next_threads || vms_vmtab_gen(env->vms) != p->vmgen)
		return;
	p->next_threads = until_ns < UINT64_MAX - IE_THREADS_NS ? until_ns + IE_THREADS_NS : 0;
	rebuild_threads(src, env->vms); /* out of memory: the old table stays */
}

VMS_SOURCE_OPS(intfest, ie, .idle = ie_idle);
