/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

static void source_defaults(struct vms_source_conf *s)
{
	memset(s, 0, sizeof(*s));
	s->enabled = true;
	s->every = 1;
}

static void globs_free(struct vms_globs *g)
{
	for (unsigned i = 0; i < g->n; i++)
		free(g->pat[i]);
	free(g->pat);
	g->pat = NULL;
	g->n = 0;
}

int vms_globs_add(struct vms_globs *g, const char *pat)
{
	char **n = realloc(g->pat, (g->n + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	g->pat = n;
	g->pat[g->n] = strdup(pat);
	if (!g->pat[g->n])
		return -ENOMEM;
	g->n++;
	return 0;
}

void vms_globs_clear(struct vms_globs *g)
{
	globs_free(g);
}

void vms_config_defaults(struct vms_config *c)
{
	memset(c, 0, sizeof(*c));
	c->interval_ns = VMS_NSEC_PER_SEC;
	c->ring_slots = 64;
	c->proc_root = strdup("/proc");
	c->log_level = VMS_LOG_INFO;
	source_defaults(&c->procstat);
	c->procstat.per_cpu = true;
	source_defaults(&c->loadavg);
	source_defaults(&c->diskstats);
	source_defaults(&c->netdev);
	/* whole disks, without the RAM disks and loop devices that every host
	 * has and nobody samples (node_exporter ignores them too) */
	vms_globs_add(&c->diskstats.exclude, "ram*");
	vms_globs_add(&c->diskstats.exclude, "loop*");
}

void vms_config_free(struct vms_config *c)
{
	struct vms_source_conf *s[] = {&c->procstat, &c->loadavg, &c->diskstats, &c->netdev};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(s); i++) {
		globs_free(&s[i]->include);
		globs_free(&s[i]->exclude);
	}
	free(c->output);
	free(c->proc_root);
	memset(c, 0, sizeof(*c));
}

bool vms_globs_match(const struct vms_globs *g, const char *name)
{
	for (unsigned i = 0; i < g->n; i++)
		if (fnmatch(g->pat[i], name, 0) == 0)
			return true;
	return false;
}

bool vms_globs_select(const struct vms_globs *include, const struct vms_globs *exclude, const char *name)
{
	if (include->n && !vms_globs_match(include, name))
		return false;
	return !vms_globs_match(exclude, name);
}

enum vms_format vms_config_format(const struct vms_config *c)
{
	if (c->format != VMS_FORMAT_AUTO)
		return c->format;
	const char *o = c->output ? c->output : "-";
	size_t n = strlen(o);
	if (n >= 4 && strcmp(o + n - 4, ".vms") == 0)
		return VMS_FORMAT_BIN;
	return VMS_FORMAT_CSV;
}
