/* SPDX-License-Identifier: MIT */
/* config.h - everything a run is configured with.
 *
 * Precedence: built-in defaults < the YAML file (-c) < the command line.
 * Every key is documented in vmsampler.yaml(5) and every option in
 * vmsampler(1) and --help. */
#ifndef VMS_CONFIG_H
#define VMS_CONFIG_H

#include "vms.h"

struct vms_globs {
	char **pat;
	unsigned n;
};

int vms_globs_add(struct vms_globs *g, const char *pat);
void vms_globs_clear(struct vms_globs *g);
/* True if `name` matches any pattern (fnmatch(3), no flags). */
bool vms_globs_match(const struct vms_globs *g, const char *name);
/* The include/exclude rule: included (include empty or a match) and not
 * excluded. */
bool vms_globs_select(const struct vms_globs *include, const struct vms_globs *exclude,
		      const char *name);

struct vms_source_conf {
	bool enabled;
	uint32_t every; /* sample every N ticks (>= 1) */
	struct vms_globs include, exclude;
	bool partitions; /* diskstats: also partitions */
	bool per_cpu;    /* procstat: per-CPU columns besides cpu.all */
};

enum vms_format { VMS_FORMAT_AUTO = 0, VMS_FORMAT_CSV, VMS_FORMAT_BIN };
enum vms_csv_layout { VMS_CSV_WIDE = 0, VMS_CSV_LONG };

struct vms_config {
	uint64_t interval_ns;  /* default 1 s */
	uint64_t count;        /* frames to write, 0 = until stopped */
	uint64_t align_ns;     /* first tick at a wall-clock multiple (0 = now) */
	char *output;          /* path, or "-" for stdout (default "-") */
	enum vms_format format;
	enum vms_csv_layout csv_layout;
	char *proc_root;       /* default "/proc" */
	uint32_t ring_slots;   /* frames the ring holds (default 64) */
	int log_level;         /* enum vms_log_level */
	struct vms_source_conf procstat, loadavg, diskstats, netdev;
};

void vms_config_defaults(struct vms_config *c);
void vms_config_free(struct vms_config *c);
/* Output format from -f, else from the output's extension (.vms: binary,
 * anything else: CSV). */
enum vms_format vms_config_format(const struct vms_config *c);

#endif
