/* SPDX-License-Identifier: MIT */
/* rates.h - per-interval rates from raw counters, the way sysstat's sar,
 * mpstat and iostat define them (reader side: `vmsampler dump --rates`).
 *
 * A plan is derived from a schema by the columns' identities (catalog.h:
 * the cpu, disk and net groups, stat, a VM's groups, mem, vmstat, psi,
 * anything else): each output column has an identity and a name, an
 * operation and the input columns it reads.  vms_rate_compute_dt()
 * evaluates one interval per column: each column's last value before the
 * frame (VMS_NONE where it had none) and the seconds since it was taken,
 * aligned to the plan's schema.  The formulas and their sysstat sources are in rates.c. */
#ifndef VMS_RATES_H
#define VMS_RATES_H

#include "out.h"
#include "schema.h"
#include <vmsampler/ring.h>

/* rate_flags of a row */
#define VMS_RATE_WRAP 1u  /* a counter wrapped (32-bit, or a 64-bit one below 2^32) */
#define VMS_RATE_RESET 2u /* a counter went back: its columns are empty */
#define VMS_RATE_GAP 4u   /* missed ticks, lost frames, a seq jump or a new generation */

enum vms_rate_op {
	VMS_ROP_GAUGE,    /* the current value of a, exactly (not a rate) */
	VMS_ROP_PER_S,    /* (Δa [+ Δb + Δc]) * mul / Δt */
	VMS_ROP_PCT_OF,   /* Δa / (Δa + Δb) * 100, 0 when both are 0 (%rrqm) */
	VMS_ROP_PER_OP,   /* Δa * mul / Δb, 0 when Δb is 0 (r_await, rareq-sz) */
	VMS_ROP_CPU,      /* cpu group `grp`, percentage `field` (enum vms_cpu_pct) */
	VMS_ROP_SUM,      /* ΣΔ xs[0..nnum) * mul / ΣΔ xs[nnum..nnum+nden), 0 when that
			   * is 0; per second (/ Δt) when nden is 0 (sar's await,
			   * areq-sz; a VM's totals over its vCPUs and taps) */
	VMS_ROP_CAP,      /* Δa (ns) / Δt / 10^9 * c / b * mul: CPU time as a share of
			   * the cgroup's quota b per period c (gauges at the frame;
			   * empty without a quota) */
	VMS_ROP_GEXPR,    /* a gauge from gauges, at the frame (not a rate): max(0,
			   * ±xs[0] ± ... xs[nnum-1]) * mul / (±xs[nnum] ± ...
			   * xs[nnum+nden-1]) (/ 1 when nden is 0; 0 when that is not
			   * above 0), an input x < 0 being column ~x subtracted;
			   * field: the decimals shown (sar -r's kbmemused, %commit) */
};

enum vms_cpu_pct {
	VMS_CPU_USR, VMS_CPU_NICE, VMS_CPU_SYS, VMS_CPU_IOWAIT, VMS_CPU_IRQ, VMS_CPU_SOFT,
	VMS_CPU_STEAL, VMS_CPU_GUEST, VMS_CPU_GNICE, VMS_CPU_IDLE, VMS_CPU_NPCT
};

struct vms_rate_col {
	char *name;         /* vms_colname(group, entity, sub, out), or out without a group */
	/* its identity: the inputs' group, entity and sub (the schema's
	 * strings), and what it is ("%usr", "r/s", "kbmemused", a gauge's
	 * field), the end of name */
	uint8_t group;      /* enum vms_group */
	const char *entity, *sub, *out;
	uint8_t op;         /* enum vms_rate_op */
	uint8_t field;      /* VMS_ROP_CPU: enum vms_cpu_pct */
	int8_t scale;       /* VMS_ROP_GAUGE: the input's scale */
	int32_t a, b, c;    /* input columns (-1: none) */
	uint32_t grp;       /* VMS_ROP_CPU: index into cpu groups */
	bool cpu_all;       /* VMS_ROP_CPU: the group is cpu.all */
	double mul;
	int32_t *xs;        /* VMS_ROP_SUM: input columns (owned) */
	uint16_t nnum, nden;
};

/* /proc/stat fields of one CPU line, in this order; -1 when the kernel
 * has no such field. */
enum vms_cpu_field {
	VMS_CF_USER, VMS_CF_NICE, VMS_CF_SYSTEM, VMS_CF_IDLE, VMS_CF_IOWAIT, VMS_CF_IRQ,
	VMS_CF_SOFTIRQ, VMS_CF_STEAL, VMS_CF_GUEST, VMS_CF_GUEST_NICE, VMS_CF_N
};

struct vms_cpu_group {
	int32_t f[VMS_CF_N];
	bool all;                  /* cpu.all (sar's and mpstat's "all") */
	/* scratch: this interval's ticks per percentage and their total */
	uint64_t dv[VMS_CPU_NPCT], total;
	bool ok;                   /* scratch: dv valid */
	uint64_t stamp;            /* scratch: the call that computed dv */
};

struct vms_rate_plan {
	const struct vms_schema *schema;
	struct vms_rate_col *cols;
	uint32_t ncols;
	struct vms_cpu_group *cpu;
	uint32_t ncpu;
	uint64_t stamp;             /* scratch: calls of vms_rate_terms_dt() */
};

/* Build the plan of schema s (kept by pointer: it must outlive the plan). */
int vms_rate_plan_new(const struct vms_schema *s, struct vms_rate_plan **out);
void vms_rate_plan_free(struct vms_rate_plan *p);
/* *plan replaced by the plan of schema s; left as it was on failure. */
int vms_rate_plan_renew(struct vms_rate_plan **plan, const struct vms_schema *s);

/* prev[i] and cur[i] are the values of column i of the plan's schema at
 * the start and the end of its interval, dt[i] seconds (0: none; the
 * inputs of one output must share theirs).  Writes out[k] for every plan
 * column (NAN: empty; VMS_ROP_GAUGE columns get the current value as a
 * double, printers use cur[a] exactly).  Returns the VMS_RATE_WRAP /
 * VMS_RATE_RESET flags it met. */
unsigned vms_rate_compute_dt(struct vms_rate_plan *p, const uint64_t *prev, const uint64_t *cur,
			     const double *dt, double *out);

/* One output column over one interval, or summed over several intervals
 * (a row of `report --interval`, sar's Average: counters at the end minus
 * at the start over the total time, resets and wraps handled interval by
 * interval): the value is vms_rate_value(col, term).  n is NAN when the
 * value is unknown (a reset, a missing value, no interval). */
struct vms_rate_term {
	double n, d;
};

/* The terms of the plan columns sel[0..nsel) into t[0..nsel) (sel NULL:
 * every column, t[k] for column k), over the interval prev -> cur (as
 * vms_rate_compute_dt).  Returns the VMS_RATE_WRAP / VMS_RATE_RESET flags
 * met in those columns. */
unsigned vms_rate_terms_dt(struct vms_rate_plan *p, const uint64_t *prev, const uint64_t *cur,
			   const double *dt, const uint32_t *sel, uint32_t nsel,
			   struct vms_rate_term *t);
/* The value of column c from its term (one interval, or a sum): NAN when
 * unknown.  For one interval this is exactly vms_rate_compute_dt()'s. */
double vms_rate_value(const struct vms_rate_col *c, const struct vms_rate_term *t);
/* acc += t (an unknown t adds nothing). */
static inline void vms_rate_term_add(struct vms_rate_term *acc, const struct vms_rate_term *t)
{
	if (t->n != t->n)
		return;
	if (acc->n != acc->n) {
		*acc = *t;
		return;
	}
	acc->n += t->n;
	acc->d += t->d;
}

/* v / 10^scale: a column's raw value in its unit (no libm: the sampler
 * does not load it for this). */
double vms_unscale(double v, int scale);

/* The column of ps (the previous frame's schema) that column i of s
 * continues: the same name, kind, scale and key; -1 if none (or ps is
 * NULL).  Rates across a generation change pair columns with it. */
int32_t vms_rate_prev_col(const struct vms_schema *ps, const struct vms_schema *s, uint32_t i);

/* Each column's last present value and when it was taken, so that a
 * column present only on some frames (the per-VM slow path) gets its rate
 * over its own interval; carried across generations by
 * vms_rate_prev_col().  The rate stream's (below). */
struct vms_rate_last {
	const struct vms_schema *sch; /* what v, t, dt are aligned to; NULL: nothing yet */
	uint64_t *v, *t;              /* per column: last value, its t_mono_ns (0: none) */
	double *dt;                   /* per column: vms_rate_last_dt()'s result */
};
/* Align to s (columns s does not continue: none).  0 or -ENOMEM. */
int vms_rate_last_align(struct vms_rate_last *l, const struct vms_schema *s);
/* dt[i] = seconds from column i's last value to t_mono_ns (0: none). */
void vms_rate_last_dt(struct vms_rate_last *l, uint64_t t_mono_ns);
/* Remember f's present values (f is of the aligned schema). */
void vms_rate_last_put(struct vms_rate_last *l, const struct vms_frame *f);
/* Free, and forget everything (sch NULL). */
void vms_rate_last_free(struct vms_rate_last *l);
/* The same two for the columns cols[0..n) only (a stream whose reader
 * computes some rates: vms_rate_inputs() gives their columns). */
void vms_rate_last_dt_some(struct vms_rate_last *l, uint64_t t_mono_ns, const uint32_t *cols, uint32_t n);
void vms_rate_last_put_some(struct vms_rate_last *l, const struct vms_frame *f, const uint32_t *cols,
			    uint32_t n);
/* Mark in used[] (one per schema column) the inputs of plan column k. */
void vms_rate_inputs(const struct vms_rate_plan *p, uint32_t k, bool *used);

/* ---- one rate stream ------------------------------------------------------- */

/* Frames in, the rates of the intervals between them out: what `dump
 * --rates`, the reader library's rates, report and tail all compute, in
 * one place.  The plan follows the frames' schema; each column's last
 * value and time are kept (a column missing in some frames gets its rate
 * over its own interval, across generations by vms_rate_prev_col());
 * wraps and resets are vms_rate_compute_dt()'s; an interval after missed
 * ticks, lost frames, a seq jump or a new generation is flagged
 * VMS_RATE_GAP.  Zero-initialise; vms_rate_stream_free() at the end. */
struct vms_rate_stream {
	struct vms_rate_plan *plan;    /* the plan of sch */
	const struct vms_schema *sch;  /* the schema of the frames now given */
	const struct vms_schema *psch; /* the previous frame's (compared, never read) */
	struct vms_rate_last last;
	uint64_t pseq, pt_mono;        /* the previous frame */
	bool have_prev;
	const uint32_t *in;            /* the only columns whose last values are kept (a caller
					* that computes some rates: vms_rate_inputs()); NULL: all */
	uint32_t nin;
	/* the interval that ended at the last frame given */
	double dt;                     /* its length in s (0: none) */
	unsigned flags;                /* VMS_RATE_* */
};
/* The frames that follow are of schema s (valid until the next call):
 * 1 when the plan was renewed (st->plan), 0 when s is the same, -errno
 * (the plan stays as it was). */
int vms_rate_stream_schema(struct vms_rate_stream *st, const struct vms_schema *s);
/* Frame f: out[k] for every plan column (vms_rate_compute_dt()) of the
 * interval that ends at f.  1: an interval (st->dt, st->flags), 0: none
 * (the first frame of a stream), -ENOMEM. */
int vms_rate_stream_values(struct vms_rate_stream *st, const struct vms_frame *f, double *out);
/* The same with the terms of the plan columns sel[0..nsel) into t
 * (vms_rate_terms_dt()). */
int vms_rate_stream_terms(struct vms_rate_stream *st, const struct vms_frame *f, const uint32_t *sel,
			  uint32_t nsel, struct vms_rate_term *t);
/* A new stream starts (a sampler started again): no interval across. */
void vms_rate_stream_restart(struct vms_rate_stream *st);
void vms_rate_stream_free(struct vms_rate_stream *st);

#endif
