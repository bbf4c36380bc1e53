/* SPDX-License-Identifier: MIT */
#include "vm_kernel.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "procfile.h"
#include "source.h"

/* ---- layout -------------------------------------------------------------- */

const char *const vms_vmk_place_cols[VMS_VM_PLACE_FIELDS] = {"pcpu", "allowed", "allowed_first"};

void vms_vmlay_init(struct vms_vmlay *l, unsigned nvcpu, unsigned ntap, unsigned ndisk, bool iocg,
		    unsigned ncg, bool check)
{
	int32_t c = 0;
	l->nvcpu = (uint16_t)nvcpu;
	l->ntap = (uint16_t)ntap;
	l->ndisk = (uint16_t)ndisk;
	l->state = c++;
	l->path = c++;
	l->cpu = c;
	c += 3;
	l->vcpu = c;
	c += VMS_VM_VCPU_FIELDS * (int32_t)nvcpu;
	l->net = c;
	c += VMS_VM_NET_FIELDS * (int32_t)ntap;
	l->io = c;
	c += 2;
	l->iocg = -1;
	if (iocg) {
		l->iocg = c;
		c += 2;
	}
	l->mem = c;
	c += 2;
	l->balloon = c;
	c += VMS_VM_NBALLOON;
	l->block = c;
	c += VMS_VM_NBLOCK * (int32_t)ndisk;
	l->cg = -1;
	if (ncg) {
		l->cg = c;
		c += (int32_t)ncg;
	}
	l->place = c;
	c += VMS_VM_PLACE_FIELDS * (int32_t)nvcpu;
	l->check = -1;
	if (check) {
		l->check = c;
		c += 3 + 2 * (int32_t)nvcpu;
	}
	l->slow_t = c++;
	l->mig = l->dirty = -1;
	l->ncol = (uint32_t)c;
}

void vms_vmlay_add_dirty(struct vms_vmlay *l)
{
	if (l->dirty >= 0)
		return;
	l->dirty = (int32_t)l->ncol;
	l->ncol += VMS_VM_NDIRTY;
}

void vms_vmlay_add_mig(struct vms_vmlay *l)
{
	if (l->mig >= 0)
		return;
	l->mig = (int32_t)l->ncol;
	l->ncol += VMS_VM_NMIG;
}

int32_t vms_vmlay_col(const struct vms_vmlay *l, unsigned m, unsigned idx)
{
	if (m >= VMS_VM_CPU_TIME && m <= VMS_VM_CPU_SYSTEM)
		return l->cpu + (int32_t)(m - VMS_VM_CPU_TIME);
	if (m >= VMS_VM_VCPU_TIME && m <= VMS_VM_VCPU_SLICES)
		return idx < l->nvcpu ?
			       l->vcpu + (int32_t)(idx * VMS_VM_VCPU_FIELDS + m - VMS_VM_VCPU_TIME) :
			       -1;
	if (m >= VMS_VM_NET_RX_BYTES && m <= VMS_VM_NET_TX_DROP)
		return idx < l->ntap ? l->net + (int32_t)(idx * VMS_VM_NET_FIELDS + m - VMS_VM_NET_RX_BYTES) :
				       -1;
	if (m == VMS_VM_IO_READ || m == VMS_VM_IO_WRITE)
		return l->io + (int32_t)(m - VMS_VM_IO_READ);
	if (m == VMS_VM_IO_CG_READ || m == VMS_VM_IO_CG_WRITE)
		return l->iocg < 0 ? -1 : l->iocg + (int32_t)(m - VMS_VM_IO_CG_READ);
	if (m == VMS_VM_MEM_RSS || m == VMS_VM_MEM_CGROUP)
		return l->mem + (int32_t)(m - VMS_VM_MEM_RSS);
	if (m >= VMS_VM_BALLOON_CURRENT && m < VMS_VM_BALLOON_CURRENT + VMS_VM_NBALLOON)
		return l->balloon + (int32_t)(m - VMS_VM_BALLOON_CURRENT);
	if (m >= VMS_VM_BLOCK_RD_REQS && m < VMS_VM_BLOCK_RD_REQS + VMS_VM_NBLOCK)
		return idx < l->ndisk ? l->block + (int32_t)(idx * VMS_VM_NBLOCK + m - VMS_VM_BLOCK_RD_REQS) : -1;
	if (m >= VMS_VM_MIG_JOB && m < VMS_VM_MIG_JOB + VMS_VM_NMIG)
		return l->mig < 0 ? -1 : l->mig + (int32_t)(m - VMS_VM_MIG_JOB);
	if (m >= VMS_VM_DIRTY_STATUS && m < VMS_VM_DIRTY_STATUS + VMS_VM_NDIRTY)
		return l->dirty < 0 ? -1 : l->dirty + (int32_t)(m - VMS_VM_DIRTY_STATUS);
	if (l->check < 0)
		return -1;
	if (m >= VMS_VM_CHECK_CPU_TIME && m <= VMS_VM_CHECK_CPU_SYSTEM)
		return l->check + (int32_t)(m - VMS_VM_CHECK_CPU_TIME);
	if ((m == VMS_VM_CHECK_VCPU_TIME || m == VMS_VM_CHECK_VCPU_DELAY) && idx < l->nvcpu)
		return l->check + 3 + (int32_t)(idx * 2 + m - VMS_VM_CHECK_VCPU_TIME);
	return -1;
}

uint8_t vms_vmlay_group(const struct vms_vmlay *l, uint32_t i)
{
	const struct {
		int32_t from, to; /* the group's columns: [from, to) */
		uint8_t group;
	} groups[] = {
		{l->cpu, l->vcpu, VMS_VG_CPU},
		{l->vcpu, l->net, VMS_VG_VCPU},
		{l->net, l->io, VMS_VG_NET},
		{l->io, l->mem, VMS_VG_IO},
		{l->mem, l->balloon, VMS_VG_MEM},
		{l->balloon, l->block, VMS_VG_BALLOON},
		{l->block, l->block + VMS_VM_NBLOCK * l->ndisk, VMS_VG_BLOCK},
		{l->check, l->check >= 0 ? l->slow_t : l->check, VMS_VG_CHECK},
	};
	int32_t c = (int32_t)i;
	for (size_t k = 0; k < VMS_ARRAY_SIZE(groups); k++)
		if (c >= groups[k].from && c < groups[k].to)
			return groups[k].group;
	return 0;
}

/* ---- /proc/net/dev ------------------------------------------------------- */

void vms_nettab_index(struct vms_nettab *t, const char *buf, size_t len)
{
	struct vms_cur c, line;
	t->n = 0;
	t->full = false;
	vms_cur_init(&c, buf, len);
	t->ok = vms_netdev_header(&c, &t->hdr) == 0;
	if (!t->ok)
		return;
	while (vms_cur_line(&c, &line)) {
		vms_cur_skip_blank(&line);
		const char *colon = vms_cur_rfind(&line, ':');
		if (!colon || colon == line.p)
			continue; /* not an interface line: its tap reads as missing */
		if (t->n == t->cap) {
			t->full = true;
			return;
		}
		struct vms_nettab_ent *e = &t->ent[t->n++];
		e->name = line.p;
		e->name_len = (uint32_t)(colon - line.p);
		e->line = line.p;
		e->line_len = (uint32_t)(line.end - line.p);
	}
}

void vms_nlstats_add(void *arg, int ifindex, const uint64_t v[VMS_NET_FIELDS])
{
	struct vms_nlstats *t = arg;
	if (t->n == t->cap) {
		t->full = true;
		return;
	}
	struct vms_nlstats_ent *e = &t->ent[t->n++];
	e->ifindex = ifindex;
	memcpy(e->v, v, sizeof(e->v));
}

/* ---- opening ---------------------------------------------------------- */

static int open_at(int dirfd, const char *fmt, ...) VMS_PRINTF(2, 3);
static int open_at(int dirfd, const char *fmt, ...)
{
	char p[128];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(p, sizeof(p), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(p))
		return -1;
	return openat(dirfd, p, O_RDONLY | O_CLOEXEC);
}

static int open_abs(const char *path)
{
	return path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
}

/* ---- the VM's cgroup: limits, throttling, memory events, pressure ---------- */


enum cg_dir { CD_V2, CD_CPU, CD_MEM };
enum cg_type {
	CT_LIMIT, /* one number, "max" or "-1" */
	CT_CPUMAX, /* "QUOTA PERIOD" */
	CT_KEYED,  /* "key value" lines: keys[k] -> field[k] x mul[k] */
	CT_PSI,    /* some/full lines: field[0] some, field[1] full */
};
#define CG_NONE 0xff
/* In order: a field is taken from the first file that gives it (cgroup2
 * before v1). */
static const struct cg_def {
	uint8_t dir, type;
	bool watch; /* a limit: changes only by a write to the file (vm_kernel.h) */
	const char *name;
	const char *keys[4];
	uint8_t field[4];
	uint16_t mul[4];
} cg_defs[VMS_CG_NFILES] = {
	{CD_V2, CT_CPUMAX, true, "cpu.max", {0}, {VMS_CGF_CPU_QUOTA, VMS_CGF_CPU_PERIOD, CG_NONE, CG_NONE}, {0}},
	{CD_V2, CT_LIMIT, true, "cpu.weight", {0}, {VMS_CGF_CPU_WEIGHT, CG_NONE, CG_NONE, CG_NONE}, {0}},
	{CD_V2, CT_KEYED, false, "cpu.stat", {"nr_periods", "nr_throttled", "throttled_usec"},
	 {VMS_CGF_NR_PERIODS, VMS_CGF_NR_THROTTLED, VMS_CGF_THROTTLED, CG_NONE}, {1, 1, 1000}},
	{CD_V2, CT_LIMIT, true, "memory.max", {0}, {VMS_CGF_MEM_MAX, CG_NONE, CG_NONE, CG_NONE}, {0}},
	{CD_V2, CT_LIMIT, true, "memory.high", {0}, {VMS_CGF_MEM_HIGH, CG_NONE, CG_NONE, CG_NONE}, {0}},
	{CD_V2, CT_KEYED, false, "memory.events", {"high", "max", "oom", "oom_kill"},
	 {VMS_CGF_EV_HIGH, VMS_CGF_EV_MAX, VMS_CGF_EV_OOM, VMS_CGF_EV_OOM_KILL}, {1, 1, 1, 1}},
	{CD_V2, CT_KEYED, false, "memory.stat", {"anon", "file", "pgmajfault"},
	 {VMS_CGF_ANON, VMS_CGF_FILE, VMS_CGF_PGMAJFAULT, CG_NONE}, {1, 1, 1}},
	{CD_V2, CT_LIMIT, false, "memory.swap.current", {0}, {VMS_CGF_SWAP, CG_NONE, CG_NONE, CG_NONE}, {0}},
	{CD_V2, CT_PSI, false, "cpu.pressure", {0}, {VMS_CGF_PSI_CPU_SOME, VMS_CGF_PSI_CPU_FULL, CG_NONE, CG_NONE}, {0}},
	{CD_V2, CT_PSI, false, "memory.pressure", {0}, {VMS_CGF_PSI_MEM_SOME, VMS_CGF_PSI_MEM_FULL, CG_NONE, CG_NONE}, {0}},
	{CD_V2, CT_PSI, false, "io.pressure", {0}, {VMS_CGF_PSI_IO_SOME, VMS_CGF_PSI_IO_FULL, CG_NONE, CG_NONE}, {0}},
	{CD_CPU, CT_LIMIT, true, "cpu.cfs_quota_us", {0}, {VMS_CGF_CPU_QUOTA, CG_NONE, CG_NONE, CG_NONE}, {0}},
	{CD_CPU, CT_LIMIT, true, "cpu.cfs_period_us", {0}, {VMS_CGF_CPU_PERIOD, CG_NONE, CG_NONE, CG_NONE}, {0}},
	{CD_CPU, CT_LIMIT, true, "cpu.shares", {0}, {VMS_CGF_CPU_SHARES, CG_NONE, CG_NONE, CG_NONE}, {0}},
	{CD_CPU, CT_KEYED, false, "cpu.stat", {"nr_periods", "nr_throttled", "throttled_time"},
	 {VMS_CGF_NR_PERIODS, VMS_CGF_NR_THROTTLED, VMS_CGF_THROTTLED, CG_NONE}, {1, 1, 1}},
	{CD_MEM, CT_LIMIT, true, "memory.limit_in_bytes", {0}, {VMS_CGF_MEM_MAX, CG_NONE, CG_NONE, CG_NONE}, {0}},
	{CD_MEM, CT_KEYED, false, "memory.oom_control", {"oom_kill"}, {VMS_CGF_EV_OOM_KILL, CG_NONE, CG_NONE, CG_NONE},
	 {1}},
	{CD_MEM, CT_KEYED, false, "memory.stat", {"total_rss", "total_cache", "total_swap", "total_pgmajfault"},
	 {VMS_CGF_ANON, VMS_CGF_FILE, VMS_CGF_SWAP, VMS_CGF_PGMAJFAULT}, {1, 1, 1, 1}},
};

/* A detail file: what moves slowly or rarely and costs most to print --
 * v1 memory.stat is the largest file a VM has (~850 bytes, ~7 us), the
 * pressure files ~1.5 us each (tests/vmlab/FACTS.md) -- against cpu.stat,
 * whose throttling counts move every period and stay on each tick. */
static bool cg_is_detail(const struct cg_def *d)
{
	return d->type == CT_PSI || (!d->watch && strncmp(d->name, "memory.", 7) == 0);
}

bool vms_vmcg_detail(unsigned f)
{
	for (unsigned i = 0; i < VMS_CG_NFILES; i++)
		for (int k = 0; k < 4; k++)
			if (cg_defs[i].field[k] == f)
				return cg_is_detail(&cg_defs[i]);
	return false;
}

static unsigned cg_nkeys(const struct cg_def *d)
{
	unsigned n = 0;
	while (n < 4 && d->keys[n])
		n++;
	return n;
}

/* File d's text into v[0..4) by its field slots (VMS_NONE: not there).
 * 0 or -EINVAL/-ERANGE. */
static int cg_parse(const struct cg_def *d, const char *buf, size_t len, uint64_t *v)
{
	int r;
	for (int i = 0; i < 4; i++)
		v[i] = VMS_NONE;
	switch (d->type) {
	case CT_LIMIT:
		return vms_parse_cg_limit(buf, len, &v[0]);
	case CT_CPUMAX:
		return vms_parse_cpu_max(buf, len, &v[0], &v[1]);
	case CT_KEYED:
		r = vms_parse_keyed(buf, len, d->keys, cg_nkeys(d), v);
		if (r < 0)
			return r;
		for (unsigned k = 0; k < cg_nkeys(d); k++)
			if (v[k] != VMS_NONE && d->mul[k] > 1) {
				if (v[k] > (UINT64_MAX - 1) / d->mul[k])
					return -ERANGE;
				v[k] *= d->mul[k];
			}
		return 0;
	case CT_PSI: {
		struct vms_cur c;
		struct vms_psi_line pl;
		vms_cur_init(&c, buf, len);
		while ((r = vms_psi_next(&c, &pl)) != 0) {
			if (r < 0 || v[pl.full] != VMS_NONE)
				return r < 0 ? r : -EINVAL;
			v[pl.full] = pl.total;
		}
		return 0;
	}
	}
	return -EINVAL;
}

static int cg_read(int fd, char *buf, size_t cap, size_t *len)
{
	ssize_t n;
	do
		n = pread(fd, buf, cap, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n >= cap)
		return -EFBIG;
	*len = (size_t)n;
	return 0;
}

static void vmcg_reset(struct vms_vmcg *g, int ino)
{
	memset(g, 0, sizeof(*g));
	g->ino = ino;
	g->wd_nice = -1;
	for (unsigned i = 0; i < VMS_CG_NFILES; i++)
		g->fd[i] = g->wd[i] = -1;
}

static int watch(const struct vms_vmcg *g, const char *path)
{
	return g->ino >= 0 ? inotify_add_watch(g->ino, path, IN_MODIFY) : -1;
}

static void unwatch(struct vms_vmcg *g, int *wd)
{
	if (*wd >= 0 && g->ino >= 0)
		inotify_rm_watch(g->ino, *wd); /* EINVAL if the file is gone: the kernel dropped it */
	*wd = -1;
}

void vms_vmcg_open(struct vms_vmcg *g, const char *v2_dir, const char *cpu_dir, const char *mem_dir, int ino)
{
	const char *dirs[3] = {v2_dir, cpu_dir, mem_dir};
	char path[PATH_MAX], buf[8192];
	vmcg_reset(g, ino);
	for (unsigned i = 0; i < VMS_CG_NFILES; i++) {
		const struct cg_def *d = &cg_defs[i];
		uint64_t v[4];
		size_t len = 0;
		if (!dirs[d->dir] || snprintf(path, sizeof(path), "%s/%s", dirs[d->dir], d->name) >= (int)sizeof(path))
			continue;
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		/* watched before the first read: a write after it is seen */
		if (d->watch)
			g->wd[i] = watch(g, path);
		uint32_t gives = 0;
		if (cg_read(fd, buf, sizeof(buf), &len) == 0 && cg_parse(d, buf, len, v) == 0)
			for (int k = 0; k < 4; k++)
				if (d->field[k] != CG_NONE && v[k] != VMS_NONE && !(g->have & (1u << d->field[k])))
					gives |= 1u << d->field[k];
		if (!gives) {
			unwatch(g, &g->wd[i]);
			close(fd);
			continue;
		}
		g->fd[i] = fd;
		g->have |= gives;
		if (g->wd[i] >= 0) {
			memcpy(g->cache[i], v, sizeof(v));
			g->fresh |= 1u << i;
			/* cpu.weight.nice sets cpu.weight without a write to it */
			if (d->field[0] == VMS_CGF_CPU_WEIGHT &&
			    snprintf(path, sizeof(path), "%s/cpu.weight.nice", dirs[d->dir]) < (int)sizeof(path) &&
			    access(path, F_OK) == 0 && (g->wd_nice = watch(g, path)) < 0) {
				unwatch(g, &g->wd[i]); /* unwatched: read each tick */
				g->fresh &= ~(1u << i);
			}
		}
	}
}

void vms_vmcg_close(struct vms_vmcg *g)
{
	for (unsigned i = 0; i < VMS_CG_NFILES; i++) {
		if (g->fd[i] >= 0)
			close(g->fd[i]);
		unwatch(g, &g->wd[i]);
	}
	unwatch(g, &g->wd_nice);
	vmcg_reset(g, -1);
}

unsigned vms_vmcg_ncols(const struct vms_vmcg *g)
{
	return (unsigned)__builtin_popcount(g->have);
}

bool vms_vmcg_notify(struct vms_vmcg *g, int wd, uint32_t mask)
{
	if (wd < 0)
		return false;
	for (unsigned i = 0; i < VMS_CG_NFILES; i++) {
		bool nice = wd == g->wd_nice && cg_defs[i].field[0] == VMS_CGF_CPU_WEIGHT;
		if (g->wd[i] != wd && !nice)
			continue;
		g->fresh &= ~(1u << i);
		if (mask & IN_IGNORED) {
			/* the kernel dropped the watch (the file is gone): read
			 * each tick from now on */
			if (nice)
				g->wd_nice = -1;
			g->wd[i] = -1;
		}
		return true;
	}
	return false;
}

void vms_vmcg_stale(struct vms_vmcg *g)
{
	g->fresh = 0;
}

/* group i of n, stride bytes apart */
static struct vms_vmcg *nth(struct vms_vmcg *first, size_t stride, unsigned i)
{
	return (struct vms_vmcg *)(void *)((char *)first + (size_t)i * stride);
}

void vms_vmcg_drain(int ino, struct vms_vmcg *first, size_t stride, unsigned n)
{
	char buf[1024] __attribute__((aligned(__alignof__(struct inotify_event))));
	for (;;) {
		ssize_t len = read(ino, buf, sizeof(buf));
		if (len < 0 && errno == EINTR)
			continue;
		if (len <= 0) {
			if (len == 0 || errno != EAGAIN) /* cannot tell what changed */
				for (unsigned i = 0; i < n; i++)
					vms_vmcg_stale(nth(first, stride, i));
			return;
		}
		for (size_t off = 0; off + sizeof(struct inotify_event) <= (size_t)len;) {
			const struct inotify_event *e = (const void *)(buf + off);
			if (e->mask & IN_Q_OVERFLOW)
				for (unsigned i = 0; i < n; i++)
					vms_vmcg_stale(nth(first, stride, i));
			else
				for (unsigned i = 0; i < n && !vms_vmcg_notify(nth(first, stride, i), e->wd, e->mask); i++)
					;
			off += sizeof(*e) + e->len;
		}
	}
}

/* Throttling without a quota.  nr_periods, nr_throttled and the throttled
 * time of a group's cpu.stat are its own bandwidth's (the cfs_b of its
 * task_group: cpu_extra_stat_show, v1 cpu_cfs_stat_show), and the kernel
 * moves them only while that group has a quota (kernel/sched/fair.c):
 * do_sched_cfs_period_timer returns before counting a period when
 * cfs_b->quota is RUNTIME_INF; a cfs_rq is throttled only with
 * runtime_enabled, i.e. a quota (check_cfs_rq_runtime); throttled time is
 * added when a cfs_rq is unthrottled (unthrottle_cfs_rq), and
 * tg_set_cfs_bandwidth unthrottles every throttled one in the write that
 * removes the quota, before that write returns and so before its
 * IN_MODIFY.  Hence, with the quota file watched: once it was seen
 * unlimited ("max", -1) and cpu.stat was read after that, the three
 * counters cannot move before the next write to the quota file.  While its
 * cached value stands (no event since), the values of that read are given
 * again, exact, instead of reading cpu.stat (~1-1.5 us a VM).  Any other
 * tick reads it: a quota set, unknown or unwatched, or one read again this
 * tick (after a write or an overflow it may have been set and removed in
 * between, the counters moving meanwhile); that read is the one after
 * which they stand.  The quota file comes before its cpu.stat in cg_defs,
 * so each tick decides from the quota of that tick. */

/* The quota file of the directory of throttling file i (its cpu.stat), or
 * -1: i is not one. */
static int cg_quota_file(unsigned i)
{
	if (cg_defs[i].field[0] != VMS_CGF_NR_PERIODS)
		return -1;
	for (unsigned q = 0; q < i; q++)
		if (cg_defs[q].dir == cg_defs[i].dir && cg_defs[q].field[0] == VMS_CGF_CPU_QUOTA)
			return (int)q;
	return -1;
}

enum { CG_NOTHING, CG_READ, CG_CACHED };

/* File i's fields into v: from the cache for a watched limit with no write
 * since its read, and for a throttling file whose quota file is in steady
 * (its cached value of this tick unlimited) and whose counters were read
 * after it was (g->exact); else from the file.  unlimited: the quota files
 * whose value of this tick is unlimited. */
static int cg_take(struct vms_vmcg *g, unsigned i, uint32_t steady, uint32_t unlimited, uint64_t *v,
		   char *scratch, size_t cap, uint32_t *parse_errors)
{
	uint32_t bit = 1u << i;
	int q = cg_quota_file(i);
	size_t len = 0;
	if ((g->wd[i] >= 0 && (g->fresh & bit)) || (q >= 0 && (g->exact & bit) && (steady >> q & 1))) {
		memcpy(v, g->cache[i], sizeof(g->cache[i]));
		return CG_CACHED;
	}
	g->exact &= ~bit;
	g->reads++;
	if (cg_read(g->fd[i], scratch, cap, &len) < 0)
		return CG_NOTHING;
	if (cg_parse(&cg_defs[i], scratch, len, v) < 0) {
		(*parse_errors)++;
		return CG_NOTHING;
	}
	if (g->wd[i] >= 0)
		g->fresh |= bit;
	if (q >= 0 && (unlimited >> q & 1))
		g->exact |= bit;
	if ((g->fresh & bit) || (g->exact & bit))
		memcpy(g->cache[i], v, sizeof(g->cache[i]));
	return CG_READ;
}

void vms_vmcg_sample(struct vms_vmcg *g, uint64_t *s, char *scratch, size_t cap, bool detail,
		     uint32_t *parse_errors)
{
	uint32_t done = 0, steady = 0, unlimited = 0;
	vms_slots_none(s, vms_vmcg_ncols(g));
	for (unsigned i = 0; i < VMS_CG_NFILES; i++) {
		const struct cg_def *d = &cg_defs[i];
		uint64_t v[4];
		if (g->fd[i] < 0 || (!detail && cg_is_detail(d)))
			continue;
		int got = cg_take(g, i, steady, unlimited, v, scratch, cap, parse_errors);
		if (got == CG_NOTHING)
			continue;
		if (d->field[0] == VMS_CGF_CPU_QUOTA && v[0] == VMS_CG_UNLIMITED) {
			unlimited |= 1u << i;
			if (got == CG_CACHED)
				steady |= 1u << i;
		}
		for (int k = 0; k < 4; k++) {
			unsigned f = d->field[k];
			if (f == CG_NONE || !(g->have & (1u << f)) || (done & (1u << f)))
				continue;
			done |= 1u << f;
			s[__builtin_popcount(g->have & ((1u << f) - 1))] = v[k];
		}
	}
}

static void reset(struct vms_vmk *k)
{
	memset(k, 0, sizeof(*k));
	k->fd_stat = k->fd_io = k->fd_cpu = k->fd_acct_stat = k->fd_mem = k->fd_iostat = -1;
	vmcg_reset(&k->cg, -1);
}

int vms_vmk_open(struct vms_vmk *k, const struct vms_vm *vm, int proc_dirfd, const struct vms_cgmounts *m,
		 int ino)
{
	reset(k);
	long hz = sysconf(_SC_CLK_TCK), ps = sysconf(_SC_PAGESIZE);
	k->ns_per_tick = hz > 0 ? VMS_NSEC_PER_SEC / (uint64_t)hz : 10000000;
	k->page_size = ps > 0 ? (uint64_t)ps : 4096;
	k->nvcpu = vm->nvcpu;
	k->ntap = vm->ntap;
	if (k->nvcpu) {
		k->fd_sched = malloc(k->nvcpu * sizeof(*k->fd_sched));
		k->fd_tstat = malloc(k->nvcpu * sizeof(*k->fd_tstat));
		k->fd_tstatus = malloc(k->nvcpu * sizeof(*k->fd_tstatus));
		if (!k->fd_sched || !k->fd_tstat || !k->fd_tstatus)
			goto nomem;
		for (unsigned i = 0; i < k->nvcpu; i++)
			k->fd_sched[i] = k->fd_tstat[i] = k->fd_tstatus[i] = -1;
	}
	if (k->ntap) {
		k->tap = calloc(k->ntap, sizeof(*k->tap));
		if (!k->tap)
			goto nomem;
		for (unsigned i = 0; i < k->ntap; i++) {
			snprintf(k->tap[i].name, sizeof(k->tap[i].name), "%s", vm->tap[i]);
			k->tap[i].ifindex = (int)if_nametoindex(k->tap[i].name);
		}
	}
	if (vm->pid <= 0)
		return 0; /* not a local QEMU we can see: the agent serves it */

	k->fd_stat = open_at(proc_dirfd, "%d/stat", (int)vm->pid);
	k->fd_io = open_at(proc_dirfd, "%d/io", (int)vm->pid);
	k->io_err = k->fd_io < 0 ? errno : 0;
	if (k->fd_io >= 0) {
		/* the mode (0400) is checked at open, the ptrace access when
		 * it is read: one read now, so that a refusal is known and said
		 * before the ticks (vm_rec.c) */
		char probe[512];
		if (pread(k->fd_io, probe, sizeof(probe), 0) < 0 && (errno == EACCES || errno == EPERM)) {
			k->io_err = errno;
			close(k->fd_io);
			k->fd_io = -1;
		}
	}
	if (k->fd_stat >= 0)
		k->have |= VMS_VG_MEM;
	if (k->fd_io >= 0)
		k->have |= VMS_VG_IO;
	bool all = k->nvcpu > 0;
	for (unsigned i = 0; i < k->nvcpu; i++) {
		if (vm->vcpu_tid[i] > 0) {
			int pid = (int)vm->pid, tid = (int)vm->vcpu_tid[i];
			k->fd_sched[i] = open_at(proc_dirfd, "%d/task/%d/schedstat", pid, tid);
			k->fd_tstat[i] = open_at(proc_dirfd, "%d/task/%d/stat", pid, tid);
			k->fd_tstatus[i] = open_at(proc_dirfd, "%d/task/%d/status", pid, tid);
		}
		if (k->fd_sched[i] < 0)
			all = false;
	}
	if (all)
		k->have |= VMS_VG_VCPU;
	if (k->ntap)
		k->have |= VMS_VG_NET;

	struct vms_procfile cgf = VMS_PROCFILE_INIT;
	char rel[32];
	snprintf(rel, sizeof(rel), "%d/cgroup", (int)vm->pid);
	if (vms_procfile_open(&cgf, proc_dirfd, rel, 1024) == 0) {
		struct vms_cgfiles f;
		int r = vms_cgfiles_find(&f, m, cgf.buf, cgf.len);
		vms_procfile_close(&cgf);
		if (r == -ENOMEM)
			goto nomem;
		if (r == 0) {
			if (f.cpu_stat) {
				k->fd_cpu = open_abs(f.cpu_stat);
			} else if (f.cpuacct_usage) {
				k->fd_cpu = open_abs(f.cpuacct_usage);
				k->fd_acct_stat = open_abs(f.cpuacct_stat);
				k->cpu_v1 = true;
				if (k->fd_acct_stat < 0 && k->fd_cpu >= 0) {
					close(k->fd_cpu);
					k->fd_cpu = -1;
				}
			}
			k->fd_mem = open_abs(f.mem);
			k->fd_iostat = open_abs(f.io_stat);
			vms_vmcg_open(&k->cg, f.v2_dir, f.cpu_dir, f.mem_dir, ino);
			vms_cgfiles_free(&f);
		}
	}
	if (k->fd_cpu >= 0)
		k->have |= VMS_VG_CPU;
	return 0;
nomem:
	vms_vmk_close(k);
	return -ENOMEM;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void vms_vmk_close(struct vms_vmk *k)
{
	if (!k)
		return;
	close_fd(&k->fd_stat);
	close_fd(&k->fd_io);
	close_fd(&k->fd_cpu);
	close_fd(&k->fd_acct_stat);
	close_fd(&k->fd_mem);
	close_fd(&k->fd_iostat);
	vms_vmcg_close(&k->cg);
	for (unsigned i = 0; k->fd_sched && i < k->nvcpu; i++)
		close_fd(&k->fd_sched[i]);
	for (unsigned i = 0; k->fd_tstat && i < k->nvcpu; i++)
		close_fd(&k->fd_tstat[i]);
	for (unsigned i = 0; k->fd_tstatus && i < k->nvcpu; i++)
		close_fd(&k->fd_tstatus[i]);
	free(k->fd_sched);
	free(k->fd_tstat);
	free(k->fd_tstatus);
	free(k->tap);
	reset(k);
}

/* ---- sampling ---------------------------------------------------------- */

struct rctx {
	char *buf;
	size_t cap;
	bool *gone;
	uint32_t *perr;
	uint64_t *reads;
};

/* One whole file: 0 with *len, or -errno (a file that fills the scratch
 * buffer is -EFBIG: never a truncated parse). */
static int rd(struct rctx *x, int fd, size_t *len)
{
	if (fd < 0)
		return -EBADF;
	(*x->reads)++;
	ssize_t n;
	do
		n = pread(fd, x->buf, x->cap, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		int e = errno;
		if (e == ESRCH || e == ENOENT || e == ENODEV)
			*x->gone = true;
		return -e;
	}
	if ((size_t)n >= x->cap)
		return -EFBIG;
	*len = (size_t)n;
	return 0;
}

static bool parsed(struct rctx *x, int r)
{
	if (r < 0)
		(*x->perr)++;
	return r == 0;
}

static bool mul_ok(uint64_t v, uint64_t m, uint64_t *out)
{
	if (v == VMS_NONE || (m && v > (UINT64_MAX - 1) / m))
		return false;
	*out = v * m;
	return true;
}

static bool sample_cpu(struct vms_vmk *k, struct rctx *x, uint64_t *s)
{
	static const char *const v2keys[] = {"usage_usec", "user_usec", "system_usec"};
	static const char *const v1keys[] = {"user", "system"};
	uint64_t v[3];
	size_t len = 0;
	if (rd(x, k->fd_cpu, &len) < 0)
		return false;
	if (!k->cpu_v1) {
		if (!parsed(x, vms_parse_keyed(x->buf, len, v2keys, 3, v)))
			return false;
		bool ok = true;
		for (int i = 0; i < 3; i++)
			if (!mul_ok(v[i], 1000, &s[i])) {
				s[i] = VMS_NONE;
				ok = false;
			}
		return ok;
	}
	uint64_t usage;
	if (!parsed(x, vms_parse_u64_file(x->buf, len, &usage)))
		return false;
	s[0] = usage;
	if (rd(x, k->fd_acct_stat, &len) < 0 || !parsed(x, vms_parse_keyed(x->buf, len, v1keys, 2, v)))
		return false;
	bool ok = true;
	for (int i = 0; i < 2; i++)
		if (!mul_ok(v[i], k->ns_per_tick, &s[1 + i])) {
			s[1 + i] = VMS_NONE;
			ok = false;
		}
	return ok;
}

/* mem.rss: /proc/<pid>/stat, the costliest of the VM's files that were
 * read every tick (do_task_stat formats 52 fields and walks the threads,
 * ~3.4 us a VM at 60 guests), for one field, a gauge: read on the detail
 * ticks only.  In the
 * others the column is missing and the group counts as served (not due
 * is not failed: vm.NAME.path keeps its bit), unless this tick's other
 * reads found the process gone. */
static bool sample_rss(struct vms_vmk *k, struct rctx *x, bool detail, uint64_t *s)
{
	struct vms_taskstat ts;
	size_t len = 0;
	if (!detail)
		return !*x->gone;
	return rd(x, k->fd_stat, &len) == 0 && parsed(x, vms_parse_taskstat(x->buf, len, &ts)) &&
	       mul_ok(ts.f[24], k->page_size, s);
}

/* vcpuN.pcpu, allowed, allowed_first: the thread's stat (processor,
 * field 39: the CPU it last ran on, or runs on) and status
 * (Cpus_allowed_list), on the detail ticks only. */
static void sample_place(struct vms_vmk *k, struct rctx *x, unsigned i, uint64_t *s)
{
	struct vms_taskstat ts;
	uint32_t n, first;
	size_t len = 0;
	if (rd(x, k->fd_tstat[i], &len) == 0 && parsed(x, vms_parse_taskstat(x->buf, len, &ts))) {
		if (ts.nfields >= 39)
			s[0] = ts.f[39];
		else
			(*x->perr)++; /* a kernel before 2.2.8 */
	}
	if (rd(x, k->fd_tstatus[i], &len) == 0 && parsed(x, vms_parse_status_cpus(x->buf, len, &n, &first)) &&
	    n > 0) {
		s[1] = n;
		s[2] = first;
	}
}

static const struct vms_nettab_ent *find_tap(const struct vms_nettab *nt, struct vms_vmk_tap *tp)
{
	size_t nl = strlen(tp->name);
	if (tp->hint < nt->n) {
		const struct vms_nettab_ent *e = &nt->ent[tp->hint];
		if (e->name_len == nl && memcmp(e->name, tp->name, nl) == 0)
			return e;
	}
	for (uint32_t i = 0; i < nt->n; i++) {
		const struct vms_nettab_ent *e = &nt->ent[i];
		if (e->name_len == nl && memcmp(e->name, tp->name, nl) == 0) {
			tp->hint = i;
			return e;
		}
	}
	return NULL;
}

/* the guest receives what the host sends into the tap: the tap's fields
 * in the order of the VM's net columns (of the 16 of /proc/net/dev) */
static const uint8_t tap_from[VMS_VM_NET_FIELDS] = {8, 9, 10, 11, 0, 1, 2, 3};

static bool sample_tap(const struct vms_nettab *nt, struct vms_vmk_tap *tp, struct rctx *x, uint64_t *s)
{
	const struct vms_nettab_ent *e = find_tap(nt, tp);
	if (!e)
		return false;
	struct vms_cur c;
	struct vms_net_line nl;
	vms_cur_init(&c, e->line, e->line_len);
	if (!parsed(x, vms_netdev_next(&c, &nt->hdr, &nl) == 1 ? 0 : -EINVAL))
		return false;
	bool ok = true;
	for (int i = 0; i < VMS_VM_NET_FIELDS; i++) {
		s[i] = nl.v[tap_from[i]];
		if (s[i] == VMS_NONE)
			ok = false;
	}
	return ok;
}

static bool sample_tap_nl(const struct vms_nlstats *st, struct vms_vmk_tap *tp, uint64_t *s)
{
	const struct vms_nlstats_ent *e = NULL;
	if (tp->ifindex <= 0)
		return false;
	if (tp->hint < st->n && st->ent[tp->hint].ifindex == tp->ifindex)
		e = &st->ent[tp->hint];
	for (uint32_t i = 0; !e && i < st->n; i++)
		if (st->ent[i].ifindex == tp->ifindex) {
			tp->hint = i;
			e = &st->ent[i];
		}
	if (!e)
		return false;
	for (int i = 0; i < VMS_VM_NET_FIELDS; i++)
		s[i] = e->v[tap_from[i]];
	return true;
}

unsigned vms_vmk_sample(struct vms_vmk *k, const struct vms_vmlay *l, uint64_t *slots,
			const struct vms_nettab *nt, const struct vms_nlstats *st, char *scratch, size_t cap,
			bool detail, bool *gone, uint32_t *parse_errors)
{
	struct rctx x = {scratch, cap, gone, parse_errors, &k->reads};
	unsigned ok = 0;
	size_t len = 0;

	if (k->have & VMS_VG_CPU && sample_cpu(k, &x, slots + l->cpu))
		ok |= VMS_VG_CPU;

	if (k->have & VMS_VG_VCPU) {
		bool all = true;
		for (unsigned i = 0; i < k->nvcpu && i < l->nvcpu; i++) {
			struct vms_schedstat ss;
			uint64_t *s = slots + l->vcpu + VMS_VM_VCPU_FIELDS * i;
			if (rd(&x, k->fd_sched[i], &len) < 0 ||
			    !parsed(&x, vms_parse_schedstat(x.buf, len, &ss))) {
				all = false;
				continue;
			}
			s[0] = ss.run_ns;
			s[1] = ss.wait_ns;
			s[2] = ss.slices;
		}
		if (all)
			ok |= VMS_VG_VCPU;
	}

	for (unsigned i = 0; detail && !*gone && i < k->nvcpu && i < l->nvcpu; i++)
		sample_place(k, &x, i, slots + l->place + VMS_VM_PLACE_FIELDS * i);

	if (k->have & VMS_VG_NET && ((st && st->ok) || (nt && nt->ok))) {
		bool all = true;
		for (unsigned i = 0; i < k->ntap && i < l->ntap; i++) {
			uint64_t *s = slots + l->net + VMS_VM_NET_FIELDS * i;
			if (!(st && st->ok ? sample_tap_nl(st, &k->tap[i], s) : sample_tap(nt, &k->tap[i], &x, s)))
				all = false;
		}
		if (all)
			ok |= VMS_VG_NET;
	}

	if (k->have & VMS_VG_IO) {
		static const char *const keys[] = {"read_bytes", "write_bytes"};
		uint64_t v[2];
		if (rd(&x, k->fd_io, &len) == 0 && parsed(&x, vms_parse_keyed(x.buf, len, keys, 2, v))) {
			slots[l->io] = v[0];
			slots[l->io + 1] = v[1];
			if (v[0] != VMS_NONE && v[1] != VMS_NONE)
				ok |= VMS_VG_IO;
		}
	}
	if (l->iocg >= 0 && k->fd_iostat >= 0) {
		uint64_t r, w;
		if (rd(&x, k->fd_iostat, &len) == 0 && parsed(&x, vms_parse_iostat(x.buf, len, &r, &w))) {
			slots[l->iocg] = r;
			slots[l->iocg + 1] = w;
		}
	}

	if (k->have & VMS_VG_MEM && sample_rss(k, &x, detail, &slots[l->mem]))
		ok |= VMS_VG_MEM;
	if (k->fd_mem >= 0) {
		uint64_t v;
		if (rd(&x, k->fd_mem, &len) == 0 && parsed(&x, vms_parse_u64_file(x.buf, len, &v)))
			slots[l->mem + 1] = v;
	}
	if (l->cg >= 0 && k->cg.have)
		vms_vmcg_sample(&k->cg, slots + l->cg, scratch, cap, detail, parse_errors);
	return ok;
}
