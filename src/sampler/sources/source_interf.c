/* SPDX-License-Identifier: MIT */
/* source_interf.c - interference attribution per VM (source
 * "interference", doc/interference.md): the account of the BPF program
 * (bpf_interf.h) as counters.
 *
 * Per VM (vm.NAME.intf.*, key its UUID), in ns since the VM appeared in
 * the run (one that leaves has its account dropped from the program's
 * map, and starts from 0 if it comes back; what the VMs that stay had
 * waited behind it is carried in their wait and vms, so that no column
 * of a VM that stays ever goes back), counters:
 *   wait     its vCPUs' waits (runnable, not running) as the program
 *            measured them: the sum of the parts below
 *   vms      behind other VMs' threads
 *   own      behind its own other threads (sibling vCPUs, emulator, I/O)
 *   host     behind other user tasks
 *   kernel   behind kernel threads and idle
 *   unknown  the parts the program could not place (a wait longer than
 *            its ring of segments)
 *   host_other  of host, behind the cgroups not named below: when a
 *            cgroup joins the named set, what each VM had waited behind
 *            it stays here (its column starts from 0), and when one
 *            leaves, what was in its column is not counted again, so
 *            that host_other never goes back and, between two changes of
 *            the set, grows by what the cgroups not named held the VM
 *   irq_est  of wait, an estimate of the interrupt and softirq time
 *            inside the parts above (not besides them): each VM's waits
 *            per CPU waited on (the program's waits map) times that
 *            CPU's share of irq + softirq in its busy time in the tick
 *            (/proc/stat, cpuirq.h); doc/interference.md says why it is
 *            not measured
 * and per CPU (rq.N.delay, after the VMs' columns), counter: the run
 * queue delay of every task that ran on the CPU (its run delay added at
 * its switch-out there: the program's rq_delay, bpf_interf.h), what
 * /proc/schedstat's delay (the schedstat source's sched.N.delay) is on a
 * kernel built with CONFIG_SCHEDSTATS (where both are read, a cross-check;
 * where the file is missing, the only source; ~90 ns a switch); a kernel
 * that refuses the program's task storage: no such columns, one line at
 * open
 * and the victim x culprit matrix as sparse columns: vm.NAME.intf.by.OTHER
 * for each other VM it has waited behind so far, and
 * vm.NAME.intf.host.CGROUP for each of the host's top cgroups (the
 * `host_cgroups` most waited behind over all VMs so far, by their path
 * under the cgroup2 mount, e.g. system.slice/backup.service; "/" is the
 * root) it has waited behind, from 0 when the cgroup was named (declared
 * when the pair first appears: a new schema generation, as when a disk
 * appears, but at most one per VMS_INTERF_DECLARE_NS, declare_due; a
 * host whose VMs are pinned apart has few pairs).  The program keys a host task by its cgroup v2
 * id, the inode of the group's directory: idle() ranks the ids, names the
 * top ones by a walk of the cgroup2 mount (cached; walked again only when
 * a new id is to be named) and asks for a new schema when the top set
 * changed.  The top culprit and its share over an interval are the
 * readers' to compute (counters in, rates out).
 *
 * VMs get an index for the program that is never reused in the run (by
 * UUID), so that the account's old entries never name another VM.  The
 * tick reads the account with no allocation (an array sized at open). */
#include <fts.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bpf_interf.h"
#include "clock.h"
#include "grow.h"
#include "log.h"
#include "cgroup.h"
#include "cpuirq.h"
#include "name.h"
#include "source.h"
#include "vmtab.h"

enum { C_WAIT, C_VMS, C_OWN, C_HOST, C_HOST_OTHER, C_KERNEL, C_UNKNOWN, C_IRQ, IF_COLS };
#define IF_ACCT_MAX 16384 /* the acct map's entries (interf.bpf.c) */
#define IF_TOP_MAX 64 /* sources.interference.host_cgroups at most */
#define IF_RANK_NS 1000000000ull /* idle ranks the host's cgroups at most this often */

static const char *const if_cols[IF_COLS] = {"wait",    "vms",     "own",    "host",
					     "host_other", "kernel", "unknown", "irq_est"};

/* a VM this run has seen: its index for the program is its position */
struct if_known {
	char uuid[VMS_UUID_LEN + 1];
	pid_t pid;            /* registered QEMU process, 0: none */
	pid_t *tid;           /* registered vCPU threads */
	unsigned ntid;
	int32_t vm;           /* its position in the current VM set, -1: gone */
	bool gone;            /* it left: its account was dropped (it starts again from 0 if it comes back) */
	uint64_t irq_est;     /* the estimate so far, ns */
};

/* a pair (victim, culprit) with a column: culprit kind INTERF_VM (id: its
 * known index) or INTERF_HOST (id: a named cgroup's id; off: what the
 * account had for the pair when the cgroup was named, its column being
 * the account's value less off) */
struct if_pair {
	uint32_t victim, kind;
	uint64_t id, off;
};

/* a host cgroup's name, by its v2 id */
struct if_cg {
	uint64_t id;
	char *path; /* under the cgroup2 mount, "/" for the root; "cgroup-ID" if the walk did not find it */
};

struct interference {
	struct vms_interf *x;
	uint64_t vmgen;
	struct if_known *known;
	uint32_t nknown, capknown;
	struct if_pair *pair;     /* declared pairs, column order */
	unsigned npair;
	uint32_t *base;           /* per known VM: its first column, UINT32_MAX: none */
	uint32_t *pfirst, *pn;    /* per known VM: its pairs, pair[pfirst .. pfirst + pn) */
	uint32_t npk;             /* known VMs pfirst and pn cover */
	uint32_t *setk;           /* per VM of the set: its known index */
	struct vms_interf_ent *ent; /* the tick's read of the account */
	unsigned nent;            /* entries of the last successful read */
	/* the host's cgroups: the top ones named (declared), idle's choice */
	unsigned ntop;            /* how many to name (sources.interference.host_cgroups) */
	uint64_t *named, *want;   /* ntop each, sorted; nnamed, nwant used */
	unsigned nnamed, nwant;
	bool rename;              /* want differs from named: a new schema (held as a new pair is) */
	struct if_cg *cg;         /* the names known so far */
	unsigned ncg, capcg;
	char *cgroot;             /* the cgroup2 mount, NULL: none */
	/* the interrupt time estimate */
	struct vms_cpuirq cpus;
	struct vms_interf_wait *wt; /* the tick's read of the waits per CPU */
	uint64_t *wprev;          /* [known * ncpu]: the waits as last read */
	unsigned nwprev;          /* known VMs it covers */
	uint64_t next_rank;       /* the loop's clock (idle's until_ns) */
	uint64_t declared_ns;     /* the run's clock at the last declaration */
	uint64_t *carry;          /* per known VM: its waits behind VMs that left, ns (in wait and vms) */
	uint64_t *hcarry;         /* per known VM: added to host_other (modulo 2^64: it may be "negative"),
				   * what the named set's changes took from or gave to the sum of the
				   * cgroups not named */
	uint32_t ncarry;          /* known VMs carry and hcarry cover */
	/* each CPU's run queue delay (rq.N.delay, after the VMs' columns):
	 * the program's, for the CPUs /proc/stat has (cpus.ncpu); 0 CPUs
	 * where the program does not keep it */
	unsigned nrq;
	uint32_t rqbase;
};

static int if_open(struct vms_source *src, const struct vms_source_env *env)
{
	(void)env;
	struct interference *p = src->priv;
	char err[256];
	p->ent = malloc(IF_ACCT_MAX * sizeof(*p->ent));
	p->ntop = src->sconf ? src->sconf->host_cgroups : VMS_INTERF_HOST_CGROUPS;
	if (p->ntop > IF_TOP_MAX)
		p->ntop = IF_TOP_MAX;
	p->named = calloc(p->ntop + 1, sizeof(*p->named));
	p->want = calloc(p->ntop + 1, sizeof(*p->want));
	p->wt = malloc(IF_ACCT_MAX * sizeof(*p->wt));
	if (!p->ent || !p->named || !p->want || !p->wt)
		return -ENOMEM;
	int rc = vms_cpuirq_open(&p->cpus, src->proc_dirfd);
	if (rc < 0)
		return rc;
	struct vms_cgmounts m;
	if (vms_cgmounts_load(&m, src->proc_dirfd, NULL) == 0) {
		if (m.v2.point)
			p->cgroot = strdup(m.v2.point);
		vms_cgmounts_free(&m);
	}
	/* with each CPU's run queue delay (~90 ns a switch, doc/interference.md:
	 * the per-CPU wait of scope 1 whatever the schedstat source does) */
	int r = vms_interf_open(&p->x, err, sizeof(err));
	if (r < 0)
		return r; /* the loop says: source interference unavailable: <errno> */
	r = vms_interf_rq_ncpu(p->x);
	if (r < 0)
		vms_log(VMS_LOG_WARN, "interference: no run queue delay per CPU (rq.N.delay) on this kernel: "
				      "the program loaded without it (%s)", strerror(-r));
	p->nrq = r > 0 ? ((unsigned)r < p->cpus.ncpu ? (unsigned)r : p->cpus.ncpu) : 0;
	return 0;
}

static void forget(struct interference *p, struct if_known *k)
{
	for (unsigned i = 0; i < k->ntid; i++)
		vms_interf_forget_thread(p->x, (uint32_t)k->tid[i]);
	if (k->pid > 0)
		vms_interf_forget_vm(p->x, (uint32_t)k->pid);
	free(k->tid);
	k->tid = NULL;
	k->ntid = 0;
	k->pid = 0;
}

static void if_close(struct vms_source *src)
{
	struct interference *p = src->priv;
	if (!p)
		return;
	for (unsigned i = 0; i < p->nknown; i++)
		free(p->known[i].tid);
	free(p->known);
	free(p->pair);
	free(p->base);
	free(p->pfirst);
	free(p->pn);
	free(p->setk);
	free(p->ent);
	free(p->named);
	free(p->want);
	for (unsigned i = 0; i < p->ncg; i++)
		free(p->cg[i].path);
	free(p->cg);
	free(p->cgroot);
	free(p->wt);
	free(p->wprev);
	free(p->carry);
	free(p->hcarry);
	vms_cpuirq_close(&p->cpus);
	vms_interf_close(p->x);
	memset(p, 0, sizeof(*p));
}

static struct if_known *known_find(struct interference *p, const char *uuid)
{
	for (unsigned i = 0; i < p->nknown; i++)
		if (strcmp(p->known[i].uuid, uuid) == 0)
			return &p->known[i];
	return NULL;
}

/* The VM set into the program: new VMs get the next index, VMs whose
 * process or threads changed are told again, VMs gone are forgotten. */
static int sync_vms(struct interference *p, const struct vms_vmtab *t)
{
	for (unsigned i = 0; i < p->nknown; i++)
		p->known[i].vm = -1;
	for (unsigned i = 0; t && i < t->n; i++) {
		const struct vms_vm *vm = &t->vm[i];
		struct if_known *k = known_find(p, vm->uuid);
		if (!k) {
			struct if_known *n = vms_grow_array(p->known, &p->capknown, p->nknown + 1, sizeof(*n), 16);
			if (!n)
				return -ENOMEM;
			p->known = n;
			k = &p->known[p->nknown++];
			memset(k, 0, sizeof(*k));
			snprintf(k->uuid, sizeof(k->uuid), "%s", vm->uuid);
		}
		k->vm = (int32_t)i;
		k->gone = false;
		uint32_t idx = (uint32_t)(k - p->known);
		bool same = k->pid == vm->pid && k->ntid == vm->nvcpu &&
			    (!k->ntid || memcmp(k->tid, vm->vcpu_tid, k->ntid * sizeof(pid_t)) == 0);
		if (same)
			continue;
		forget(p, k);
		if (vm->pid <= 0)
			continue; /* not a local process: nothing to watch */
		k->tid = calloc(vm->nvcpu ? vm->nvcpu : 1, sizeof(pid_t));
		if (!k->tid)
			return -ENOMEM;
		int r = vms_interf_vm(p->x, (uint32_t)vm->pid, idx);
		for (unsigned c = 0; r == 0 && c < vm->nvcpu; c++)
			if (vm->vcpu_tid[c] > 0)
				r = vms_interf_thread(p->x, (uint32_t)vm->vcpu_tid[c], idx, true);
		if (r < 0)
			return r;
		k->pid = vm->pid;
		k->ntid = vm->nvcpu;
		memcpy(k->tid, vm->vcpu_tid, vm->nvcpu * sizeof(pid_t));
	}
	if (p->ncarry < p->nknown) {
		uint64_t *c = realloc(p->carry, p->nknown * sizeof(*c));
		if (c)
			p->carry = c;
		uint64_t *h = realloc(p->hcarry, p->nknown * sizeof(*h));
		if (h)
			p->hcarry = h;
		if (!c || !h)
			return -ENOMEM;
		memset(c + p->ncarry, 0, (p->nknown - p->ncarry) * sizeof(*c));
		memset(h + p->ncarry, 0, (p->nknown - p->ncarry) * sizeof(*h));
		p->ncarry = p->nknown;
	}
	for (unsigned i = 0; i < p->nknown; i++) {
		struct if_known *k = &p->known[i];
		if (k->vm >= 0 || k->gone)
			continue;
		forget(p, k);
		/* its entries would fill the account over a long run of VMs
		 * coming and going: its index is never given again */
		k->gone = true;
		int r = vms_interf_forget_account(p->x, i, p->carry, p->ncarry);
		k->irq_est = 0;
		p->carry[i] = p->hcarry[i] = 0;
		if (i < p->nwprev)
			memset(p->wprev + (size_t)i * p->cpus.ncpu, 0, p->cpus.ncpu * sizeof(*p->wprev));
		if (r < 0)
			return r;
	}
	return 0;
}

/* The pair (v, kind, id) among pair[first .. first + n), NULL if none */
static const struct if_pair *pair_find(const struct if_pair *pair, uint32_t first, uint32_t n, uint32_t kind,
				       uint64_t id)
{
	for (uint32_t k = 0; k < n; k++)
		if (pair[first + k].kind == kind && pair[first + k].id == id)
			return &pair[first + k];
	return NULL;
}

/* The column of pair (v, kind, id), -1 if it has none: v's pairs are
 * contiguous, after its IF_COLS columns. */
static int32_t pair_col(const struct interference *p, uint32_t v, uint32_t kind, uint64_t id)
{
	const struct if_pair *q = pair_find(p->pair, p->pfirst[v], p->pn[v], kind, id);
	return q ? (int32_t)(p->base[v] + IF_COLS + (uint32_t)(q - &p->pair[p->pfirst[v]])) : -1;
}

static bool in_set(const uint64_t *set, unsigned n, uint64_t id)
{
	for (unsigned i = 0; i < n; i++)
		if (set[i] == id)
			return true;
	return false;
}

static bool is_named(const struct interference *p, uint64_t id)
{
	return in_set(p->named, p->nnamed, id);
}

/* The last declaration's pairs, kept by declare while it makes the new */
struct if_old {
	const struct if_pair *pair;
	const uint32_t *base, *first, *n; /* nk known VMs' */
	uint32_t nk;
};

/* Whether VM v's wait behind host cgroup id went to its host_other
 * before this declaration: the cgroup was not named (in was[nwas]), or
 * it was and v, in the last declaration's set, had no column for it yet
 * (a pair held, if_sample).  A VM new to the set had no columns: its
 * pair with a named cgroup carries all of its account. */
static bool in_other(const uint64_t *was, unsigned nwas, const struct if_old *o, uint32_t v, uint64_t id)
{
	if (!in_set(was, nwas, id))
		return true;
	return v < o->nk && o->base[v] != UINT32_MAX && !pair_find(o->pair, o->first[v], o->n[v], INTERF_HOST, id);
}

/* The named set becomes idle's choice (want), at the account's read of
 * the declaration (ent[n]): for each VM, what it had waited behind a
 * cgroup that joins, or behind a named one it had no column for (held),
 * goes on counting in host_other (the pair's column starts from 0: its
 * offset, set as the pair is declared), and what it had waited behind
 * one that leaves, which host_other's sum now has again, is taken off it
 * (the growth since it joined was in its column). */
static void host_rename(struct interference *p, unsigned n, const struct if_old *o)
{
	for (unsigned e = 0; e < n; e++) {
		const struct vms_interf_ent *x = &p->ent[e];
		if (x->kind != INTERF_HOST || !x->id || x->victim >= p->ncarry)
			continue;
		bool before = in_other(p->named, p->nnamed, o, x->victim, x->id),
		     after = !in_set(p->want, p->nwant, x->id);
		if (before && !after)
			p->hcarry[x->victim] += x->ns;
		else if (!before && after)
			p->hcarry[x->victim] -= x->ns;
	}
	memcpy(p->named, p->want, p->nwant * sizeof(*p->named));
	p->nnamed = p->nwant;
	p->rename = false;
}

static const char *cg_name(const struct interference *p, uint64_t id)
{
	for (unsigned i = 0; i < p->ncg; i++)
		if (p->cg[i].id == id)
			return p->cg[i].path;
	return NULL;
}

static int if_declare(struct vms_source *src, struct vms_schema_builder *b, const struct vms_source_env *env)
{
	struct interference *p = src->priv;
	const struct vms_vmtab *t = env->vms;
	unsigned n;
	int r;

	p->vmgen = vms_vmtab_gen(t);
	r = sync_vms(p, t);
	if (r < 0)
		return r;
	/* the waits per CPU as last read: a row per known VM (indices only
	 * grow: the rows kept are the same VMs') */
	if (p->nwprev < p->nknown) {
		size_t nc = p->cpus.ncpu;
		uint64_t *w = realloc(p->wprev, p->nknown * nc * sizeof(*w));
		if (!w)
			return -ENOMEM;
		memset(w + p->nwprev * nc, 0, (p->nknown - p->nwprev) * nc * sizeof(*w));
		p->wprev = w;
		p->nwprev = p->nknown;
	}
	/* the pairs: those of the account now, of VMs still here */
	r = vms_interf_read(p->x, p->ent, IF_ACCT_MAX, &n);
	if (r < 0 && r != -ENOSPC)
		return r;
	p->nent = n;
	/* the host's cgroups to name: idle's choice (the set before, for the
	 * offsets below) */
	uint64_t was[IF_TOP_MAX];
	unsigned nwas = p->nnamed;
	memcpy(was, p->named, nwas * sizeof(*was));
	/* the last declaration's pairs, for the offsets of the host pairs
	 * whose cgroup stays named */
	struct if_pair *opair = p->pair;
	uint32_t *ofirst = p->pfirst, *on = p->pn, *obase = p->base;
	const struct if_old old = {opair, obase, ofirst, on, obase ? p->npk : 0};
	host_rename(p, n, &old);
	p->declared_ns = vms_clock_mono(env->clock);
	free(p->setk);
	size_t nk = p->nknown ? p->nknown : 1;
	p->pair = malloc((n ? n : 1) * sizeof(*p->pair));
	p->base = malloc(nk * sizeof(*p->base));
	p->pfirst = calloc(nk, sizeof(*p->pfirst));
	p->pn = calloc(nk, sizeof(*p->pn));
	p->setk = calloc(t && t->n ? t->n : 1, sizeof(*p->setk));
	p->npk = p->pfirst && p->pn ? p->nknown : 0;
	if (!p->pair || !p->base || !p->pfirst || !p->pn || !p->setk) {
		free(opair);
		free(ofirst);
		free(on);
		free(obase);
		p->npk = 0;
		return -ENOMEM;
	}
	p->npair = 0;
	uint32_t col = 0;
	for (unsigned i = 0; i < p->nknown; i++)
		p->base[i] = UINT32_MAX;
	/* per VM of the set, in its order: the six, then its pairs */
	for (unsigned i = 0; t && i < t->n; i++) {
		struct if_known *k = known_find(p, t->vm[i].uuid);
		uint32_t v = (uint32_t)(k - p->known);
		const char *name = t->vm[i].name;
		struct vms_coldef d = {.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_NS, .wrap_bits = 64,
				       .key = t->vm[i].uuid};
		p->base[v] = col;
		p->setk[i] = v;
		p->pfirst[v] = p->npair;
		for (unsigned c = 0; c < IF_COLS; c++)
			vms_schema_addc(b, &d, VMS_G_VMINTF, name, NULL, if_cols[c]);
		col += IF_COLS;
		for (unsigned e = 0; e < n; e++) {
			const struct vms_interf_ent *x = &p->ent[e];
			uint64_t off = 0;
			if (x->victim != v)
				continue;
			if (x->kind == INTERF_VM) {
				if (x->id >= p->nknown)
					continue;
				const struct if_known *ck = &p->known[x->id];
				if (ck->vm < 0 || pair_col(p, v, INTERF_VM, x->id) >= 0)
					continue;
				vms_schema_addc(b, &d, VMS_G_VMINTFBY, name, NULL, t->vm[ck->vm].name);
			} else if (x->kind == INTERF_HOST) {
				const char *cn = cg_name(p, x->id);
				if (!is_named(p, x->id) || !cn || pair_col(p, v, INTERF_HOST, x->id) >= 0)
					continue;
				char fit[VMS_NAME_PART_MAX + 1];
				vms_name_fit(fit, VMS_NAME_PART_MAX, cn, strlen(cn));
				vms_schema_addc(b, &d, VMS_G_VMINTFHOST, name, NULL, fit);
				/* its wait so far in host_other (named just now, or
				 * held): from 0; else as it was (a VM new to the
				 * set: all of it) */
				const struct if_pair *o =
					v < old.nk ? pair_find(opair, ofirst[v], on[v], INTERF_HOST, x->id) : NULL;
				off = in_other(was, nwas, &old, v, x->id) ? x->ns : o ? o->off : 0;
			} else {
				continue;
			}
			p->pair[p->npair++] = (struct if_pair){v, x->kind, x->id, off};
			p->pn[v]++;
			col++;
		}
	}
	free(opair);
	free(ofirst);
	free(on);
	free(obase);
	p->rqbase = col;
	struct vms_coldef rd = {.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_NS, .wrap_bits = 64};
	for (unsigned c = 0; c < p->nrq; c++) {
		char e[16];
		snprintf(e, sizeof(e), "%u", c);
		vms_schema_addc(b, &rd, VMS_G_RQ, e, NULL, "delay");
	}
	return b->err;
}

__extension__ typedef unsigned __int128 u128;

/* Each VM's waits on each CPU since the last read times the CPU's share
 * of interrupt time in its busy time this tick.  Read again in the same
 * tick (a new schema's sample), every delta is 0. */
static void irq_estimate(struct interference *p, struct vms_tick_ctx *t)
{
	bool cpus = vms_cpuirq_read(&p->cpus, t->idx, &t->parse_errors);
	unsigned n;
	if (vms_interf_read_waits(p->x, p->wt, IF_ACCT_MAX, &n) < 0 && !n)
		return;
	for (unsigned i = 0; i < n; i++) {
		const struct vms_interf_wait *w = &p->wt[i];
		if (w->vm >= p->nwprev || w->cpu >= p->cpus.ncpu)
			continue;
		uint64_t *prev = &p->wprev[(size_t)w->vm * p->cpus.ncpu + w->cpu];
		uint64_t d = w->ns >= *prev ? w->ns - *prev : w->ns; /* dropped and made again: from 0 */
		*prev = w->ns;
		uint64_t busy = p->cpus.dbusy[w->cpu], irq = p->cpus.dirq[w->cpu];
		if (cpus && d && busy)
			p->known[w->vm].irq_est += (uint64_t)((u128)d * (irq < busy ? irq : busy) / busy);
	}
}

/* Whether a new pair or a new named set may have its new schema
 * generation now: VMS_INTERF_DECLARE_NS after the last declaration, so
 * that pairs appearing tick after tick (dozens of VMs) make one
 * generation per period, not one per tick.  Until then a pair's wait is
 * in its VM's parts only (a host pair's in host_other), and the account
 * being cumulative, nothing of it is lost. */
static bool declare_due(const struct interference *p, const struct vms_tick_ctx *t)
{
	return t->t_mono_ns >= p->declared_ns && t->t_mono_ns - p->declared_ns >= VMS_INTERF_DECLARE_NS;
}

static int if_sample(struct vms_source *src, uint64_t *slots, struct vms_tick_ctx *t)
{
	struct interference *p = src->priv;
	unsigned n;

	if (vms_vmtab_gen(t->vms) != p->vmgen || (p->rename && declare_due(p, t)))
		return VMS_RESCHEMA;
	int r = vms_interf_read(p->x, p->ent, IF_ACCT_MAX, &n);
	if (r < 0 && r != -ENOSPC)
		return r;
	p->nent = n;
	irq_estimate(p, t);
	if (p->nrq && vms_interf_read_rq(p->x, slots + p->rqbase, p->nrq) != (int)p->nrq)
		vms_slots_none(slots + p->rqbase, p->nrq);
	/* the declared columns start at 0 and are filled from the account;
	 * a VM without a local process (remote, the test driver) is not
	 * measured: its columns are missing */
	for (unsigned i = 0; t->vms && i < t->vms->n; i++) {
		uint32_t v = p->setk[i];
		const struct if_known *k = &p->known[v];
		uint32_t ncol = IF_COLS + p->pn[v];
		if (k->pid > 0)
			memset(slots + p->base[v], 0, ncol * sizeof(*slots));
		else
			vms_slots_none(slots + p->base[v], ncol);
		if (k->pid > 0) {
			slots[p->base[v] + C_IRQ] = k->irq_est;
			slots[p->base[v] + C_WAIT] = slots[p->base[v] + C_VMS] = p->carry[v];
			slots[p->base[v] + C_HOST_OTHER] = p->hcarry[v];
		}
	}
	for (unsigned e = 0; e < n; e++) {
		const struct vms_interf_ent *x = &p->ent[e];
		if (x->victim >= p->nknown || p->base[x->victim] == UINT32_MAX || !p->known[x->victim].pid)
			continue; /* a VM that went away */
		uint64_t *s = slots + p->base[x->victim];
		bool pair = false;
		unsigned c;
		switch (x->kind) {
		case INTERF_VM:
			c = C_VMS;
			pair = x->id < p->nknown && p->known[x->id].vm >= 0;
			break;
		case INTERF_OWN:
			c = C_OWN;
			break;
		case INTERF_HOST:
			c = C_HOST;
			pair = x->id && is_named(p, x->id);
			break;
		case INTERF_KERNEL:
			c = C_KERNEL;
			break;
		default:
			c = C_UNKNOWN;
			break;
		}
		s[C_WAIT] += x->ns;
		s[c] += x->ns;
		uint32_t f = p->pfirst[x->victim];
		const struct if_pair *q = pair ? pair_find(p->pair, f, p->pn[x->victim], x->kind, x->id) : NULL;
		if (q) /* (a host pair: less what it had when its column was declared) */
			s[IF_COLS + (uint32_t)(q - &p->pair[f])] += x->ns - q->off;
		else if (pair && declare_due(p, t))
			return VMS_RESCHEMA; /* a new pair */
		else if (c == C_HOST)
			s[C_HOST_OTHER] += x->ns; /* a cgroup not named, or a pair held */
	}
	return r == -ENOSPC ? -ENOSPC : 0;
}

/* ---- the host's cgroups, named outside the tick ------------------------------ */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

struct if_tot {
	uint64_t id, ns;
};

static int cmp_tot_id(const void *a, const void *b)
{
	return cmp_u64(&((const struct if_tot *)a)->id, &((const struct if_tot *)b)->id);
}

/* by ns, the largest first; ties by id */
static int cmp_tot_ns(const void *a, const void *b)
{
	const struct if_tot *x = a, *y = b;
	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return cmp_tot_id(a, b);
}

static int cg_add(struct interference *p, uint64_t id, const char *path)
{
	if (p->ncg == p->capcg) {
		unsigned cap = p->capcg ? 2 * p->capcg : 16;
		struct if_cg *n = realloc(p->cg, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		p->cg = n;
		p->capcg = cap;
	}
	char *s = strdup(path);
	if (!s)
		return -ENOMEM;
	p->cg[p->ncg++] = (struct if_cg){id, s};
	return 0;
}

/* Name the ids of want[] the cache does not know: a walk of the cgroup2
 * mount, each directory's inode being its group's id (kernfs).  An id
 * the walk does not find (its group is gone) is named cgroup-ID. */
static int cg_resolve(struct interference *p, const uint64_t *want, unsigned n)
{
	uint64_t miss[IF_TOP_MAX];
	unsigned nmiss = 0;
	for (unsigned i = 0; i < n; i++)
		if (!cg_name(p, want[i]))
			miss[nmiss++] = want[i];
	if (!nmiss)
		return 0;
	unsigned left = nmiss;
	if (p->cgroot) {
		char *const roots[] = {p->cgroot, NULL};
		FTS *f = fts_open(roots, FTS_PHYSICAL | FTS_NOCHDIR | FTS_XDEV, NULL);
		FTSENT *e;
		size_t rl = strlen(p->cgroot);
		while (f && left && (e = fts_read(f))) {
			if (e->fts_info != FTS_D)
				continue;
			for (unsigned i = 0; i < nmiss; i++) {
				if (!miss[i] || miss[i] != (uint64_t)e->fts_statp->st_ino)
					continue;
				const char *rel = e->fts_path + rl;
				while (*rel == '/')
					rel++;
				int r = cg_add(p, miss[i], *rel ? rel : "/");
				if (r < 0) {
					fts_close(f);
					return r;
				}
				miss[i] = 0;
				left--;
			}
		}
		if (f)
			fts_close(f);
	}
	for (unsigned i = 0; i < nmiss; i++) {
		if (!miss[i])
			continue;
		char name[40];
		snprintf(name, sizeof(name), "cgroup-%llu", (unsigned long long)miss[i]);
		int r = cg_add(p, miss[i], name);
		if (r < 0)
			return r;
	}
	return 0;
}

/* After the tick: rank the host's cgroups by the wait behind them (all
 * victims, since the start), from the tick's read of the account; the
 * top ntop are to be named; a change asks for a new schema. */
static void if_idle(struct vms_source *src, uint64_t until_ns, const struct vms_source_env *env)
{
	(void)env;
	struct interference *p = src->priv;
	/* until_ns, the next tick's deadline, is the clock here */
	if (!p->ntop || p->rename || until_ns < p->next_rank)
		return;
	p->next_rank = until_ns < UINT64_MAX - IF_RANK_NS ? until_ns + IF_RANK_NS : 0;
	struct if_tot *tot = malloc((p->nent ? p->nent : 1) * sizeof(*tot));
	if (!tot)
		return;
	unsigned nt = 0;
	for (unsigned e = 0; e < p->nent; e++)
		if (p->ent[e].kind == INTERF_HOST && p->ent[e].id)
			tot[nt++] = (struct if_tot){p->ent[e].id, p->ent[e].ns};
	qsort(tot, nt, sizeof(*tot), cmp_tot_id);
	unsigned m = 0;
	for (unsigned i = 0; i < nt; i++) {
		if (m && tot[m - 1].id == tot[i].id)
			tot[m - 1].ns += tot[i].ns;
		else
			tot[m++] = tot[i];
	}
	qsort(tot, m, sizeof(*tot), cmp_tot_ns);
	unsigned nw = m < p->ntop ? m : p->ntop;
	uint64_t w[IF_TOP_MAX];
	for (unsigned i = 0; i < nw; i++)
		w[i] = tot[i].id;
	free(tot);
	qsort(w, nw, sizeof(*w), cmp_u64);
	if (nw == p->nnamed && memcmp(w, p->named, nw * sizeof(*w)) == 0)
		return;
	if (cg_resolve(p, w, nw) < 0)
		return; /* out of memory: tried again at the next rank */
	memcpy(p->want, w, nw * sizeof(*w));
	p->nwant = nw;
	p->rename = true;
}

VMS_SOURCE_OPS(interference, if, .idle = if_idle);
