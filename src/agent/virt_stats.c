/* SPDX-License-Identifier: MIT */
/* virt_stats.c - the agent's libvirt calls for values.
 *
 * Slow path (vms_agent_slow): balloon and guest-view block stats of a
 * batch of domains chosen by virt_pace.c, in one virDomainListGetStats
 * call with VIR_CONNECT_GET_ALL_DOMAINS_STATS_NOWAIT (a domain whose job
 * is held returns at once with partial data instead of waiting 30 s:
 * FACTS.md g).  The batch is announced to the sampler first (BATCH), so
 * that if the call hangs and the sampler kills the agent, those domains
 * are held back.  Domains whose QEMU is stopped are not asked: the first
 * call to a stopped QEMU hangs whatever the flags (FACTS.md g).
 *
 * Fallback fast path (vms_agent_fast): cpu, vcpu and interface values of
 * the domains the kernel cannot serve (no local pid: a remote URI,
 * another driver; or the sampler said NEED), every tick: bulk stats where
 * the driver has them, per-domain calls where it does not (the test
 * driver's bulk stats hold only the state group; Xen's libxl driver has
 * no vcpu delay).  Every value goes to the sampler with the path that
 * produced it (STATS slow 0 or 1). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libvirt/virterror.h>

#include "agent.h"
#include "virt_dom.h"
#include "virt_stats.h"

#define MAXP 512 /* values in one STATS message; more are split */

struct acc {
	struct vms_agent *a;
	const struct vms_adom *d;
	int64_t t;
	uint8_t slow;
	unsigned n;
	uint16_t id[MAXP], idx[MAXP];
	uint64_t v[MAXP];
};

static void acc_flush(struct acc *c)
{
	if (!c->n)
		return;
	struct vms_vp_w *w = &c->a->w;
	vms_vp_begin(w, VMS_VP_STATS);
	vms_vp_uuid(w, c->d->uuid);
	vms_vp_u64(w, (uint64_t)c->t);
	vms_vp_u8(w, c->slow);
	vms_vp_u16(w, (uint16_t)c->n);
	for (unsigned i = 0; i < c->n; i++) {
		vms_vp_u16(w, c->id[i]);
		vms_vp_u16(w, c->idx[i]);
		vms_vp_u64(w, c->v[i]);
	}
	vms_vp_end(w);
	vms_agent_send(c->a);
	c->n = 0;
}

static void acc_put(struct acc *c, unsigned id, unsigned idx, uint64_t v)
{
	if (v == VMS_NONE)
		return;
	if (c->n == MAXP)
		acc_flush(c);
	c->id[c->n] = (uint16_t)id;
	c->idx[c->n] = (uint16_t)idx;
	c->v[c->n] = v;
	c->n++;
}

static void acc_start(struct acc *c, struct vms_agent *a, const struct vms_adom *d, int64_t t, uint8_t slow)
{
	c->a = a;
	c->d = d;
	c->t = t;
	c->slow = slow;
	c->n = 0;
}

/* A typed parameter as a counter value (negative: absent). */
static bool tp_u64(const virTypedParameter *p, uint64_t *v)
{
	switch (p->type) {
	case VIR_TYPED_PARAM_ULLONG:
		*v = p->value.ul;
		return *v != VMS_NONE;
	case VIR_TYPED_PARAM_UINT:
		*v = p->value.ui;
		return true;
	case VIR_TYPED_PARAM_LLONG:
		*v = (uint64_t)p->value.l;
		return p->value.l >= 0;
	case VIR_TYPED_PARAM_INT:
		*v = (uint64_t)p->value.i;
		return p->value.i >= 0;
	default:
		return false;
	}
}

static int name_index(char *const *v, unsigned n, const char *s)
{
	for (unsigned i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return (int)i;
	return -1;
}

static const virTypedParameter *param(const virDomainStatsRecord *r, const char *field)
{
	for (int i = 0; i < r->nparams; i++)
		if (strcmp(r->params[i].field, field) == 0)
			return &r->params[i];
	return NULL;
}

/* "prefix.N.rest": N and rest, or false */
static bool split_n(const char *field, const char *prefix, unsigned *n, const char **rest)
{
	size_t pl = strlen(prefix);
	if (strncmp(field, prefix, pl) != 0 || field[pl] < '0' || field[pl] > '9')
		return false;
	char *end;
	unsigned long v = strtoul(field + pl, &end, 10);
	if (*end != '.' || v > 65535)
		return false;
	*n = (unsigned)v;
	*rest = end + 1;
	return true;
}

/* The position in names[] of the device that a record calls
 * "PREFIX.N.name" (a tap, a disk), or -1. */
static int device_of(const virDomainStatsRecord *r, const char *prefix, unsigned n, char *const *names,
		     unsigned count)
{
	char key[48];
	snprintf(key, sizeof(key), "%s.%u.name", prefix, n);
	const virTypedParameter *nm = param(r, key);
	return nm && nm->type == VIR_TYPED_PARAM_STRING ? name_index(names, count, nm->value.s) : -1;
}

/* Parameter p, "PREFIX.N.rest" of a record, as the value of the metric
 * of ids first..last whose libvirt name is rest, for the device at N (its
 * position in names[]: a tap, a disk).  The metric's id, or 0 when nothing
 * was put (an unknown device or name, no value). */
static unsigned put_device(struct acc *c, const virDomainStatsRecord *r, const virTypedParameter *p,
			   const char *prefix, unsigned n, const char *rest, char *const *names,
			   unsigned count, unsigned first, unsigned last)
{
	uint64_t v;
	int t = device_of(r, prefix, n, names, count);
	if (t < 0 || !tp_u64(p, &v))
		return 0;
	for (unsigned m = first; m <= last; m++)
		if (strcmp(rest, vms_vmetric_find(m)->lv) == 0) {
			acc_put(c, m, (unsigned)t, v);
			return m;
		}
	return 0;
}

/* The values of a record's groups in mask (bits of enum vms_vgroup),
 * mapped onto the domain's vCPUs, taps and disks; returns the groups that
 * had values.  check: cpu and vcpu values are libvirt's copies for the
 * crosscheck columns. */
static unsigned put_record(struct acc *c, const virDomainStatsRecord *r, unsigned mask, bool check)
{
	const struct vms_adom *d = c->d;
	unsigned seen = 0, n;
	const char *rest;
	uint64_t v;
	for (int i = 0; i < r->nparams; i++) {
		const virTypedParameter *p = &r->params[i];
		const char *f = p->field;
		if (strncmp(f, "cpu.", 4) == 0) {
			if (!(mask & VMS_VG_CPU))
				continue;
			static const char *const k[] = {"time", "user", "system"};
			for (unsigned j = 0; j < 3; j++)
				if (strcmp(f + 4, k[j]) == 0 && tp_u64(p, &v)) {
					acc_put(c, (check ? VMS_VM_CHECK_CPU_TIME : VMS_VM_CPU_TIME) + j, 0, v);
					seen |= VMS_VG_CPU;
				}
		} else if (split_n(f, "vcpu.", &n, &rest)) {
			if (!(mask & VMS_VG_VCPU) || n >= d->nvcpu || !tp_u64(p, &v))
				continue;
			if (strcmp(rest, "time") == 0)
				acc_put(c, check ? VMS_VM_CHECK_VCPU_TIME : VMS_VM_VCPU_TIME, n, v);
			else if (strcmp(rest, "delay") == 0)
				acc_put(c, check ? VMS_VM_CHECK_VCPU_DELAY : VMS_VM_VCPU_DELAY, n, v);
			else
				continue;
			seen |= VMS_VG_VCPU;
		} else if (split_n(f, "net.", &n, &rest)) {
			if ((mask & VMS_VG_NET) && put_device(c, r, p, "net", n, rest, d->tap, d->ntap,
							      VMS_VM_NET_RX_BYTES, VMS_VM_NET_TX_DROP))
				seen |= VMS_VG_NET;
		} else if (strncmp(f, "balloon.", 8) == 0) {
			if (!(mask & VMS_VG_BALLOON))
				continue;
			for (unsigned k = 0; k < VMS_VM_NBALLOON; k++)
				if (strcmp(f + 8, vms_vm_balloon[k].lv) == 0 && tp_u64(p, &v)) {
					acc_put(c, vms_vm_balloon[k].id, 0, v);
					seen |= VMS_VG_BALLOON;
				}
		} else if (split_n(f, "block.", &n, &rest)) {
			if (!(mask & VMS_VG_BLOCK))
				continue;
			unsigned m = put_device(c, r, p, "block", n, rest, d->disk, d->ndisk,
						VMS_VM_BLOCK_RD_REQS, VMS_VM_BLOCK_PHYSICAL);
			/* counters, not the sizes libvirt knows without QEMU */
			if (m && m < VMS_VM_BLOCK_ALLOCATION)
				seen |= VMS_VG_BLOCK;
		}
	}
	return seen;
}

static struct vms_adom *by_dom(struct vms_agent *a, virDomainPtr dom)
{
	char uuid[VIR_UUID_STRING_BUFLEN];
	if (virDomainGetUUIDString(dom, uuid) < 0)
		return NULL;
	for (unsigned i = 0; i < a->nd; i++)
		if (strncmp(a->d[i].uuid, uuid, VMS_VP_UUID_LEN) == 0)
			return &a->d[i];
	return NULL;
}

/* The record has a field of the group (prefix "block."): the driver
 * implements the group, whether or not its counters came this time (with
 * NOWAIT and the domain's job busy, QEMU's libvirt gives block.count and
 * the disks' names and sizes but no counters). */
static bool has_group(const virDomainStatsRecord *r, const char *prefix)
{
	size_t n = strlen(prefix);
	for (int i = 0; i < r->nparams; i++)
		if (strncmp(r->params[i].field, prefix, n) == 0)
			return true;
	return false;
}

/* The bulk record of d came with the groups `seen`: got[k] = seen for d's
 * place k in list (n domains). */
static void note_got(uint8_t *got, struct vms_adom *const *list, unsigned n, const struct vms_adom *d, unsigned seen)
{
	for (unsigned k = 0; k < n; k++)
		if (list[k] == d)
			got[k] = (uint8_t)seen;
}

/* ---- per-domain calls ---------------------------------------------------------- */

static void call_cpu(struct acc *c)
{
	int n = virDomainGetCPUStats(c->d->dom, NULL, 0, -1, 1, 0);
	if (n <= 0 || n > 64)
		return;
	virTypedParameter p[64];
	memset(p, 0, sizeof(p));
	if (virDomainGetCPUStats(c->d->dom, p, (unsigned)n, -1, 1, 0) < 0)
		return;
	static const char *const k[] = {"cpu_time", "user_time", "system_time"};
	uint64_t v;
	for (int i = 0; i < n; i++)
		for (unsigned j = 0; j < 3; j++)
			if (strcmp(p[i].field, k[j]) == 0 && tp_u64(&p[i], &v))
				acc_put(c, VMS_VM_CPU_TIME + j, 0, v);
	virTypedParamsClear(p, n);
}

static void call_vcpu(struct acc *c)
{
	unsigned n = c->d->nvcpu;
	if (!n)
		return;
	virVcpuInfoPtr info = calloc(n, sizeof(*info));
	if (!info)
		return;
	int got = virDomainGetVcpus(c->d->dom, info, (int)n, NULL, 0);
	for (int i = 0; i < got; i++)
		if (info[i].number < n)
			acc_put(c, VMS_VM_VCPU_TIME, info[i].number, info[i].cpuTime);
	free(info);
}

static void call_net(struct acc *c)
{
	for (unsigned t = 0; t < c->d->ntap; t++) {
		virDomainInterfaceStatsStruct s;
		if (virDomainInterfaceStats(c->d->dom, c->d->tap[t], &s, sizeof(s)) < 0)
			continue;
		/* libvirt's view is the guest's already */
		const long long v[VMS_VM_NET_TX_DROP - VMS_VM_NET_RX_BYTES + 1] = {
			s.rx_bytes, s.rx_packets, s.rx_errs, s.rx_drop,
			s.tx_bytes, s.tx_packets, s.tx_errs, s.tx_drop,
		};
		for (unsigned k = 0; k < VMS_ARRAY_SIZE(v); k++)
			if (v[k] >= 0)
				acc_put(c, VMS_VM_NET_RX_BYTES + k, t, (uint64_t)v[k]);
	}
}

static bool call_balloon(struct acc *c)
{
	static const struct {
		int tag;
		unsigned id;
	} map[] = {
		{VIR_DOMAIN_MEMORY_STAT_ACTUAL_BALLOON, VMS_VM_BALLOON_CURRENT},
		{VIR_DOMAIN_MEMORY_STAT_SWAP_IN, VMS_VM_BALLOON_SWAP_IN},
		{VIR_DOMAIN_MEMORY_STAT_SWAP_OUT, VMS_VM_BALLOON_SWAP_OUT},
		{VIR_DOMAIN_MEMORY_STAT_MAJOR_FAULT, VMS_VM_BALLOON_MAJOR_FAULT},
		{VIR_DOMAIN_MEMORY_STAT_MINOR_FAULT, VMS_VM_BALLOON_MINOR_FAULT},
		{VIR_DOMAIN_MEMORY_STAT_UNUSED, VMS_VM_BALLOON_UNUSED},
		{VIR_DOMAIN_MEMORY_STAT_AVAILABLE, VMS_VM_BALLOON_AVAILABLE},
		{VIR_DOMAIN_MEMORY_STAT_USABLE, VMS_VM_BALLOON_USABLE},
		{VIR_DOMAIN_MEMORY_STAT_LAST_UPDATE, VMS_VM_BALLOON_LAST_UPDATE},
		{VIR_DOMAIN_MEMORY_STAT_DISK_CACHES, VMS_VM_BALLOON_DISK_CACHES},
		{VIR_DOMAIN_MEMORY_STAT_HUGETLB_PGALLOC, VMS_VM_BALLOON_HUGETLB_PGALLOC},
		{VIR_DOMAIN_MEMORY_STAT_HUGETLB_PGFAIL, VMS_VM_BALLOON_HUGETLB_PGFAIL},
		{VIR_DOMAIN_MEMORY_STAT_RSS, VMS_VM_BALLOON_RSS},
	};
	virDomainMemoryStatStruct st[VIR_DOMAIN_MEMORY_STAT_NR];
	int n = virDomainMemoryStats(c->d->dom, st, VIR_DOMAIN_MEMORY_STAT_NR, 0);
	if (n < 0)
		return false;
	for (int i = 0; i < n; i++)
		for (unsigned k = 0; k < VMS_ARRAY_SIZE(map); k++)
			if (st[i].tag == map[k].tag)
				acc_put(c, map[k].id, 0, st[i].val);
	return true;
}

static bool call_block(struct acc *c)
{
	bool ok = c->d->ndisk == 0;
	for (unsigned t = 0; t < c->d->ndisk; t++) {
		virDomainBlockStatsStruct s;
		if (virDomainBlockStats(c->d->dom, c->d->disk[t], &s, sizeof(s)) < 0)
			continue;
		const long long v[] = {s.rd_req, s.rd_bytes, s.wr_req, s.wr_bytes};
		const unsigned id[] = {VMS_VM_BLOCK_RD_REQS, VMS_VM_BLOCK_RD_BYTES, VMS_VM_BLOCK_WR_REQS,
				       VMS_VM_BLOCK_WR_BYTES};
		for (unsigned k = 0; k < 4; k++)
			if (v[k] >= 0)
				acc_put(c, id[k], t, (uint64_t)v[k]);
		ok = true;
	}
	return ok;
}

/* ---- the fallback fast path ------------------------------------------------------ */

static bool usable(const struct vms_adom *d, uint64_t now)
{
	return d->dom && !d->dead && d->hold_until <= now && !vms_adom_stopped(d);
}

/* ---- migration jobs -------------------------------------------------------------- */

void vms_agent_job_values(const virTypedParameter *p, int n, int type, uint64_t *v)
{
	for (unsigned k = 0; k < VMS_VM_NMIG; k++)
		v[k] = VMS_NONE;
	v[0] = (uint64_t)type;
	for (int i = 0; i < n; i++) {
		uint64_t x;
		if (!tp_u64(&p[i], &x))
			continue;
		for (unsigned k = 1; k < VMS_VM_NMIG; k++) {
			const struct vms_vmetric_info *m = &vms_vm_mig[k];
			if (strcmp(p[i].field, m->lv) != 0)
				continue;
			/* "downtime": what QEMU expects while the job runs, what
			 * it was once completed */
			if (m->id == VMS_VM_MIG_DOWNTIME_EXPECTED && type != VIR_DOMAIN_JOB_UNBOUNDED)
				continue;
			if (m->id == VMS_VM_MIG_DOWNTIME && type == VIR_DOMAIN_JOB_UNBOUNDED)
				continue;
			v[k] = x;
		}
	}
}

void vms_agent_job_send(struct vms_agent *a, const struct vms_adom *d, const uint64_t *v)
{
	struct acc *c = malloc(sizeof(*c));
	if (!c)
		return;
	acc_start(c, a, d, vms_agent_real(), 0);
	for (unsigned k = 0; k < VMS_VM_NMIG; k++)
		acc_put(c, vms_vm_mig[k].id, 0, v[k]);
	acc_flush(c);
	free(c);
}

/* A migration of either direction (jobs of other operations: not ours). */
static bool is_migration(const virTypedParameter *p, int n)
{
	int op = -1;
	if (virTypedParamsGetInt((virTypedParameterPtr)p, n, VIR_DOMAIN_JOB_OPERATION, &op) != 1)
		return true; /* older libvirt: a job that followed a migration event */
	return op == VIR_DOMAIN_JOB_OPERATION_MIGRATION_OUT || op == VIR_DOMAIN_JOB_OPERATION_MIGRATION_IN;
}

void vms_agent_jobs(struct vms_agent *a)
{
	uint64_t now = vms_agent_mono();
	for (unsigned i = 0; i < a->nd; i++) {
		struct vms_adom *d = &a->d[i];
		if (!d->mig || !usable(d, now))
			continue;
		int type = VIR_DOMAIN_JOB_NONE, n = 0;
		virTypedParameterPtr p = NULL;
		if (virDomainGetJobStats(d->dom, &type, &p, &n, 0) < 0) {
			/* the destination has no statistics ("only on the source
			 * host"), or the domain is gone: nothing to follow; another
			 * failure (a busy job lock) is tried again, 3 times */
			virErrorPtr e = virGetLastError();
			int code = e ? e->code : VIR_ERR_INTERNAL_ERROR;
			if (code == VIR_ERR_OPERATION_UNSUPPORTED || code == VIR_ERR_NO_DOMAIN ||
			    code == VIR_ERR_OPERATION_INVALID || ++d->mig_fail >= 3)
				d->mig = false;
			continue;
		}
		d->mig_fail = 0;
		if (type == VIR_DOMAIN_JOB_NONE || !is_migration(p, n)) {
			d->mig = false; /* over: the final values come with its event */
		} else {
			uint64_t v[VMS_VM_NMIG];
			vms_agent_job_values(p, n, type, v);
			vms_agent_job_send(a, d, v);
			if (type != VIR_DOMAIN_JOB_UNBOUNDED)
				d->mig = false; /* failed or cancelled: said once */
		}
		virTypedParamsFree(p, n);
	}
}

/* ---- dirty-page rates ------------------------------------------------------------ */

#define DIRTY_POLL (250 * VMS_NSEC_PER_MSEC)
#define DIRTY_POLLS 8 /* then the calculation is forgotten (QEMU lost it) */

/* The result of d's calculation, from the dirtyrate stats group (readable
 * on the read-only connection): sent once it is measured and new. */
static void dirty_read(struct vms_agent *a, struct vms_adom *d, uint64_t now)
{
	virDomainPtr doms[2] = {d->dom, NULL};
	virDomainStatsRecordPtr *recs = NULL;
	int n = virDomainListGetStats(doms, VIR_DOMAIN_STATS_DIRTYRATE, &recs,
				      VIR_CONNECT_GET_ALL_DOMAINS_STATS_NOWAIT);
	long long st = -1, start = -1, period = -1, mbps = -1;
	for (int i = 0; i < n; i++)
		for (int k = 0; k < recs[i]->nparams; k++) {
			const virTypedParameter *p = &recs[i]->params[k];
			uint64_t v;
			if (strncmp(p->field, "dirtyrate.", 10) != 0 || !tp_u64(p, &v))
				continue;
			const char *f = p->field + 10;
			if (strcmp(f, "calc_status") == 0)
				st = (long long)v;
			else if (strcmp(f, "calc_start_time") == 0)
				start = (long long)v;
			else if (strcmp(f, "calc_period") == 0)
				period = (long long)v;
			else if (strcmp(f, "megabytes_per_second") == 0)
				mbps = (long long)v;
		}
	virDomainStatsRecordListFree(recs);
	/* still measuring, or no answer (the call failed; the domain's job
	 * was busy and NOWAIT left the group out): ask again a little later */
	if ((st == VIR_DOMAIN_DIRTYRATE_MEASURING || st < 0) && ++d->dirty_polls < DIRTY_POLLS) {
		d->dirty_read_at = now + DIRTY_POLL;
		return;
	}
	d->dirty_wait = false;
	if (st != VIR_DOMAIN_DIRTYRATE_MEASURED || start < 0 || start == d->dirty_last)
		return; /* not measured, or the one already sent */
	d->dirty_last = start;
	struct acc *c = malloc(sizeof(*c));
	if (!c)
		return;
	acc_start(c, a, d, vms_agent_real(), 0);
	const long long v[VMS_VM_NDIRTY] = {st, start, period, mbps};
	for (unsigned k = 0; k < VMS_VM_NDIRTY; k++)
		if (v[k] >= 0)
			acc_put(c, vms_vm_dirty[k].id, 0, (uint64_t)v[k]);
	acc_flush(c);
	free(c);
}

void vms_agent_dirty(struct vms_agent *a)
{
	if (!a->rw)
		return;
	uint64_t now = vms_agent_mono();
	struct vms_adom *due = NULL;
	for (unsigned i = 0; i < a->nd; i++) {
		struct vms_adom *d = &a->d[i];
		if (!usable(d, now))
			continue;
		if (d->dirty_wait) {
			if (now >= d->dirty_read_at)
				dirty_read(a, d, now);
		} else if (now >= d->dirty_next && (!due || d->dirty_next < due->dirty_next)) {
			due = d;
		}
	}
	if (!due)
		return;
	/* one start per tick, the longest due first: each is a QMP round trip,
	 * like a slow batch's; the calculation itself runs in QEMU */
	due->dirty_next = now + a->dirty_every_ns;
	virDomainPtr rd = virDomainLookupByUUIDString(a->rw, due->uuid);
	int r = rd ? virDomainStartDirtyRateCalc(rd, (int)a->dirty_seconds, VIR_DOMAIN_DIRTYRATE_MODE_PAGE_SAMPLING)
		   : -1;
	if (r < 0 && !a->dirty_said) {
		/* before virDomainFree, which clears the error */
		virErrorPtr e = virGetLastError();
		fprintf(stderr, "vmsampler-virt: dirty-rate calculation of %s refused: %s (said once)\n", due->name,
			e && e->message ? e->message : "unknown error");
		a->dirty_said = true;
	}
	if (rd)
		virDomainFree(rd);
	if (r < 0)
		return;
	due->dirty_wait = true;
	due->dirty_polls = 0;
	due->dirty_read_at = now + (uint64_t)a->dirty_seconds * VMS_NSEC_PER_SEC + DIRTY_POLL;
}

void vms_agent_fast(struct vms_agent *a)
{
	uint64_t now = vms_agent_mono();
	virDomainPtr doms[VMS_PACE_BATCH_MAX + 1];
	struct vms_adom *list[VMS_PACE_BATCH_MAX];
	unsigned n = 0;
	unsigned groups = 0;
	for (unsigned i = 0; i < a->nd && n < VMS_PACE_BATCH_MAX; i++) {
		struct vms_adom *d = &a->d[i];
		if (!d->fallback || !usable(d, now))
			continue;
		groups |= d->fallback;
		doms[n] = d->dom;
		list[n++] = d;
	}
	if (!n)
		return;
	doms[n] = NULL;
	unsigned stats = 0;
	if (groups & VMS_VG_CPU && !a->no_bulk_cpu)
		stats |= VIR_DOMAIN_STATS_CPU_TOTAL;
	if (groups & VMS_VG_VCPU && !a->no_bulk_vcpu)
		stats |= VIR_DOMAIN_STATS_VCPU;
	if (groups & VMS_VG_NET && !a->no_bulk_net)
		stats |= VIR_DOMAIN_STATS_INTERFACE;
	unsigned seen_any = 0;
	uint8_t *got = calloc(n, 1);
	struct acc *c = malloc(sizeof(*c));
	if (!got || !c) {
		free(got);
		free(c);
		return;
	}
	virDomainStatsRecordPtr *recs = NULL;
	int nrec = stats ? virDomainListGetStats(doms, stats, &recs, VIR_CONNECT_GET_ALL_DOMAINS_STATS_NOWAIT) : -1;
	int64_t t = vms_agent_real();
	for (int i = 0; i < nrec; i++) {
		struct vms_adom *d = by_dom(a, recs[i]->dom);
		if (!d)
			continue;
		acc_start(c, a, d, t, 0);
		unsigned seen = put_record(c, recs[i], d->fallback, false);
		acc_flush(c);
		seen_any |= seen;
		note_got(got, list, n, d, seen);
	}
	if (nrec >= 0) {
		/* the driver's bulk stats lack a group altogether: ask per domain
		 * from now on */
		if (stats & VIR_DOMAIN_STATS_CPU_TOTAL && !(seen_any & VMS_VG_CPU))
			a->no_bulk_cpu = true;
		if (stats & VIR_DOMAIN_STATS_VCPU && !(seen_any & VMS_VG_VCPU))
			a->no_bulk_vcpu = true;
		if (stats & VIR_DOMAIN_STATS_INTERFACE && !(seen_any & VMS_VG_NET))
			a->no_bulk_net = true;
	}
	virDomainStatsRecordListFree(recs);
	for (unsigned k = 0; k < n; k++) {
		struct vms_adom *d = list[k];
		unsigned missing = d->fallback & ~got[k];
		if (!missing)
			continue;
		acc_start(c, a, d, vms_agent_real(), 0);
		if (missing & VMS_VG_CPU)
			call_cpu(c);
		if (missing & VMS_VG_VCPU)
			call_vcpu(c);
		if (missing & VMS_VG_NET)
			call_net(c);
		c->t = vms_agent_real();
		acc_flush(c);
	}
	free(c);
	free(got);
}

/* ---- the slow path ------------------------------------------------------------------- */

static bool skip_dom(void *ctx, unsigned i)
{
	struct vms_agent *a = ctx;
	const char *uuid = a->pace.d[i].uuid;
	for (unsigned k = 0; k < a->nd; k++)
		if (strcmp(a->d[k].uuid, uuid) == 0)
			return !usable(&a->d[k], vms_agent_mono());
	return true;
}

static struct vms_adom *by_uuid(struct vms_agent *a, const char *uuid)
{
	for (unsigned k = 0; k < a->nd; k++)
		if (strcmp(a->d[k].uuid, uuid) == 0)
			return &a->d[k];
	return NULL;
}

void vms_agent_slow(struct vms_agent *a)
{
	unsigned idx[VMS_PACE_BATCH_MAX];
	struct vms_adom *list[VMS_PACE_BATCH_MAX];
	virDomainPtr doms[VMS_PACE_BATCH_MAX + 1];
	bool ok[VMS_PACE_BATCH_MAX];
	uint64_t t0 = vms_agent_mono();
	unsigned n = vms_pace_pick(&a->pace, t0, skip_dom, a, idx, VMS_PACE_BATCH_MAX);
	unsigned m = 0;
	for (unsigned k = 0; k < n; k++) {
		struct vms_adom *d = by_uuid(a, a->pace.d[idx[k]].uuid);
		if (!d)
			continue;
		idx[m] = idx[k];
		list[m] = d;
		doms[m++] = d->dom;
	}
	if (!m)
		return;
	doms[m] = NULL;

	uint32_t id = ++a->batch_id;
	vms_vp_begin(&a->w, VMS_VP_BATCH);
	vms_vp_u32(&a->w, id);
	vms_vp_u16(&a->w, (uint16_t)m);
	for (unsigned k = 0; k < m; k++)
		vms_vp_uuid(&a->w, list[k]->uuid);
	vms_vp_end(&a->w);
	vms_agent_send(a);

	unsigned stats = 0;
	if (!a->no_bulk_balloon)
		stats |= VIR_DOMAIN_STATS_BALLOON;
	if (!a->no_bulk_block)
		stats |= VIR_DOMAIN_STATS_BLOCK;
	if (a->crosscheck)
		stats |= VIR_DOMAIN_STATS_CPU_TOTAL | VIR_DOMAIN_STATS_VCPU;
	struct acc *c = malloc(sizeof(*c));
	if (!c)
		return;
	virDomainStatsRecordPtr *recs = NULL;
	int nrec = stats ? virDomainListGetStats(doms, stats, &recs, VIR_CONNECT_GET_ALL_DOMAINS_STATS_NOWAIT) : -1;
	int64_t t = vms_agent_real();
	uint64_t t1 = vms_agent_mono();
	unsigned failed = 0, seen_any = 0;
	bool block_group = false;
	uint8_t got[VMS_PACE_BATCH_MAX];
	memset(got, 0, sizeof(got));
	memset(ok, 0, sizeof(ok));
	for (int i = 0; i < nrec; i++) {
		struct vms_adom *d = by_dom(a, recs[i]->dom);
		if (!d)
			continue;
		acc_start(c, a, d, t, 1);
		unsigned seen = put_record(c, recs[i], VMS_VG_BALLOON | VMS_VG_BLOCK, false);
		if (a->crosscheck)
			put_record(c, recs[i], VMS_VG_CPU | VMS_VG_VCPU, true);
		acc_flush(c);
		seen_any |= seen;
		block_group |= has_group(recs[i], "block.");
		note_got(got, list, m, d, seen);
	}
	virDomainStatsRecordListFree(recs);
	if (nrec >= 0 && m >= 1) {
		if (stats & VIR_DOMAIN_STATS_BALLOON && !(seen_any & VMS_VG_BALLOON))
			a->no_bulk_balloon = true;
		/* no block field at all: this driver's bulk stats lack the
		 * group (the test driver); counters missing for a busy job are
		 * not that, and the per-domain call has fewer fields */
		if (stats & VIR_DOMAIN_STATS_BLOCK && !(seen_any & VMS_VG_BLOCK) && !block_group)
			a->no_bulk_block = true;
	}
	for (unsigned k = 0; k < m; k++) {
		struct vms_adom *d = list[k];
		bool need_block = d->ndisk > 0;
		bool b_ok = (got[k] & VMS_VG_BALLOON) != 0, k_ok = !need_block || (got[k] & VMS_VG_BLOCK);
		if ((a->no_bulk_balloon && !b_ok) || (a->no_bulk_block && !k_ok)) {
			acc_start(c, a, d, 0, 1);
			if (a->no_bulk_balloon && !b_ok)
				b_ok = call_balloon(c);
			if (a->no_bulk_block && !k_ok)
				k_ok = call_block(c);
			c->t = vms_agent_real();
			acc_flush(c);
		}
		/* a domain without balloon stats is fine; one whose disk
		 * counters did not come (its job was busy) failed */
		ok[k] = k_ok;
		if (!ok[k])
			failed++;
	}
	free(c);
	uint64_t t2 = vms_agent_mono();
	vms_vp_begin(&a->w, VMS_VP_BATCH_DONE);
	vms_vp_u32(&a->w, id);
	vms_vp_u16(&a->w, (uint16_t)failed);
	vms_vp_u64(&a->w, t2 - t0);
	vms_vp_end(&a->w);
	vms_agent_send(a);
	vms_pace_done(&a->pace, idx, ok, m, t2, t1 - t0);
}
