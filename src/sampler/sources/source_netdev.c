/* SPDX-License-Identifier: MIT */
/* source_netdev.c - /proc/net/dev: traffic counters per interface.
 *
 * The columns are those of the file's header (all 16 on every kernel since
 * 2.6), for the interfaces the include/exclude globs select.  The two
 * header lines are remembered verbatim: each tick they are compared with
 * one memcmp instead of being parsed again.  As in diskstats, the tick
 * expects the interfaces in the order seen at declare time and passes over
 * the lines of interfaces that are not sampled without reading their
 * numbers.
 *
 * The file is shared with the vm source (one read per tick for both), and
 * the tap devices of the VMs of the VM set (env->vms) are left out unless
 * netdev.vm_taps is set: they are the vm source's per-VM network columns.
 * The interface set is then re-declared whenever the VM table changes.
 *
 * Backends (sources.netdev.backend): the file, or rtnetlink (netdev_nl.h),
 * which gives the same counters without the kernel printing them: one
 * RTM_GETSTATS dump per tick on a socket kept open.  Its replies are keyed
 * by ifindex only, so declare maps ifindex to entity (an RTM_GETLINK dump)
 * and takes the entities in the order of /proc/net/dev, with its header's
 * fields: the columns are those of the file backend.  A stats reply of an
 * unknown ifindex, or a link notification of a new name, is VMS_RESCHEMA,
 * an interface missing from the dump too (vms_enttab_end), as with the
 * file.  "auto" uses netlink when the proc root is a procfs (not a test
 * fixture) and the socket answers a first dump; else the file. */
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "name.h"
#include "entity.h"
#include "log.h"
#include "netdev_nl.h"
#include "parse.h"
#include "procfile.h"
#include "source.h"
#include "vmtab.h"

struct netdev {
	struct vms_procfile *f; /* shared */
	uint64_t vmgen;     /* VM table generation at declare time */
	bool vm_taps;
	struct vms_netdev_hdr hdr;
	char *hdr_text;     /* the two header lines as read at declare time */
	size_t hdr_len;
	uint8_t field[VMS_NET_FIELDS]; /* the fields the header has, in column order */
	unsigned nfield;
	/* the lines in file order; prefix: up to and including the name's ':'
	 * (netlink: the interfaces, prefix the name) */
	struct vms_enttab tab;
	/* the netlink backend */
	bool nl_on;
	bool nl_forced;     /* backend: netlink (no falling back to the file) */
	struct vms_nl nl;
	struct nd_idx *idx; /* tab's entities by ifindex, ascending */
	uint32_t nidx;
	bool nl_changed;   /* this dump: an interface came, went or was renamed */
	uint64_t *slots;   /* this tick's */
};

struct nd_idx {
	int ifindex;
	uint32_t ent;
};

static void nd_forget(struct netdev *p)
{
	vms_enttab_free(&p->tab);
	free(p->hdr_text);
	p->hdr_text = NULL;
	p->hdr_len = 0;
	p->nfield = 0;
	free(p->idx);
	p->idx = NULL;
	p->nidx = 0;
}

bool vms_netdev_netlink(const struct vms_source *src)
{
	const struct netdev *p = src->priv;
	return p && p->nl_on;
}

static int nd_open(struct vms_source *src, const struct vms_source_env *env)
{
	(void)env;
	struct netdev *p = src->priv;
	int backend = src->sconf ? src->sconf->backend : VMS_NETDEV_AUTO;
	p->vm_taps = src->sconf && src->sconf->vm_taps;
	p->nl.fd = -1;
	int r = vms_procfile_shared_open(&p->f, src->proc_dirfd, "net/dev", 4096);
	if (backend == VMS_NETDEV_PROCFS || (backend == VMS_NETDEV_AUTO && !vms_proc_is_procfs(src->proc_dirfd)))
		return r;
	if (r < 0)
		p->f = NULL; /* netlink alone: the interfaces in ifindex order */
	int e = vms_nl_open(&p->nl);
	if (e == 0) {
		p->nl_on = true;
		p->nl_forced = backend == VMS_NETDEV_NETLINK;
		return 0;
	}
	if (backend == VMS_NETDEV_NETLINK) {
		vms_err("sources.netdev.backend: netlink: %s", strerror(-e));
		src->fatal = true;
		return e;
	}
	return r; /* auto: the file */
}

/* A host-side tap of a VM of the VM set t (may be NULL: none). */
static bool is_vm_tap(const struct vms_vmtab *t, const char *name)
{
	for (unsigned i = 0; t && i < t->n; i++)
		for (unsigned k = 0; k < t->vm[i].ntap; k++)
			if (strcmp(t->vm[i].tap[k], name) == 0)
				return true;
	return false;
}

/* The file's header at c: its fields in column order (p->field). */
static int nd_header(struct netdev *p, struct vms_cur *c)
{
	uint32_t have = 0;
	int r = vms_netdev_header(c, &p->hdr);
	if (r < 0)
		return r;
	for (unsigned i = 0; i < p->hdr.ncols; i++)
		if (p->hdr.map[i] >= 0)
			have |= 1u << p->hdr.map[i];
	p->nfield = 0;
	for (unsigned f = 0; f < VMS_NET_FIELDS; f++)
		if (have & (1u << f))
			p->field[p->nfield++] = (uint8_t)f;
	return 0;
}

/* The file backend's table: the file's lines, its header remembered. */
static int nd_file_tab(struct netdev *p)
{
	struct vms_net_line nl;
	struct vms_cur c;
	int r;

	r = vms_procfile_shared_read(p->f, VMS_PROCFILE_FORCE);
	if (r < 0)
		return r;
	vms_cur_init(&c, p->f->buf, p->f->len);
	r = nd_header(p, &c);
	if (r < 0)
		return r;
	p->hdr_len = (size_t)(c.p - p->f->buf);
	p->hdr_text = malloc(p->hdr_len ? p->hdr_len : 1);
	/* per line: its prefix and a copy of the name, each with a NUL */
	r = vms_enttab_reset_lines(&p->tab, c.p, vms_cur_left(&c), 2);
	if (!p->hdr_text || r < 0)
		return -ENOMEM;
	memcpy(p->hdr_text, p->f->buf, p->hdr_len);

	for (;;) {
		const char *ls = c.p;
		r = vms_netdev_next(&c, &p->hdr, &nl);
		if (r == 0)
			break;
		if (r < 0)
			continue; /* a damaged line declares nothing */
		/* the prefix with the ':' */
		vms_enttab_add(&p->tab, ls, (size_t)(nl.name + nl.name_len + 1 - ls), nl.name,
			       nl.name_len);
	}
	return 0;
}

/* ---- the netlink backend's discovery --------------------------------------- */

struct nd_link {
	int ifindex;
	uint32_t len;
	bool used;
	char name[IFNAMSIZ];
};

struct nd_links {
	struct nd_link *v;
	uint32_t n, cap;
	bool notified; /* a link changed during the dump */
	bool nomem;
};

static void nd_collect(void *arg, bool notify, int ifindex, const char *name, size_t len)
{
	struct nd_links *l = arg;
	if (notify) {
		l->notified = true;
		return;
	}
	if (!name || len == 0 || len >= IFNAMSIZ)
		return;
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? 2 * l->cap : 64;
		struct nd_link *v = realloc(l->v, cap * sizeof(*v));
		if (!v) {
			l->nomem = true;
			return;
		}
		l->v = v;
		l->cap = cap;
	}
	struct nd_link *k = &l->v[l->n++];
	k->ifindex = ifindex;
	k->len = (uint32_t)len;
	k->used = false;
	memcpy(k->name, name, len);
	k->name[len] = '\0';
}

static int idx_cmp(const void *a, const void *b)
{
	const struct nd_idx *x = a, *y = b;
	return (x->ifindex > y->ifindex) - (x->ifindex < y->ifindex);
}

static void nd_tab_link(struct netdev *p, struct nd_link *k)
{
	struct vms_ent *e = vms_enttab_add(&p->tab, k->name, k->len, k->name, k->len);
	if (!e)
		return;
	k->used = true;
	p->idx[p->nidx].ifindex = k->ifindex;
	p->idx[p->nidx].ent = (uint32_t)(e - p->tab.ent);
	p->nidx++;
}

/* The netlink backend's table: the interfaces RTM_GETLINK lists, in the
 * order of their lines in the file (those it lacks after them), the
 * fields of its header (all 16 without the file). */
static int nd_nl_tab(struct netdev *p)
{
	struct nd_links l = {.v = NULL};
	const struct vms_nl_ops ops = {.link = nd_collect};
	struct vms_cur c;
	size_t strcap = 1;
	int r = 0;

	if (p->nl.fd < 0)
		r = vms_nl_open(&p->nl); /* the tick closed it after an error */
	for (unsigned attempt = 0; r == 0 && attempt < 3; attempt++) {
		l.n = 0;
		l.notified = l.nomem = false;
		r = vms_nl_dump(&p->nl, RTM_GETLINK, &ops, &l);
		if (r == 0 && l.nomem)
			r = -ENOMEM;
		if (r == 0 && !l.notified)
			break; /* else a link changed meanwhile: list them again */
	}
	if (r < 0) {
		vms_nl_close(&p->nl);
		goto out;
	}

	bool file = p->f && vms_procfile_shared_read(p->f, VMS_PROCFILE_FORCE) == 0;
	if (file) {
		vms_cur_init(&c, p->f->buf, p->f->len);
		file = nd_header(p, &c) == 0;
	}
	if (!file) {
		p->nfield = 0;
		for (unsigned f = 0; f < VMS_NET_FIELDS; f++)
			p->field[p->nfield++] = (uint8_t)f;
	}
	for (uint32_t i = 0; i < l.n; i++)
		strcap += l.v[i].len + 1;
	p->idx = malloc((l.n ? l.n : 1) * sizeof(*p->idx));
	r = vms_enttab_reset(&p->tab, l.n, strcap);
	if (!p->idx || r < 0) {
		r = -ENOMEM;
		goto out;
	}
	struct vms_net_line nl;
	while (file && (r = vms_netdev_next(&c, &p->hdr, &nl)) != 0) {
		if (r < 0)
			continue;
		for (uint32_t i = 0; i < l.n; i++)
			if (!l.v[i].used && l.v[i].len == nl.name_len &&
			    memcmp(l.v[i].name, nl.name, nl.name_len) == 0) {
				nd_tab_link(p, &l.v[i]);
				break;
			}
	}
	for (uint32_t i = 0; i < l.n; i++)
		if (!l.v[i].used)
			nd_tab_link(p, &l.v[i]);
	qsort(p->idx, p->nidx, sizeof(*p->idx), idx_cmp);
	r = 0;
out:
	free(l.v);
	return r;
}

static int nd_declare(struct vms_source *src, struct vms_schema_builder *b, const struct vms_source_env *env)
{
	const struct vms_coldef bytes = {.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_BYTES,
					.wrap_bits = 64};
	const struct vms_coldef count = {.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_COUNT,
					.wrap_bits = 64};
	struct netdev *p = src->priv;
	const struct vms_source_conf *sc = src->sconf;
	uint32_t slot = 0;
	int r;

	nd_forget(p);
	p->vmgen = vms_vmtab_gen(env->vms);
	r = p->nl_on ? nd_nl_tab(p) : nd_file_tab(p);
	if (r < 0 && p->nl_on && !p->nl_forced && p->f) {
		/* auto: netlink stopped working (a socket that cannot be opened
		 * again); the file from now on */
		p->nl_on = false;
		nd_forget(p);
		r = nd_file_tab(p);
	}
	if (r < 0) {
		nd_forget(p);
		return r;
	}

	p->tab.nwant = p->tab.n; /* every line, sampled or not */
	for (uint32_t i = 0; i < p->tab.n; i++) {
		struct vms_ent *e = &p->tab.ent[i];
		if (vms_enttab_dup(&p->tab, e))
			continue; /* a second line of the same name: not sampled */
		if (sc && !vms_globs_select(&sc->include, &sc->exclude, e->name))
			continue;
		if (!p->vm_taps && is_vm_tap(env->vms, e->name))
			continue;
		char part[VMS_NAME_PART_MAX + 1];
		vms_name_fit(part, VMS_NAME_PART_MAX, e->name, e->name_len);
		e->slot = (int32_t)slot;
		e->ncols = p->nfield;
		for (unsigned k = 0; k < p->nfield; k++) {
			unsigned f = p->field[k];
			vms_schema_addc(b, f == 0 || f == 8 ? &bytes : &count, VMS_G_NET, part, NULL,
					vms_net_field_names[f]);
		}
		slot += p->nfield;
	}
	return b->err;
}

/* The line at the cursor is the expected interface's: same prefix, and no
 * other ':' after it (else the name would be longer: "eth0:1:"). */
static bool nd_prefix_match(const struct vms_cur *c, const struct vms_ent *e)
{
	if (vms_cur_left(c) < e->prefix_len || memcmp(c->p, e->prefix, e->prefix_len) != 0)
		return false;
	const char *rest = c->p + e->prefix_len;
	const char *nl = memchr(rest, '\n', (size_t)(c->end - rest));
	return !memchr(rest, ':', (size_t)((nl ? nl : c->end) - rest));
}

/* A line under the header (vms_enttab_next's parser). */
struct nd_line {
	const struct vms_netdev_hdr *hdr;
	struct vms_net_line *nl;
};

static int nd_parse(struct vms_cur *c, void *line, const char **name, size_t *len)
{
	struct nd_line *x = line;
	int r = vms_netdev_next(c, x->hdr, x->nl);
	*name = x->nl->name;
	*len = x->nl->name_len;
	return r;
}

/* ---- the netlink backend's tick --------------------------------------------- */

static struct vms_ent *nd_by_index(struct netdev *p, int ifindex)
{
	uint32_t lo = 0, hi = p->nidx;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (p->idx[mid].ifindex == ifindex)
			return &p->tab.ent[p->idx[mid].ent];
		if (p->idx[mid].ifindex < ifindex)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void nd_nl_stats(void *arg, int ifindex, const uint64_t v[VMS_NET_FIELDS])
{
	struct netdev *p = arg;
	struct vms_ent *e = nd_by_index(p, ifindex);
	if (!e) {
		p->nl_changed = true; /* a new interface */
		return;
	}
	if (vms_ent_seen(&p->tab, e))
		return;
	vms_enttab_mark(&p->tab, e);
	if (e->slot < 0)
		return;
	uint64_t *s = p->slots + e->slot;
	for (unsigned k = 0; k < p->nfield; k++)
		s[k] = v[p->field[k]];
}

static void nd_nl_link(void *arg, bool notify, int ifindex, const char *name, size_t len)
{
	struct netdev *p = arg;
	(void)notify;
	const struct vms_ent *e = nd_by_index(p, ifindex);
	if (!e || !name || !vms_ent_name_is(e, name, len))
		p->nl_changed = true; /* came, went or renamed */
}

static int nd_nl_sample(struct netdev *p, uint64_t *slots)
{
	static const struct vms_nl_ops ops = {.stats = nd_nl_stats, .link = nd_nl_link};
	vms_enttab_begin(&p->tab);
	p->slots = slots;
	p->nl_changed = false;
	int r = vms_nl_dump(&p->nl, RTM_GETSTATS, &ops, p);
	if (r < 0) {
		vms_nl_drop(&p->nl); /* declare opens another */
		return VMS_RESCHEMA;
	}
	if (p->nl_changed)
		return VMS_RESCHEMA;
	return vms_enttab_end(&p->tab, slots); /* VMS_RESCHEMA: an interface went away */
}

static int nd_sample(struct vms_source *src, uint64_t *slots, struct vms_tick_ctx *t)
{
	struct netdev *p = src->priv;
	struct vms_net_line nl;
	struct vms_cur c;
	struct vms_enttab *tab = &p->tab;
	uint32_t pos = 0;
	int r;

	if (!p->vm_taps && VMS_UNLIKELY(vms_vmtab_gen(t->vms) != p->vmgen))
		return VMS_RESCHEMA; /* VMs (and their taps) came or went */
	if (p->nl_on)
		return nd_nl_sample(p, slots);
	r = vms_procfile_shared_read(p->f, t->idx);
	if (r < 0)
		return r;
	vms_cur_init(&c, p->f->buf, p->f->len);
	if (!vms_cur_startswith(&c, p->hdr_text, p->hdr_len))
		return VMS_RESCHEMA; /* another header: map the columns again */
	c.p += p->hdr_len;
	vms_enttab_begin(tab);
	struct nd_line x = {&p->hdr, &nl};
	struct vms_ent *e;
	enum vms_ent_step st;
	while ((st = vms_enttab_next(tab, &pos, &c, t, nd_prefix_match, nd_parse, &x, &e)) != VMS_ENT_END) {
		if (st == VMS_ENT_NEW)
			return VMS_RESCHEMA; /* a new interface */
		if (st == VMS_ENT_SKIPPED)
			continue;
		vms_enttab_mark(tab, e);
		if (e->slot < 0)
			continue;
		uint64_t *s = slots + e->slot;
		for (unsigned k = 0; k < p->nfield; k++)
			s[k] = nl.v[p->field[k]];
	}
	return vms_enttab_end(tab, slots); /* VMS_RESCHEMA: an interface went away */
}

static void nd_close(struct vms_source *src)
{
	struct netdev *p = src->priv;
	vms_procfile_shared_close(p->f);
	p->f = NULL;
	vms_nl_close(&p->nl);
	nd_forget(p);
}

VMS_SOURCE_OPS(netdev, nd);
