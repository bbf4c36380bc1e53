/* SPDX-License-Identifier: MIT */
/* source_psi.c - pressure stall information, /proc/pressure/{cpu,memory,
 * io,irq} (Linux 4.20+, CONFIG_PSI; irq since 6.1 with
 * CONFIG_IRQ_TIME_ACCOUNTING).
 *
 * Columns psi.<resource>.some.total and psi.<resource>.full.total: the
 * microseconds since boot during which some (at least one) task, or all
 * non-idle tasks, were stalled on the resource; counters.  Only the files
 * and lines this kernel has are declared: a kernel without PSI, or booted
 * with psi=0 (the files are there but reading them fails), has none of
 * these columns, and cpu has no full line before 5.13.  The kernel's own
 * averages (avg10, avg60, avg300) are not sampled: the readers compute
 * the share of each interval from the totals (src/lib/rates.c). */
#include <stdio.h>
#include <string.h>

#include "parse.h"
#include "procfile.h"
#include "source.h"

#define PSI_NRES 4

static const char *const psi_res[PSI_NRES] = {"cpu", "memory", "io", "irq"};

struct psi {
	struct vms_procfile f[PSI_NRES];
	bool open[PSI_NRES];
	int32_t slot[PSI_NRES][2]; /* some, full: first column, -1 none */
};

static int psi_open(struct vms_source *src, const struct vms_source_env *env)
{
	(void)env;
	struct psi *p = src->priv;
	char path[32];
	int first_err = -ENOENT;
	unsigned n = 0;
	for (unsigned i = 0; i < PSI_NRES; i++) {
		p->f[i] = (struct vms_procfile)VMS_PROCFILE_INIT;
		p->slot[i][0] = p->slot[i][1] = -1;
		snprintf(path, sizeof(path), "pressure/%s", psi_res[i]);
		int r = vms_procfile_open(&p->f[i], src->proc_dirfd, path, 256);
		if (r < 0) {
			/* ENOENT: no such resource here; EOPNOTSUPP: psi=0 */
			if (r != -ENOENT && first_err == -ENOENT)
				first_err = r;
			continue;
		}
		p->open[i] = true;
		n++;
	}
	return n ? 0 : first_err;
}

static int psi_declare(struct vms_source *src, struct vms_schema_builder *b, const struct vms_source_env *env)
{
	(void)env;
	const struct vms_coldef us = {.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_US, .wrap_bits = 64};
	struct psi *p = src->priv;
	uint32_t slot = 0;
	for (unsigned i = 0; i < PSI_NRES; i++) {
		struct vms_psi_line pl;
		struct vms_cur c;
		bool has[2] = {false, false};
		int r;
		p->slot[i][0] = p->slot[i][1] = -1;
		if (!p->open[i])
			continue;
		r = vms_procfile_read(&p->f[i]);
		if (r < 0)
			continue; /* unreadable now: no columns (a new declare retries) */
		vms_cur_init(&c, p->f[i].buf, p->f[i].len);
		while ((r = vms_psi_next(&c, &pl)) != 0)
			if (r > 0)
				has[pl.full] = true;
		for (unsigned k = 0; k < 2; k++) {
			if (!has[k])
				continue;
			p->slot[i][k] = (int32_t)slot++;
			vms_schema_addc(b, &us, VMS_G_PSI, psi_res[i], NULL, k ? "full.total" : "some.total");
		}
	}
	if (b->err)
		return b->err;
	return slot ? 0 : -ENODATA;
}

static int psi_sample(struct vms_source *src, uint64_t *slots, struct vms_tick_ctx *t)
{
	struct psi *p = src->priv;
	for (unsigned i = 0; i < PSI_NRES; i++) {
		int32_t *s = p->slot[i];
		if (s[0] < 0 && s[1] < 0)
			continue;
		int r = vms_procfile_read(&p->f[i]);
		if (r < 0)
			return r;
		struct vms_psi_line pl;
		struct vms_cur c;
		bool seen[2] = {false, false};
		unsigned bad = 0;
		vms_cur_init(&c, p->f[i].buf, p->f[i].len);
		while ((r = vms_psi_next(&c, &pl)) != 0) {
			if (r < 0) {
				bad++;
				t->parse_errors++;
				continue;
			}
			if (s[pl.full] < 0)
				return VMS_RESCHEMA; /* a line that was not there (a new kernel's) */
			if (seen[pl.full]) {
				bad++; /* the same line twice: keep the first */
				t->parse_errors++;
				continue;
			}
			seen[pl.full] = true;
			slots[s[pl.full]] = pl.total;
		}
		for (unsigned k = 0; k < 2; k++) {
			if (s[k] < 0 || seen[k])
				continue;
			if (!bad)
				return VMS_RESCHEMA; /* a line went away */
			slots[s[k]] = VMS_NONE;
		}
	}
	return 0;
}

static void psi_close(struct vms_source *src)
{
	struct psi *p = src->priv;
	for (unsigned i = 0; i < PSI_NRES; i++)
		vms_procfile_close(&p->f[i]);
}

VMS_SOURCE_OPS(psi, psi);
