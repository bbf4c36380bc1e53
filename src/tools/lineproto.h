/* SPDX-License-Identifier: MIT */
/* lineproto.h - frames as InfluxDB line protocol and as JSON lines, for
 * shippers (Telegraf, Vector, Fluent Bit) reading `vmsampler tail
 * --format influx|json` from a pipe; shared with `vmsampler export`.
 *
 * Line protocol (one line per measurement and tag set per frame; the
 * mapping is vms_lp_map(), documented in vmsampler(1), TAIL):
 *
 *   cpu,host=h1,cpu=cpu0 user=1234i,system=99i 1764042000123456789
 *   vm,host=h1,domain=web1,uuid=0f3c... cpu_time=81234000i 1764042000123456789
 *   disk,host=h1,device=sda rd_ios=12i,rd_sectors=96i 1764042000123456789
 *   load,host=h1 1m=0.21,5m=0.18 1764042000123456789
 *   vmsampler,host=h1 seq=17i,...,reader_lost=0i 1764042000123456789
 *
 * A counter is an integer field ("i"), a value with a scale (a load
 * average) a float written exactly as the decimal it is; a missing value
 * is an absent field, never 0, and a line left without fields is not
 * written.  Measurements, tag keys and values and field keys are escaped
 * as the line-protocol reference says (comma, space and '='; a
 * measurement only comma and space).  A name holding a backslash or a
 * control character cannot be written (InfluxDB 1.x keeps a doubled
 * backslash as two, 2.x reads one, and a trailing backslash breaks the
 * line in 1.x): its column is left out (counted).  The timestamp is the
 * frame's wall-clock time in ns.
 *
 * JSON lines: one object per frame, {"seq":17,"t_wall_ns":...,
 * "t_mono_ns":...,"gen":1,...,"reader_lost":0,"cpu.all.user":1234,...}
 * with the frame's columns under their own names; a missing value is an
 * absent member (never null, never 0).
 *
 * Nothing here prints: the functions fill a caller's buffer sized by
 * vms_lp_max(). */
#ifndef VMS_LINEPROTO_H
#define VMS_LINEPROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum vms_lp_type {
	VMS_LP_NONE = 0, /* missing: no field, no member */
	VMS_LP_UINT,     /* u: an integer (a counter, a gauge) */
	VMS_LP_FIXED,    /* u / 10^scale, written exactly ("0.21") */
	VMS_LP_DOUBLE,   /* d (a rate), with 6 fraction digits; not finite: missing */
};

struct vms_lp_val {
	uint8_t type;  /* enum vms_lp_type */
	int8_t scale;  /* VMS_LP_FIXED */
	union {
		uint64_t u;
		double d;
	};
};

/* Where one column goes in the line protocol. */
struct vms_lp_place {
	char measurement[64];
	/* up to three tags besides host (""-named: unused); a tag whose value
	 * would be empty is left out */
	struct {
		const char *key;
		char value[256];
	} tag[3];
	char field[256];
};

/* The mapping of a column (its name, its identity: catalog.h, and its
 * entity key: a VM's UUID) to a measurement, tags and a field:
 *   cpu.all.F / cpu.N.F          cpu       cpu=cpu-total / cpuN    F
 *   perf.all.F / perf.cpuN.F     perf      cpu=cpu-total / cpuN    F
 *   disk.DEV.F                   disk      device=DEV              F
 *   net.IF.F                     net       device=IF               F
 *   vm.NAME.vcpuK.F              vm_vcpu   domain, uuid, vcpu=K    F
 *   vm.NAME.lv.vcpuK.F           vm_vcpu   domain, uuid, vcpu=K    lv_F
 *   vm.NAME.net.TAP.F            vm_net    domain, uuid, device    F
 *   vm.NAME.block.DEV.F          vm_block  domain, uuid, device    F
 *   vm.NAME.REST                 vm        domain, uuid            REST, '.' -> '_'
 *   GROUP.REST (stat, load, psi, virt, vms, ...)
 *                                GROUP     -                       REST, '.' -> '_'
 * where the parts are the identity's (group, entity, sub, field; a rate
 * column's identity, struct vms_rate_col, maps the same way); a column
 * without an identity (id NULL or of no group) is GROUP.REST, split at
 * its first dot, unless GROUP is a group of the catalogue (a name that
 * claims it and does not fit it: -EINVAL).  A field that would be named "time" (vm.NAME.vcpuK.time)
 * is "time_": InfluxDB reserves the key time and drops such a field.
 * Returns 0, or -EINVAL for a column it cannot place. */
struct vms_colid;
int vms_lp_map(const char *name, const struct vms_colid *id, const char *key, struct vms_lp_place *out);

struct vms_lp;

enum vms_lp_format { VMS_LP_INFLUX = 1, VMS_LP_JSON = 2 };

/* A layout for one schema: the columns' names, identities (NULL: none)
 * and keys (keys may be NULL or ""), the host tag (NULL, "" or not vms_lp_name_ok(): none).  0, -ENOMEM; columns that the
 * line protocol cannot name are counted in vms_lp_skipped(). */
int vms_lp_new(struct vms_lp **out, enum vms_lp_format fmt, uint32_t ncols, const char *const *names,
	       const struct vms_colid *ids, const char *const *keys, const char *host);
void vms_lp_free(struct vms_lp *lp);
/* Columns left out of the layout (a name with a backslash or a control
 * character). */
uint32_t vms_lp_skipped(const struct vms_lp *lp);

/* The frame's own fields: the "vmsampler" measurement, the JSON
 * object's first members.  extra_name/extra (nextra) are more of them
 * (with --rates: interval_s, rate_flags). */
struct vms_lp_meta {
	uint64_t seq;
	int64_t t_wall_ns;
	uint64_t t_mono_ns;
	uint32_t gen, flags, missed_ticks, lost_frames;
	uint64_t late_ns, self_cpu_ns;
	uint64_t reader_lost; /* frames this reader lost just before this one */
	uint32_t nextra;
	const char *const *extra_name;
	const struct vms_lp_val *extra;
};

/* Bytes one frame can take at most (with up to nextra extra members). */
size_t vms_lp_max(const struct vms_lp *lp, uint32_t nextra);
/* Write one frame (vals: one per column of the layout) at p, which has
 * vms_lp_max() bytes; returns the end (each line ends in '\n'). */
char *vms_lp_frame(const struct vms_lp *lp, char *p, const struct vms_lp_meta *m,
		   const struct vms_lp_val *vals);

/* s can be a measurement, tag or field key or value: no backslash, no
 * control character. */
bool vms_lp_name_ok(const char *s);
/* Escaped forms (exposed for the tests): a line-protocol measurement,
 * a tag key/value or field key, a JSON string (with its quotes).  The
 * _max functions bound the bytes written. */
char *vms_lp_esc_measurement(char *p, const char *s);
char *vms_lp_esc_key(char *p, const char *s);
char *vms_json_string(char *p, const char *s);
size_t vms_lp_esc_max(const char *s);
size_t vms_json_string_max(const char *s);
/* s as a JSON string on o (null when out of memory) */
void vms_json_put(FILE *o, const char *s);

#endif
