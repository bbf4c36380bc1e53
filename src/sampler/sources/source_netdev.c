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
 * the tap devices of the VMs in the VM table are left out unless
 * netdev.vm_taps is set: they are the vm source's per-VM network columns.
 * The interface set is then re-declared whenever the VM table changes. */
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "procfile.h"
#include "source.h"
#include "vmtab.h"

struct nd_ent {
	const char *prefix; /* the line up to and including the name's ':', NUL-terminated */
	const char *name;   /* NUL-terminated copy of the name */
	uint32_t prefix_len, name_len;
	bool selected;
	int32_t slot;       /* first column, -1 if not sampled */
	uint32_t seen;      /* stamp of the last sample that read it */
};

struct netdev {
	struct vms_procfile *f; /* shared */
	uint64_t vmgen;     /* VM table generation at declare time */
	bool vm_taps;
	struct vms_netdev_hdr hdr;
	char *hdr_text;     /* the two header lines as read at declare time */
	size_t hdr_len;
	uint8_t field[VMS_NET_FIELDS]; /* the fields the header has, in column order */
	unsigned nfield;
	struct nd_ent *ent; /* in file order */
	uint32_t nent;
	char *str;
	uint32_t stamp;
};

static void nd_forget(struct netdev *p)
{
	free(p->ent);
	free(p->str);
	free(p->hdr_text);
	p->ent = NULL;
	p->str = NULL;
	p->hdr_text = NULL;
	p->hdr_len = 0;
	p->nent = 0;
	p->nfield = 0;
}

static int nd_open(struct vms_source *src)
{
	struct netdev *p = src->priv;
	p->vm_taps = src->sconf && src->sconf->vm_taps;
	return vms_procfile_shared_open(&p->f, src->proc_dirfd, "net/dev", 4096);
}

/* A host-side tap of a VM in the table. */
static bool is_vm_tap(const char *name)
{
	const struct vms_vmtab *t = vms_vmtab();
	for (unsigned i = 0; i < t->n; i++)
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
	uint32_t nlines = 1, slot = 0, have = 0;
	size_t soff = 0;
	int r;

	nd_forget(p);
	p->vmgen = vms_vmtab_gen();
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

	for (const char *q = c.p; (q = memchr(q, '\n', (size_t)(c.end - q))); q++)
		nlines++;
	p->hdr_text = malloc(p->hdr_len ? p->hdr_len : 1);
	p->ent = calloc(nlines, sizeof(*p->ent));
	/* per line: its prefix and a copy of the name, each with a NUL */
	p->str = malloc(2 * vms_cur_left(&c) + 2 * (size_t)nlines);
	if (!p->hdr_text || !p->ent || !p->str) {
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
		struct nd_ent *e = &p->ent[p->nent++];
		size_t plen = (size_t)(nl.name + nl.name_len + 1 - ls); /* with the ':' */
		char *s = p->str + soff;
		memcpy(s, ls, plen);
		s[plen] = '\0';
		memcpy(s + plen + 1, nl.name, nl.name_len);
		s[plen + 1 + nl.name_len] = '\0';
		soff += plen + nl.name_len + 2;
		e->prefix = s;
		e->prefix_len = (uint32_t)plen;
		e->name = s + plen + 1;
		e->name_len = (uint32_t)nl.name_len;
		e->slot = -1;
	}

	for (uint32_t i = 0; i < p->nent; i++) {
		struct nd_ent *e = &p->ent[i];
		bool dup = false;
		for (uint32_t j = 0; j < i && !dup; j++)
			dup = p->ent[j].name_len == e->name_len &&
			      memcmp(p->ent[j].name, e->name, e->name_len) == 0;
		if (dup)
			continue; /* a second line of the same name: not sampled */
		if (sc && !vms_globs_select(&sc->include, &sc->exclude, e->name))
			continue;
		if (!p->vm_taps && is_vm_tap(e->name))
			continue;
		e->selected = true;
		e->slot = (int32_t)slot;
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
static bool nd_prefix_match(const struct vms_cur *c, const struct nd_ent *e)
{
	if (vms_cur_left(c) < e->prefix_len || memcmp(c->p, e->prefix, e->prefix_len) != 0)
		return false;
	const char *rest = c->p + e->prefix_len;
	const char *nl = memchr(rest, '\n', (size_t)(c->end - rest));
	return !memchr(rest, ':', (size_t)((nl ? nl : c->end) - rest));
}

static bool nd_name_is(const struct nd_ent *e, const struct vms_net_line *nl)
{
	return e->name_len == nl->name_len && memcmp(e->name, nl->name, nl->name_len) == 0;
}

/* An interface not where it was at declare time: the first of that name
 * not yet read in this sample.  NULL with *known set: every interface of
 * that name was read already. */
static struct nd_ent *nd_lookup(struct netdev *p, const struct vms_net_line *nl, uint32_t stamp,
				bool *known)
{
	*known = false;
	for (uint32_t i = 0; i < p->nent; i++) {
		if (!nd_name_is(&p->ent[i], nl))
			continue;
		if (p->ent[i].seen != stamp)
			return &p->ent[i];
		*known = true;
	}
	return NULL;
}

static int nd_sample(struct vms_source *src, uint64_t *slots, struct vms_tick_ctx *t)
{
	struct netdev *p = src->priv;
	struct vms_net_line nl;
	struct vms_cur c;
	uint32_t stamp, pos = 0, seen = 0, bad = 0;
	int r;

	if (!p->vm_taps && VMS_UNLIKELY(vms_vmtab_gen() != p->vmgen))
		return VMS_RESCHEMA; /* VMs (and their taps) came or went */
	r = vms_procfile_shared_read(p->f, t->idx);
	if (r < 0)
		return r;
	vms_cur_init(&c, p->f->buf, p->f->len);
	if (!vms_cur_startswith(&c, p->hdr_text, p->hdr_len))
		return VMS_RESCHEMA; /* another header: map the columns again */
	c.p += p->hdr_len;
	stamp = ++p->stamp;
	if (VMS_UNLIKELY(stamp == 0))
		stamp = p->stamp = 1; /* 0 is "never seen" */
	for (;;) {
		struct nd_ent *e = pos < p->nent ? &p->ent[pos] : NULL;
		if (e && !e->selected && e->seen != stamp && nd_prefix_match(&c, e)) {
			vms_cur_skip_line(&c);
			e->seen = stamp;
			seen++;
			pos++;
			continue;
		}
		r = vms_netdev_next(&c, &p->hdr, &nl);
		if (r == 0)
			break;
		if (r < 0) {
			bad++;
			t->parse_errors++;
			pos++;
			continue;
		}
		if (!e || e->seen == stamp || !nd_name_is(e, &nl)) {
			bool known;
			e = nd_lookup(p, &nl, stamp, &known);
			if (!e && !known)
				return VMS_RESCHEMA; /* a new interface */
			if (!e) {
				/* one more line of an interface already read: damaged */
				bad++;
				t->parse_errors++;
				continue;
			}
		}
		pos = (uint32_t)(e - p->ent) + 1;
		e->seen = stamp;
		seen++;
		if (!e->selected)
			continue;
		uint64_t *s = slots + e->slot;
		for (unsigned k = 0; k < p->nfield; k++)
			s[k] = nl.v[p->field[k]];
	}
	if (VMS_LIKELY(seen == p->nent))
		return 0;
	if (p->nent - seen > bad)
		return VMS_RESCHEMA; /* an interface went away */
	for (uint32_t i = 0; i < p->nent; i++) {
		struct nd_ent *e = &p->ent[i];
		if (e->selected && e->seen != stamp)
			vms_slots_none(slots + e->slot, p->nfield);
	}
	return 0;
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
