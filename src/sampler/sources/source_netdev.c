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
 * the tap devices of the VMs of the VM set (the loop's) are left out unless
 * netdev.vm_taps is set: they are the vm source's per-VM network columns.
 * The interface set is then re-declared whenever the VM table changes. */
#include <stdlib.h>
#include <string.h>

#include "entity.h"
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
	/* the lines in file order; prefix: up to and including the name's ':' */
	struct vms_enttab tab;
};

static void nd_forget(struct netdev *p)
{
	vms_enttab_free(&p->tab);
	free(p->hdr_text);
	p->hdr_text = NULL;
	p->hdr_len = 0;
	p->nfield = 0;
}

static int nd_open(struct vms_source *src)
{
	struct netdev *p = src->priv;
	p->vm_taps = src->sconf && src->sconf->vm_taps;
	return vms_procfile_shared_open(&p->f, src->proc_dirfd, "net/dev", 4096);
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

static int nd_declare(struct vms_source *src, struct vms_schema_builder *b)
{
	const struct vms_coldef bytes = {.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_BYTES,
					.wrap_bits = 64};
	const struct vms_coldef count = {.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_COUNT,
					.wrap_bits = 64};
	struct netdev *p = src->priv;
	const struct vms_source_conf *sc = src->sconf;
	struct vms_net_line nl;
	struct vms_cur c;
	uint32_t slot = 0, have = 0;
	int r;

	nd_forget(p);
	p->vmgen = vms_vmtab_gen(src->vms);
	r = vms_procfile_shared_read(p->f, VMS_PROCFILE_FORCE);
	if (r < 0)
		return r;
	vms_cur_init(&c, p->f->buf, p->f->len);
	r = vms_netdev_header(&c, &p->hdr);
	if (r < 0)
		return r;
	p->hdr_len = (size_t)(c.p - p->f->buf);
	for (unsigned i = 0; i < p->hdr.ncols; i++)
		if (p->hdr.map[i] >= 0)
			have |= 1u << p->hdr.map[i];
	for (unsigned f = 0; f < VMS_NET_FIELDS; f++)
		if (have & (1u << f))
			p->field[p->nfield++] = (uint8_t)f;

	p->hdr_text = malloc(p->hdr_len ? p->hdr_len : 1);
	/* per line: its prefix and a copy of the name, each with a NUL */
	r = vms_enttab_reset_lines(&p->tab, c.p, vms_cur_left(&c), 2);
	if (!p->hdr_text || r < 0) {
		nd_forget(p);
		return -ENOMEM;
	}
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

	p->tab.nwant = p->tab.n; /* every line, sampled or not */
	for (uint32_t i = 0; i < p->tab.n; i++) {
		struct vms_ent *e = &p->tab.ent[i];
		if (vms_enttab_dup(&p->tab, e))
			continue; /* a second line of the same name: not sampled */
		if (sc && !vms_globs_select(&sc->include, &sc->exclude, e->name))
			continue;
		if (!p->vm_taps && is_vm_tap(src->vms, e->name))
			continue;
		e->slot = (int32_t)slot;
		e->ncols = p->nfield;
		for (unsigned k = 0; k < p->nfield; k++) {
			unsigned f = p->field[k];
			vms_schema_addf(b, f == 0 || f == 8 ? &bytes : &count, "net.%s.%s", e->name,
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
	if (!p)
		return;
	vms_procfile_shared_close(p->f);
	p->f = NULL;
	nd_forget(p);
}

VMS_SOURCE_OPS(netdev, nd);
