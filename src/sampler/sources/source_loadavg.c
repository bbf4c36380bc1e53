/* SPDX-License-Identifier: MIT */
/* source_loadavg.c - /proc/loadavg: load averages and task counts. */
#include "parse.h"
#include "procfile.h"
#include "source.h"

struct loadavg {
	struct vms_procfile f;
};

static int la_open(struct vms_source *src, const struct vms_source_env *env)
{
	(void)env;
	struct loadavg *p = src->priv;
	return vms_procfile_open(&p->f, src->proc_dirfd, "loadavg", 256);
}

static int la_declare(struct vms_source *src, struct vms_schema_builder *b, const struct vms_source_env *env)
{
	(void)env;
	(void)src;
	const struct vms_coldef load = {.kind = VMS_KIND_GAUGE, .unit = VMS_UNIT_LOAD, .scale = 2};
	const struct vms_coldef tasks = {.kind = VMS_KIND_GAUGE, .unit = VMS_UNIT_TASKS};
	vms_schema_addc(b, &load, VMS_G_LOAD, NULL, NULL, "1m");
	vms_schema_addc(b, &load, VMS_G_LOAD, NULL, NULL, "5m");
	vms_schema_addc(b, &load, VMS_G_LOAD, NULL, NULL, "15m");
	vms_schema_addc(b, &tasks, VMS_G_LOAD, NULL, NULL, "runnable");
	vms_schema_addc(b, &tasks, VMS_G_LOAD, NULL, NULL, "tasks");
	return b->err;
}

static int la_sample(struct vms_source *src, uint64_t *slots, struct vms_tick_ctx *t)
{
	struct loadavg *p = src->priv;
	struct vms_loadavg la;
	int r = vms_procfile_read(&p->f);
	if (r < 0)
		return r;
	if (vms_parse_loadavg(p->f.buf, p->f.len, &la) < 0) {
		t->parse_errors++;
		vms_slots_none(slots, 5);
		return 0;
	}
	slots[0] = la.load[0];
	slots[1] = la.load[1];
	slots[2] = la.load[2];
	slots[3] = la.running;
	slots[4] = la.total;
	return 0;
}

static void la_close(struct vms_source *src)
{
	struct loadavg *p = src->priv;
	vms_procfile_close(&p->f);
}

VMS_SOURCE_OPS(loadavg, la);
