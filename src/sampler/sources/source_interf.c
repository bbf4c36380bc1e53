/* SPDX-License-Identifier: MIT */
/* source_interf.c - interference attribution per VM (source
 * "interference", doc/interference.md): the account of the BPF program
 * (bpf_interf.h) as counters.
 *
 * Per VM (vm.NAME.intf.*, key its UUID), in ns since the VM appeared in
 * the run (one that leaves has its account dropped from the program's
 * map, and starts from 0 if it comes back), counters:
 *   wait     its vCPUs' waits (runnable, not running) as the program
 *            measured them: the sum of the parts below
 *   vms      behind other VMs' threads
 *   own      behind its own other threads (sibling vCPUs, emulator, I/O)
 *   host     behind other user tasks
 *   kernel   behind kernel threads and idle
 *   unknown  the parts the program could not place (a wait longer than
 *            its ring of segments)
 * and the victim x culprit matrix as sparse columns: vm.NAME.intf.by.OTHER
 * for each other VM it has waited behind so far (declared when the pair
 * first appears: a new schema generation, as when a disk appears; a host
 * whose VMs are pinned apart has few pairs).  The top culprit and its
 * share over an interval are the readers' to compute (counters in, rates
 * out).
 *
 * VMs get an index for the program that is never reused in the run (by
 * UUID), so that the account's old entries never name another VM.  The
 * tick reads the account with no allocation (an array sized at open). */
#include <stdlib.h>
#include <string.h>

#include "bpf_interf.h"
#include "source.h"
#include "vmtab.h"

#define IF_COLS 6 /* wait vms own host kernel unknown */
#define IF_ACCT_MAX 16384 /* the acct map's entries (interf.bpf.c) */

static const char *const if_cols[IF_COLS] = {"wait", "vms", "own", "host", "kernel", "unknown"};

/* a VM this run has seen: its index for the program is its position */
struct if_known {
	char uuid[VMS_UUID_LEN + 1];
	pid_t pid;            /* registered QEMU process, 0: none */
	pid_t *tid;           /* registered vCPU threads */
	unsigned ntid;
	int32_t vm;           /* its position in the current VM set, -1: gone */
	bool gone;            /* it left: its account was dropped (it starts again from 0 if it comes back) */
};

/* a pair (victim, culprit) with a column */
struct if_pair {
	uint32_t victim, culprit;
};

struct interference {
	struct vms_interf *x;
	uint64_t vmgen;
	struct if_known *known;
	unsigned nknown, capknown;
	struct if_pair *pair;     /* declared pairs, column order */
	unsigned npair;
	uint32_t *base;           /* per known VM: its first column, UINT32_MAX: none */
	uint32_t *pfirst, *pn;    /* per known VM: its pairs, pair[pfirst .. pfirst + pn) */
	uint32_t *setk;           /* per VM of the set: its known index */
	struct vms_interf_ent *ent; /* the tick's read of the account */
};

static int if_open(struct vms_source *src, const struct vms_source_env *env)
{
	(void)env;
	struct interference *p = src->priv;
	char err[256];
	p->ent = malloc(IF_ACCT_MAX * sizeof(*p->ent));
	if (!p->ent)
		return -ENOMEM;
	int r = vms_interf_open(&p->x, err, sizeof(err));
	if (r < 0)
		return r; /* the loop says: source interference unavailable: <errno> */
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
			if (p->nknown == p->capknown) {
				unsigned cap = p->capknown ? 2 * p->capknown : 16;
				struct if_known *n = realloc(p->known, cap * sizeof(*n));
				if (!n)
					return -ENOMEM;
				p->known = n;
				p->capknown = cap;
			}
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
	for (unsigned i = 0; i < p->nknown; i++) {
		struct if_known *k = &p->known[i];
		if (k->vm >= 0 || k->gone)
			continue;
		forget(p, k);
		/* its entries would fill the account over a long run of VMs
		 * coming and going: its index is never given again */
		k->gone = true;
		int r = vms_interf_forget_account(p->x, i);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The column of pair (v, c), -1 if it has none: v's pairs are
 * contiguous, after its six columns. */
static int32_t pair_col(const struct interference *p, uint32_t v, uint32_t c)
{
	for (uint32_t k = 0; k < p->pn[v]; k++)
		if (p->pair[p->pfirst[v] + k].culprit == c)
			return (int32_t)(p->base[v] + IF_COLS + k);
	return -1;
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
	/* the pairs: those of the account now, of VMs still here */
	r = vms_interf_read(p->x, p->ent, IF_ACCT_MAX, &n);
	if (r < 0 && r != -ENOSPC)
		return r;
	free(p->pair);
	free(p->base);
	free(p->pfirst);
	free(p->pn);
	free(p->setk);
	size_t nk = p->nknown ? p->nknown : 1;
	p->pair = malloc((n ? n : 1) * sizeof(*p->pair));
	p->base = malloc(nk * sizeof(*p->base));
	p->pfirst = calloc(nk, sizeof(*p->pfirst));
	p->pn = calloc(nk, sizeof(*p->pn));
	p->setk = calloc(t && t->n ? t->n : 1, sizeof(*p->setk));
	if (!p->pair || !p->base || !p->pfirst || !p->pn || !p->setk)
		return -ENOMEM;
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
			vms_schema_addf(b, &d, "vm.%s.intf.%s", name, if_cols[c]);
		col += IF_COLS;
		for (unsigned e = 0; e < n; e++) {
			const struct vms_interf_ent *x = &p->ent[e];
			if (x->victim != v || x->kind != INTERF_VM || x->id >= p->nknown)
				continue;
			const struct if_known *ck = &p->known[x->id];
			if (ck->vm < 0 || pair_col(p, v, (uint32_t)x->id) >= 0)
				continue;
			vms_schema_addf(b, &d, "vm.%s.intf.by.%s", name, t->vm[ck->vm].name);
			p->pair[p->npair++] = (struct if_pair){v, (uint32_t)x->id};
			p->pn[v]++;
			col++;
		}
	}
	return b->err;
}

static int if_sample(struct vms_source *src, uint64_t *slots, struct vms_tick_ctx *t)
{
	struct interference *p = src->priv;
	unsigned n;

	if (vms_vmtab_gen(t->vms) != p->vmgen)
		return VMS_RESCHEMA;
	int r = vms_interf_read(p->x, p->ent, IF_ACCT_MAX, &n);
	if (r < 0 && r != -ENOSPC)
		return r;
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
	}
	for (unsigned e = 0; e < n; e++) {
		const struct vms_interf_ent *x = &p->ent[e];
		if (x->victim >= p->nknown || p->base[x->victim] == UINT32_MAX || !p->known[x->victim].pid)
			continue; /* a VM that went away */
		uint64_t *s = slots + p->base[x->victim];
		unsigned c;
		switch (x->kind) {
		case INTERF_VM:
			c = 1;
			break;
		case INTERF_OWN:
			c = 2;
			break;
		case INTERF_HOST:
			c = 3;
			break;
		case INTERF_KERNEL:
			c = 4;
			break;
		default:
			c = 5;
			break;
		}
		s[0] += x->ns;
		s[c] += x->ns;
		if (x->kind == INTERF_VM && x->id < p->nknown && p->known[x->id].vm >= 0) {
			int32_t pc = pair_col(p, x->victim, (uint32_t)x->id);
			if (pc < 0)
				return VMS_RESCHEMA; /* a new pair */
			slots[pc] += x->ns;
		}
	}
	return r == -ENOSPC ? -ENOSPC : 0;
}

VMS_SOURCE_OPS(interference, if);
