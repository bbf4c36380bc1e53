/* SPDX-License-Identifier: MIT */
/* report_int.h - the parts of `vmsampler report` (report.h) and what they
 * share: the sections and their columns (report_sections.c), the readings
 * of the input with their rows and the summary's p95 (report_read.c), the
 * text and JSON output (report_out.c), the times of --from and --to
 * (report_time.c), and the command line (report.c).  How the report is
 * read and computed is said at the top of report_read.c. */
#ifndef VMS_REPORT_INT_H
#define VMS_REPORT_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "binfmt.h"
#include "events.h"
#include "rates.h"
#include "reader_int.h"
#include "report.h"

enum col_kind { K_RATE, K_GAUGE, K_RUNQ };

struct rspec {
	const char *label; /* sar's column name */
	/* the rate column's identity (struct vms_rate_col): group, entity
	 * (NULL: the section's entities) and what it is */
	uint8_t group;
	const char *ent, *out;
	uint8_t kind;
};

#define MAXC 11

struct section {
	const char *id;     /* JSON */
	const char *entcol; /* the entity's column, NULL: one entity, no column */
	const char *only;   /* the one entity shown (cpu: "all") */
	unsigned ncols;
	struct rspec c[MAXC];
};

enum { S_CPU, S_QUEUE, S_TASK, S_DISK, S_NET, S_PAGING, S_SWAPPING, S_MEMORY, S_SWAPSPACE, S_PSI, S_VM,
       S_N };

__extension__ typedef unsigned __int128 u128;

/* p95 of a column's row values, exact: see the top of this file */
#define LLB_N 3776         /* log-linear buckets: 64 exact, then 64 per power of two */
#define QBUDGET (1u << 21) /* linear buckets of one reading, over all columns */
#define QPASSES 12         /* readings at most (a 64-bit key needs fewer) */
#define KB_N 256

struct qstate {
	uint64_t rank;  /* 1-based */
	uint64_t lo, hi; /* the keys still possible (inclusive) */
	uint64_t below; /* this reading: keys under lo */
	uint32_t nb;    /* buckets over [lo, hi] this reading */
	uint32_t *h;
	bool done;
	uint64_t *kb;   /* keys not yet counted: counted KB_N at a time, so
			 * that one histogram stays in the cache meanwhile */
	uint32_t nkb;
};

struct rent {
	unsigned sec;
	char *name;
	int32_t col[MAXC]; /* rcol of each of the section's columns, -1 */
	bool present;      /* in a frame of this row */
	uint64_t rows;     /* rows it had this reading */
};

struct rcol {
	uint32_t ent;
	uint8_t ci, kind;
	int prec;                  /* printed digits */
	double scale;              /* 10^prec */
	struct vms_rate_col def;   /* the rate's definition (no name, no inputs) */
	bool active;               /* computed in this reading */
	struct vms_rate_term row;  /* this row */
	double glast;              /* gauges: the last value of the row */
	double v;                  /* the row's value */
	struct vms_rate_term avg;  /* over the rows */
	double gsum;
	uint64_t gn;
	double min, max;           /* summary */
	uint64_t n;
	struct qstate q;
};

struct ev {
	struct vms_event e;
	uint64_t ord; /* frames of the range read before it */
};

enum mode { M_TEXT, M_JSON, M_SUMMARY, M_REFINE };

struct pos {
	uint64_t t_mono;
	int64_t t_real;
};

/* one rate plan per schema generation met */
struct genmap {
	const struct vms_schema *sch;
	const struct vms_rate_plan *plan; /* the rate stream's */
	uint32_t n;    /* plan columns read */
	uint32_t *sel; /* their plan indices */
	uint32_t *rc;  /* their rcols */
	struct vms_rate_term *t;
	uint32_t nin;  /* the schema columns they read */
	uint32_t *in;
};

struct report {
	/* options */
	const char *in;
	bool ring, summary, vm, json;
	unsigned only;      /* the sections asked for (--section, sar's flags) */
	const char *cpus;   /* -P: NULL the "all" row, "ALL" every CPU's too, or one CPU */
	double interval;
	struct vms_tspec from, to;
	/* the input, when it is not reopened */
	uint8_t *mem;
	size_t memlen;
	/* what the first reading learned */
	unsigned npass;
	uint64_t nframes;
	bool counted;
	unsigned seen; /* sections that have columns */
	struct ev *evs;
	size_t nev, capev;
	char err[512]; /* the first reading's failure, "" */
	char warn[512];
	bool t0_set;
	uint64_t t0_mono;
	int64_t t0_real;
	bool ms; /* times with milliseconds */
	bool ms_set;
	/* columns */
	struct rent *ents;
	uint32_t nents, capents;
	struct rcol *rcols;
	uint32_t nrc, caprc;
	uint32_t *act; /* the active ones (this reading) */
	uint32_t nact, capact;
	/* this reading */
	enum mode mode;
	unsigned mask;
	uint64_t rows;
	struct pos first, last; /* the rows' span */
	size_t ev_next;
	bool hdr;
	/* output */
	FILE *out;
	bool json_sec; /* a JSON section was written */
	bool titled;
	int oerrno;
	bool oerr;
};

/* The sections, in sar's order (report_sections.c). */
extern const struct section rpt_sections[S_N];

/* report_sections.c: the report's columns among those of a rate plan */
int rpt_genmap_build(struct report *R, struct genmap *g, struct vms_rate_stream *st,
	const struct vms_schema *s);
void rpt_genmap_free(struct genmap *g);

/* report_read.c: the readings of the input */
double rpt_avg_value(const struct rcol *c);
void rpt_events_upto(struct report *R, uint64_t ord);
void *rpt_grow(void *p, uint32_t *cap, uint32_t n, size_t size);
int rpt_open_input(struct report *R);
double rpt_pow10i(int prec);
int rpt_run_pass(struct report *R, enum mode mode, unsigned mask);
int rpt_summarize(struct report *R);

/* report_out.c: text and JSON */
void rpt_json_tail(struct report *R);
void rpt_print_row(struct report *R, unsigned sec, const struct pos *a, const struct pos *b,
	uint64_t ord);
void rpt_print_summary(struct report *R);
void rpt_section_end(struct report *R, unsigned sec);
void rpt_text_event(struct report *R, const struct ev *v);
void rpt_title(struct report *R);

/* report_time.c */
int rpt_parse_num(const char *s, double *v, const char **end);

#endif
