/* SPDX-License-Identifier: MIT */
/* entity.c - the table of a source's entities (entity.h): built at
 * declare time, looked up in the tick without allocating. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "entity.h"

void vms_enttab_free(struct vms_enttab *t)
{
	free(t->ent);
	free(t->str);
	t->ent = NULL;
	t->str = NULL;
	t->n = t->cap = t->nwant = 0;
	t->str_len = t->str_cap = 0;
}

int vms_enttab_reset(struct vms_enttab *t, uint32_t cap, size_t strcap)
{
	vms_enttab_free(t);
	t->ent = calloc(cap ? cap : 1, sizeof(*t->ent));
	t->str = strcap ? malloc(strcap) : NULL;
	if (!t->ent || (strcap && !t->str)) {
		vms_enttab_free(t);
		return -ENOMEM;
	}
	t->cap = cap;
	t->str_cap = strcap;
	return 0;
}

int vms_enttab_reset_lines(struct vms_enttab *t, const char *text, size_t len, unsigned copies)
{
	uint32_t nlines = 1;
	for (const char *q = text, *end = text + len; (q = memchr(q, '\n', (size_t)(end - q))); q++)
		nlines++;
	return vms_enttab_reset(t, nlines, copies * (len + nlines));
}

struct vms_ent *vms_enttab_add(struct vms_enttab *t, const char *prefix, size_t plen,
			       const char *name, size_t nlen)
{
	if (t->n == t->cap)
		return NULL;
	struct vms_ent *e = &t->ent[t->n];
	*e = (struct vms_ent){.slot = -1};
	if (prefix) {
		bool tail = name + nlen == prefix + plen;
		size_t need = plen + 1 + (tail ? 0 : nlen + 1);
		if (t->str_cap - t->str_len < need)
			return NULL;
		char *s = t->str + t->str_len;
		memcpy(s, prefix, plen);
		s[plen] = '\0';
		e->prefix = s;
		e->prefix_len = (uint32_t)plen;
		if (tail) {
			e->name = s + (name - prefix);
		} else {
			char *n = s + plen + 1;
			memcpy(n, name, nlen);
			n[nlen] = '\0';
			e->name = n;
		}
		e->name_len = (uint32_t)nlen;
		t->str_len += need;
	}
	t->n++;
	return e;
}

bool vms_enttab_dup(const struct vms_enttab *t, const struct vms_ent *e)
{
	for (const struct vms_ent *o = t->ent; o < e; o++)
		if (vms_ent_name_is(o, e->name, e->name_len))
			return true;
	return false;
}

struct vms_ent *vms_enttab_find(struct vms_enttab *t, const char *name, size_t len, bool *known)
{
	*known = false;
	for (uint32_t i = 0; i < t->n; i++) {
		if (!vms_ent_name_is(&t->ent[i], name, len))
			continue;
		if (t->ent[i].seen != t->stamp)
			return &t->ent[i];
		*known = true;
	}
	return NULL;
}
