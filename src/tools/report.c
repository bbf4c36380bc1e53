/* SPDX-License-Identifier: MIT */
/* report.c - `vmsampler report` (report.h).
 *
 * The input is read once per section in text and JSON (sar prints one
 * section after the other, each with its Average), once for --summary,
 * and again while a p95 is not yet known to its last printed digit: a
 * regular file is reopened (and read up to the frames the first reading
 * saw, so a file that grows meanwhile gives the same report), standard
 * input, a FIFO or a live ring are first copied into memory (a ring as
 * the binary stream of the frames it holds at that moment).
 *
 * Rows.  A row is one frame's interval, or with --interval N the frames
 * of N seconds (a row ends at the first frame at least N seconds, less
 * half an interval, after it started; a last row shorter than that is
 * left out, as sar does).  Rates over a row are the sums of each
 * interval's terms (rates.h, vms_rate_term): what sar computes from the
 * counters at the row's ends, with wraps and resets handled in each
 * interval.  Gauges show their last value in the row.  The Average row
 * is computed the same way over every row: rates as sar's Average (the
 * whole span), gauges as the mean of the rows (sar's queue averages).
 *
 * --summary: per column the min, the avg (the Average row), the max and
 * the p95 (nearest rank: the smallest row value that at least 95 % of the
 * rows do not exceed) of the rows.  The p95 is exact to the printed
 * digit: values are keys (the value as printed, times 10^digits); a
 * log-linear histogram of the keys in the first reading, then linear ones
 * over the bucket holding the p95's rank, narrow it down to one key in a
 * few readings, in memory bounded by the number of columns. */
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "binfmt.h"
#include "compare.h"
#include "dump.h"
#include "events.h"
#include "fmt.h"
#include "log.h"
#include "rates.h"
#include "reader_int.h"
#include "sink.h"
#include "tool.h"

static const char usage_text[] =
	"Usage: vmsampler report FILE.vms|RING [--interval N] [--from T] [--to T]\n"
	"                        [--summary] [--vm] [--json] [--section LIST] [-P ALL|N]\n"
	"       vmsampler report --ring PATH [OPTIONS]\n"
	"       vmsampler report --compare A.vms B.vms [--window W] [--format FMT]\n"
	"       vmsampler report FILE.vms --window W1 --window W2 [--format FMT]\n"
	"What sar prints, from a binary stream (FILE '-' reads standard input) or a\n"
	"live ring: CPU, queue, tasks and interrupts, disks, interfaces, paging,\n"
	"swapping, memory, swap space and pressure (and VMs),\n"
	"per interval with Average rows, and the events between the rows.\n"
	"\n"
	"  -i, --interval=N  N seconds per row (a number, or with a unit s, m, h);\n"
	"                    default: each frame's interval\n"
	"      --from=T      start at T: a time as the CSV prints it\n"
	"                    (2026-11-22T07:58:30+00:00), a time of day HH:MM[:SS]\n"
	"                    on the first frame's date, or seconds from the first\n"
	"                    frame\n"
	"      --to=T        stop after T (the same forms)\n"
	"      --summary     min, avg, max and p95 of each column instead of rows\n"
	"      --vm          the per-VM section too (%cpu, %steal, run delay,\n"
	"                    network and disk kB/s, balloon, share of its CPU\n"
	"                    cap, throttled share)\n"
	"      --json        the same content as JSON\n"
	"      --ring=PATH   read the live ring at PATH (the frames it holds now)\n"
	"      --section=LIST  only these sections: cpu, queue, task, disk, net,\n"
	"                    paging, swapping, memory, swapspace, pressure, vm\n"
	"  -P, --cpu=ALL|N   a row per CPU as well (ALL), or CPU N's rows only\n"
	"  sar's spelling:   -f FILE is FILE, -s T --from T, -e T --to T; the\n"
	"                    sections: -u cpu, -q queue, -w and -I task, -d disk,\n"
	"                    and -n DEV net, -r memory, -W swapping, -B paging\n"
	"Comparing two runs (--compare A.vms B.vms) or two windows of one run:\n"
	"      --compare     the two files given are A and B\n"
	"      --window=W    FROM..TO, each end a time as --from, mark:TEXT or\n"
	"                    nothing (the start, the end); once, or once per side\n"
	"      --format=FMT  text (default), csv or json\n"
	"      --seed=N      the bootstrap's seed (default 1)\n"
	"      --replicates=N  bootstrap replicates (default 1000)\n"
	"      --level=P     the interval's confidence (default 0.95)\n"
	"  -h, --help        show this help\n"
	"\n"
	"Exit status: 0 success (a torn tail is reported on stderr), 1 damaged or\n"
	"foreign input (what was read before the damage is reported) or an I/O\n"
	"error, 2 usage error.  See vmsampler(1).\n";

/* ---- sections ---------------------------------------------------------------- */

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

#define R(l, g, o) {l, VMS_G_##g, NULL, o, K_RATE}
#define G(l, g, o) {l, VMS_G_##g, NULL, o, K_GAUGE}
#define P(l, e, o) {l, VMS_G_PSI, e, o, K_RATE}
static const struct section sections[S_N] = {
	[S_CPU] = {"cpu", "CPU", "all", 10,
		   {R("%usr", CPU, "%usr"), R("%nice", CPU, "%nice"), R("%sys", CPU, "%sys"),
		    R("%iowait", CPU, "%iowait"), R("%steal", CPU, "%steal"), R("%irq", CPU, "%irq"),
		    R("%soft", CPU, "%soft"), R("%guest", CPU, "%guest"), R("%gnice", CPU, "%gnice"),
		    R("%idle", CPU, "%idle")}},
	[S_QUEUE] = {"queue", NULL, NULL, 6,
		     {{"runq-sz", VMS_G_LOAD, NULL, "runnable", K_RUNQ}, G("plist-sz", LOAD, "tasks"),
		      G("ldavg-1", LOAD, "1m"), G("ldavg-5", LOAD, "5m"), G("ldavg-15", LOAD, "15m"),
		      G("blocked", STAT, "procs_blocked")}},
	[S_TASK] = {"task", NULL, NULL, 3,
		    {R("proc/s", STAT, "proc/s"), R("cswch/s", STAT, "cswch/s"), R("intr/s", STAT, "intr/s")}},
	[S_DISK] = {"disk", "DEV", NULL, 10,
		    {R("tps", DISK, "tps"), R("r/s", DISK, "r/s"), R("w/s", DISK, "w/s"),
		     R("rkB/s", DISK, "rkB/s"), R("wkB/s", DISK, "wkB/s"), R("dkB/s", DISK, "dkB/s"),
		     R("areq-sz", DISK, "areq-sz"), R("aqu-sz", DISK, "aqu-sz"), R("await", DISK, "await"),
		     R("%util", DISK, "%util")}},
	[S_NET] = {"net", "IFACE", NULL, 7,
		   {R("rxpck/s", NET, "rxpck/s"), R("txpck/s", NET, "txpck/s"), R("rxkB/s", NET, "rxkB/s"),
		    R("txkB/s", NET, "txkB/s"), R("rxcmp/s", NET, "rxcmp/s"), R("txcmp/s", NET, "txcmp/s"),
		    R("rxmcst/s", NET, "rxmcst/s")}},
	/* host memory: sar -B, -W, -r, -S and -q PSI (rates.c) */
	[S_PAGING] = {"paging", NULL, NULL, 9,
		      {R("pgpgin/s", VMSTAT, "pgpgin/s"), R("pgpgout/s", VMSTAT, "pgpgout/s"),
		       R("fault/s", VMSTAT, "pgfault/s"), R("majflt/s", VMSTAT, "pgmajfault/s"),
		       R("pgfree/s", VMSTAT, "pgfree/s"), R("pgscank/s", VMSTAT, "pgscank/s"),
		       R("pgscand/s", VMSTAT, "pgscand/s"), R("pgsteal/s", VMSTAT, "pgsteal/s"),
		       R("%vmeff", VMSTAT, "%vmeff")}},
	[S_SWAPPING] = {"swapping", NULL, NULL, 2,
			{R("pswpin/s", VMSTAT, "pswpin/s"), R("pswpout/s", VMSTAT, "pswpout/s")}},
	[S_MEMORY] = {"memory", NULL, NULL, 11,
		      {G("kbmemfree", MEM, "kbmemfree"), G("kbavail", MEM, "kbavail"),
		       G("kbmemused", MEM, "kbmemused"), G("%memused", MEM, "%memused"),
		       G("kbbuffers", MEM, "kbbuffers"), G("kbcached", MEM, "kbcached"),
		       G("kbcommit", MEM, "kbcommit"), G("%commit", MEM, "%commit"),
		       G("kbactive", MEM, "kbactive"), G("kbinact", MEM, "kbinact"), G("kbdirty", MEM, "kbdirty")}},
	[S_SWAPSPACE] = {"swapspace", NULL, NULL, 5,
			 {G("kbswpfree", MEM, "kbswpfree"), G("kbswpused", MEM, "kbswpused"),
			  G("%swpused", MEM, "%swpused"), G("kbswpcad", MEM, "kbswpcad"),
			  G("%swpcad", MEM, "%swpcad")}},
	[S_PSI] = {"pressure", NULL, NULL, 6,
		   {P("%scpu", "cpu", "%some"), P("%sio", "io", "%some"), P("%fio", "io", "%full"),
		    P("%smem", "memory", "%some"), P("%fmem", "memory", "%full"), P("%firq", "irq", "%full")}},
	[S_VM] = {"vm", "VM", NULL, 10,
		  {R("%cpu", VM, "%cpu"), R("%steal", VM, "%steal"), R("dlyms/s", VM, "dlyms/s"),
		   R("rxkB/s", VM, "rxkB/s"), R("txkB/s", VM, "txkB/s"), R("rkB/s", VMIO, "rkB/s"),
		   R("wkB/s", VMIO, "wkB/s"), G("kbballoon", VMBALLOON, "current"), R("%cap", VM, "%cap"),
		   R("%thrtl", VM, "%thrtl")}},
};
#undef R
#undef G
#undef P

__extension__ typedef unsigned __int128 u128;

/* ---- state ------------------------------------------------------------------- */

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

/* ---- small helpers ------------------------------------------------------------ */

static void *grow(void *p, uint32_t *cap, uint32_t n, size_t size)
{
	if (n < *cap)
		return p;
	uint32_t c = *cap ? *cap * 2 : 16;
	void *q = realloc(p, (size_t)c * size);
	if (q)
		*cap = c;
	return q;
}

static double pow10i(int prec)
{
	double s = 1;
	for (int i = 0; i < prec; i++)
		s *= 10;
	return s;
}

/* The key of v: v as printed with prec digits, times 10^prec (as
 * vms_fmt_double rounds it; scale is 10^prec). */
static uint64_t key_of(double v, double scale)
{
	if (!(v > 0))
		return 0;
	double r = v * scale + 0.5; /* positive: truncation is floor() (no libm here) */
	return r >= 9.2e18 ? (uint64_t)9.2e18 : (uint64_t)r;
}

static char *fmt_key(char *p, uint64_t k, int prec)
{
	return vms_fmt_fixed(p, k, prec);
}

/* log-linear bucket of a key, and the keys of a bucket */
static uint32_t llb(uint64_t k)
{
	if (k < 64)
		return (uint32_t)k;
	int e = 63 - __builtin_clzll(k);
	return 64 + (uint32_t)(e - 6) * 64 + (uint32_t)((k >> (e - 6)) & 63);
}

static void llb_range(uint32_t b, uint64_t *lo, uint64_t *hi)
{
	if (b < 64) {
		*lo = *hi = b;
		return;
	}
	unsigned e = (b - 64) / 64 + 6, sub = (b - 64) % 64;
	*lo = (uint64_t)(64 + sub) << (e - 6);
	*hi = *lo + (UINT64_C(1) << (e - 6)) - 1;
}

/* ---- times -------------------------------------------------------------------- */

static int parse_num(const char *s, double *v, const char **end)
{
	char *e;
	errno = 0;
	if (!(*s >= '0' && *s <= '9'))
		return -EINVAL;
	*v = strtod(s, &e);
	if (errno || !isfinite(*v))
		return -EINVAL;
	*end = e;
	return 0;
}

/* "HH:MM[:SS[.frac]]" into seconds; the rest of s must be empty */
static int parse_tod(const char *s, double *sec, const char **rest)
{
	unsigned h, m, n = 0;
	double sc = 0;
	if (sscanf(s, "%2u:%2u%n", &h, &m, (int *)&n) != 2 || n != 5 || h > 23 || m > 59)
		return -EINVAL;
	s += 5;
	if (*s == ':') {
		const char *e;
		if (!(s[1] >= '0' && s[1] <= '9' && s[2] >= '0' && s[2] <= '9') ||
		    parse_num(s + 1, &sc, &e) < 0 || sc >= 61)
			return -EINVAL;
		s = e;
	}
	*sec = h * 3600.0 + m * 60.0 + sc;
	*rest = s;
	return 0;
}

int vms_report_parse_time(const char *s, struct vms_tspec *t)
{
	const char *e;
	double v;
	t->text = s;
	/* seconds from the first frame */
	if (parse_num(s, &v, &e) == 0 && (*e == '\0' || strcmp(e, "s") == 0)) {
		t->kind = VMS_T_REL;
		t->rel = v;
		return 0;
	}
	/* a time of day */
	if (parse_tod(s, &v, &e) == 0 && *e == '\0') {
		t->kind = VMS_T_TOD;
		t->tod = v;
		return 0;
	}
	/* YYYY-MM-DD[T ]HH:MM[:SS[.frac]][Z|+HH:MM|-HH:MM] */
	int y, mo, d, n = 0;
	if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 || n != 10 || (s[10] != 'T' && s[10] != ' ') ||
	    mo < 1 || mo > 12 || d < 1 || d > 31)
		return -EINVAL;
	if (parse_tod(s + 11, &v, &e) < 0)
		return -EINVAL;
	struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_isdst = -1};
	long whole = (long)v; /* no libm in vmsampler-tools */
	tm.tm_hour = (int)(whole / 3600);
	tm.tm_min = (int)(whole % 3600 / 60);
	tm.tm_sec = (int)(whole % 60);
	time_t secs;
	if (*e == '\0') {
		secs = mktime(&tm); /* local time */
		if (secs == (time_t)-1)
			return -EINVAL;
	} else {
		int off = 0;
		if (strcmp(e, "Z") != 0) {
			unsigned oh, om;
			int k = 0;
			if ((e[0] != '+' && e[0] != '-') || sscanf(e + 1, "%2u:%2u%n", &oh, &om, &k) != 2 ||
			    k != 5 || e[6] != '\0' || oh > 23 || om > 59)
				return -EINVAL;
			off = (int)(oh * 3600 + om * 60) * (e[0] == '-' ? -1 : 1);
		}
		secs = timegm(&tm) - off;
	}
	t->kind = VMS_T_ABS;
	t->abs_ns = (int64_t)secs * 1000000000LL + (int64_t)((v - (double)whole) * 1e9 + 0.5);
	return 0;
}

/* a time of day on the first frame's (local) date */
void vms_report_resolve_tod(struct vms_tspec *t, int64_t t0_real)
{
	if (t->kind != VMS_T_TOD)
		return;
	time_t s = (time_t)(t0_real / 1000000000LL);
	struct tm tm;
	localtime_r(&s, &tm);
	long whole = (long)t->tod;
	tm.tm_hour = (int)(whole / 3600);
	tm.tm_min = (int)(whole % 3600 / 60);
	tm.tm_sec = (int)(whole % 60);
	tm.tm_isdst = -1;
	t->abs_ns = (int64_t)mktime(&tm) * 1000000000LL + (int64_t)((t->tod - (double)whole) * 1e9 + 0.5);
	t->kind = VMS_T_ABS;
}

#define TOL_NS 1000000 /* 1 ms: a frame taken a little after the time given */

/* -1 before --from, 0 in the range, 1 after --to */
static int in_range(const struct report *R, const struct vms_frame *f)
{
	double rel = ((double)f->t_mono_ns - (double)R->t0_mono) / 1e9;
	if ((R->from.kind == VMS_T_REL && rel * 1e9 < R->from.rel * 1e9 - TOL_NS) ||
	    (R->from.kind == VMS_T_ABS && f->t_real_ns < R->from.abs_ns - TOL_NS))
		return -1;
	if ((R->to.kind == VMS_T_REL && rel * 1e9 > R->to.rel * 1e9 + TOL_NS) ||
	    (R->to.kind == VMS_T_ABS && f->t_real_ns > R->to.abs_ns + TOL_NS))
		return 1;
	return 0;
}

/* "07:58:30" (or "07:58:30.528" below one second per row) */
static char *fmt_clock(char *p, int64_t t_real_ns, bool ms)
{
	time_t s = (time_t)(t_real_ns / 1000000000LL);
	struct tm tm;
	if (!localtime_r(&s, &tm))
		memset(&tm, 0, sizeof(tm));
	p += sprintf(p, "%02d:%02d:%02d", tm.tm_hour, tm.tm_min, tm.tm_sec);
	if (ms)
		p += sprintf(p, ".%03d", (int)(t_real_ns % 1000000000LL / 1000000));
	return p;
}

static char *fmt_iso(char *p, int64_t t_real_ns)
{
	return vms_fmt_time(p, t_real_ns, vms_local_gmtoff(t_real_ns));
}

/* ---- output -------------------------------------------------------------------- */

static void jstr(FILE *o, const char *s)
{
	putc('"', o);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(o, "\\%c", c);
		else if (c < 0x20)
			fprintf(o, "\\u%04x", c);
		else
			putc(c, o);
	}
	putc('"', o);
}

/* a value: "-" (text) or null (JSON) when unknown */
static void put_val(struct report *R, double v, int prec, bool json, int width)
{
	char b[48], *e;
	if (isnan(v) || !isfinite(v))
		e = stpcpy(b, json ? "null" : "-");
	else
		e = vms_fmt_double(b, v, prec);
	*e = '\0';
	if (json)
		fputs(b, R->out);
	else
		fprintf(R->out, " %*s", width, b);
}

static const struct section *sec_of(const struct rent *e)
{
	return &sections[e->sec];
}

static void text_lead(struct report *R, const char *label, const struct rent *e)
{
	const struct section *s = sec_of(e);
	fprintf(R->out, "%-*s", R->ms ? 13 : 11, label);
	if (s->entcol)
		fprintf(R->out, " %9s", e->name);
}

static void title(struct report *R);

static void text_header(struct report *R, unsigned sec, int64_t t_real)
{
	const struct section *s = &sections[sec];
	char t[32];
	if (!R->titled) {
		R->first.t_real = t_real;
		title(R);
	}
	*fmt_clock(t, t_real, R->ms) = '\0';
	fprintf(R->out, "\n%-*s", R->ms ? 13 : 11, t);
	if (s->entcol)
		fprintf(R->out, " %9s", s->entcol);
	for (unsigned c = 0; c < s->ncols; c++)
		fprintf(R->out, " %9s", s->c[c].label);
	putc('\n', R->out);
}

static void json_columns(struct report *R, const struct section *s)
{
	fprintf(R->out, "%s{\"name\":\"%s\",\"entity\":", R->json_sec ? ",\n" : "", s->id);
	if (s->entcol)
		jstr(R->out, s->entcol);
	else
		fputs("null", R->out);
	fputs(",\"columns\":[", R->out);
	for (unsigned c = 0; c < s->ncols; c++) {
		if (c)
			putc(',', R->out);
		jstr(R->out, s->c[c].label);
	}
	putc(']', R->out);
	R->json_sec = true;
}

static void text_event(struct report *R, const struct ev *v)
{
	char t[32];
	*fmt_clock(t, v->e.t_real_ns, R->ms) = '\0';
	const char *n = vms_event_name(v->e.type);
	fprintf(R->out, "%-*s EVENT %s", R->ms ? 13 : 11, t, n[0] ? n : "unknown");
	if (v->e.subject[0])
		fprintf(R->out, " %s", v->e.subject);
	if (v->e.detail[0])
		fprintf(R->out, " (%s)", v->e.detail);
	putc('\n', R->out);
}

static void json_event(struct report *R, const struct ev *v, bool first)
{
	char t[VMS_FMT_TIME_MAX + 1];
	*fmt_iso(t, v->e.t_real_ns) = '\0';
	fprintf(R->out, "%s{\"time\":\"%s\",\"t\":%.6f,\"type\":%u,\"event\":", first ? "" : ",\n", t,
		((double)v->e.t_mono_ns - (double)R->t0_mono) / 1e9, v->e.type);
	jstr(R->out, vms_event_name(v->e.type));
	fputs(",\"subject\":", R->out);
	jstr(R->out, v->e.subject);
	fputs(",\"detail\":", R->out);
	jstr(R->out, v->e.detail);
	putc('}', R->out);
}

/* ---- columns --------------------------------------------------------------------- */

/* The section, column and entity of a rate column, if the report shows
 * it. */
static bool match(const struct report *R, const struct vms_rate_col *pc, unsigned *sec, unsigned *ci,
		  const char **ent, size_t *entlen)
{
	if (pc->sub[0])
		return false; /* a vCPU's, a tap's, a guest disk's */
	for (unsigned s = 0; s < S_N; s++) {
		const struct section *S = &sections[s];
		if (s == S_VM && !R->vm)
			continue;
		/* -P N|ALL (sar): the CPU section's entities; else a section's own */
		const char *only = s == S_CPU && R->cpus ? R->cpus : S->only;
		if (only && strcmp(only, "ALL") != 0 && strcmp(pc->entity, only) != 0)
			continue;
		for (unsigned c = 0; c < S->ncols; c++) {
			const struct rspec *rs = &S->c[c];
			if (pc->group != rs->group || strcmp(pc->out, rs->out) != 0 ||
			    (rs->ent && strcmp(pc->entity, rs->ent) != 0))
				continue;
			*sec = s;
			*ci = c;
			*ent = S->entcol ? pc->entity : "";
			*entlen = strlen(*ent);
			return true;
		}
	}
	return false;
}

/* The rcol of (sec, ci, entity), created at first sight (-ENOMEM). */
static int32_t rcol_get(struct report *R, unsigned sec, unsigned ci, const char *ename, size_t el,
			const struct vms_rate_col *def, const struct vms_schema *sch)
{
	uint32_t e;
	for (e = 0; e < R->nents; e++)
		if (R->ents[e].sec == sec && strlen(R->ents[e].name) == el &&
		    memcmp(R->ents[e].name, ename, el) == 0)
			break;
	if (e == R->nents) {
		struct rent *n = grow(R->ents, &R->capents, R->nents, sizeof(*n));
		if (!n)
			return -ENOMEM;
		R->ents = n;
		char *nm = strndup(ename, el);
		if (!nm)
			return -ENOMEM;
		struct rent *x = &R->ents[R->nents++];
		*x = (struct rent){.sec = sec, .name = nm};
		for (unsigned c = 0; c < MAXC; c++)
			x->col[c] = -1;
	}
	struct rent *x = &R->ents[e];
	if (x->col[ci] >= 0)
		return x->col[ci];
	struct rcol *n = grow(R->rcols, &R->caprc, R->nrc, sizeof(*n));
	if (!n)
		return -ENOMEM;
	R->rcols = n;
	struct rcol *c = &R->rcols[R->nrc];
	uint8_t kind = sections[sec].c[ci].kind;
	*c = (struct rcol){.ent = e, .ci = (uint8_t)ci, .kind = kind, .def = *def,
			   .row = {NAN, 0}, .avg = {NAN, 0}, .glast = NAN, .v = NAN};
	c->def.name = NULL;
	c->def.xs = NULL;
	if (kind == K_RATE)
		c->prec = 2;
	else if (kind == K_RUNQ)
		c->prec = 0;
	else
		c->prec = def->op == VMS_ROP_GEXPR ? def->field
			  : def->op == VMS_ROP_GAUGE && def->a >= 0 && sch->cols[def->a].scale > 0
				  ? sch->cols[def->a].scale
				  : 0;
	c->active = (R->mask >> sec) & 1;
	c->scale = pow10i(c->prec);
	if (R->mode == M_SUMMARY && !(c->q.h = calloc(LLB_N, sizeof(*c->q.h))))
		return -ENOMEM;
	if (c->active) {
		uint32_t *a = grow(R->act, &R->capact, R->nact, sizeof(*a));
		if (!a)
			return -ENOMEM;
		R->act = a;
		R->act[R->nact++] = R->nrc;
	}
	x->col[ci] = (int32_t)R->nrc;
	return (int32_t)R->nrc++;
}

static void genmap_free(struct genmap *g)
{
	free(g->sel);
	free(g->rc);
	free(g->t);
	free(g->in);
	memset(g, 0, sizeof(*g));
}

/* The report's columns among those of the plan of st (just renewed for
 * schema s); st is then to keep the last values of their inputs only. */
static int genmap_build(struct report *R, struct genmap *g, struct vms_rate_stream *st,
			const struct vms_schema *s)
{
	genmap_free(g);
	g->plan = st->plan;
	size_t n = g->plan->ncols ? g->plan->ncols : 1;
	g->sel = malloc(n * sizeof(*g->sel));
	g->rc = malloc(n * sizeof(*g->rc));
	g->t = malloc(n * sizeof(*g->t));
	if (!g->sel || !g->rc || !g->t)
		return -ENOMEM;
	g->sch = s;
	for (uint32_t k = 0; k < g->plan->ncols; k++) {
		const struct vms_rate_col *pc = &g->plan->cols[k];
		unsigned sec, ci;
		const char *en;
		size_t el;
		if (!match(R, pc, &sec, &ci, &en, &el))
			continue;
		/* a gauge where a rate is expected (or the reverse): not ours */
		if ((sections[sec].c[ci].kind == K_RATE) ==
		    (pc->op == VMS_ROP_GAUGE || pc->op == VMS_ROP_GEXPR))
			continue;
		R->seen |= 1u << sec;
		if (!((R->mask >> sec) & 1))
			continue;
		int32_t rc = rcol_get(R, sec, ci, en, el, pc, s);
		if (rc < 0)
			return rc;
		if (!R->rcols[rc].active)
			continue;
		g->sel[g->n] = k;
		g->rc[g->n++] = (uint32_t)rc;
	}
	/* the schema columns those read: the only ones whose last values
	 * and intervals are kept */
	bool *used = calloc(s->ncols ? s->ncols : 1, sizeof(*used));
	g->in = malloc((s->ncols ? s->ncols : 1) * sizeof(*g->in));
	if (!used || !g->in) {
		free(used);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < g->n; i++)
		vms_rate_inputs(g->plan, g->sel[i], used);
	for (uint32_t i = 0; i < s->ncols; i++)
		if (used[i])
			g->in[g->nin++] = i;
	free(used);
	return 0;
}

/* ---- rows ------------------------------------------------------------------------ */

static void row_reset(struct report *R)
{
	for (uint32_t i = 0; i < R->nact; i++) {
		struct rcol *c = &R->rcols[R->act[i]];
		c->row = (struct vms_rate_term){NAN, 0};
		c->glast = NAN;
	}
	for (uint32_t e = 0; e < R->nents; e++)
		R->ents[e].present = false;
}

/* Count the buffered keys: into the log-linear histogram (the summary's
 * reading) or the linear one over [lo, hi] (the next ones). */
static void keys_flush(struct rcol *c, bool loglin)
{
	struct qstate *q = &c->q;
	if (loglin) {
		for (uint32_t i = 0; i < q->nkb; i++)
			q->h[llb(q->kb[i])]++;
	} else {
		u128 w = (u128)(q->hi - q->lo) + 1;
		for (uint32_t i = 0; i < q->nkb; i++) {
			uint64_t k = q->kb[i];
			if (k < q->lo)
				q->below++;
			else if (k <= q->hi)
				q->h[(uint32_t)((u128)(k - q->lo) * q->nb / w)]++;
		}
	}
	q->nkb = 0;
}

static void key_add(struct rcol *c, bool loglin)
{
	struct qstate *q = &c->q;
	uint64_t one;
	if (!q->kb && !(q->kb = malloc(KB_N * sizeof(*q->kb)))) {
		/* no buffer: count it now */
		one = key_of(c->v, c->scale);
		q->kb = &one;
		q->nkb = 1;
		keys_flush(c, loglin);
		q->kb = NULL;
		return;
	}
	q->kb[q->nkb++] = key_of(c->v, c->scale);
	if (q->nkb == KB_N)
		keys_flush(c, loglin);
}

static void stats_add(struct rcol *c)
{
	double v = c->v;
	if (isnan(v))
		return;
	if (!c->n || v < c->min)
		c->min = v;
	if (!c->n || v > c->max)
		c->max = v;
	c->n++;
	if (c->q.h)
		key_add(c, true);
}

static void refine_add(struct rcol *c)
{
	if (!isnan(c->v) && c->q.h)
		key_add(c, false);
}

/* Print the events read before the frame `ord` of the range: those read
 * after frame ord - 1 have ord - 1 (the first reading, which meets them
 * after that row is printed, and the next ones place them alike). */
static void events_upto(struct report *R, uint64_t ord)
{
	for (; R->ev_next < R->nev && R->evs[R->ev_next].ord < ord; R->ev_next++)
		if (R->mode == M_TEXT)
			text_event(R, &R->evs[R->ev_next]);
}

static void print_row(struct report *R, unsigned sec, const struct pos *a, const struct pos *b,
		      uint64_t ord)
{
	const struct section *S = &sections[sec];
	bool json = R->mode == M_JSON;
	if (!R->hdr) {
		if (json) {
			json_columns(R, S);
			fputs(",\"rows\":[\n", R->out);
		} else {
			text_header(R, sec, a->t_real);
		}
	}
	if (!json)
		events_upto(R, ord);
	char lab[VMS_FMT_TIME_MAX + 1];
	for (uint32_t e = 0; e < R->nents; e++) {
		struct rent *x = &R->ents[e];
		if (x->sec != sec || !x->present)
			continue;
		x->rows++;
		if (json) {
			*fmt_iso(lab, b->t_real) = '\0';
			fprintf(R->out, "%s{\"time\":\"%s\",\"t\":%.6f,\"interval_s\":%.6f,\"entity\":",
				R->hdr ? ",\n" : "", lab, ((double)b->t_mono - (double)R->t0_mono) / 1e9,
				((double)b->t_mono - (double)a->t_mono) / 1e9);
			jstr(R->out, x->name);
			fputs(",\"values\":[", R->out);
		} else {
			*fmt_clock(lab, b->t_real, R->ms) = '\0';
			text_lead(R, lab, x);
		}
		for (unsigned c = 0; c < S->ncols; c++) {
			const struct rcol *rc = x->col[c] >= 0 ? &R->rcols[x->col[c]] : NULL;
			if (json && c)
				putc(',', R->out);
			put_val(R, rc ? rc->v : NAN, rc ? rc->prec : 2, json, 9);
		}
		fputs(json ? "]}" : "\n", R->out);
		R->hdr = true;
	}
}

static double avg_value(const struct rcol *c)
{
	if (c->kind == K_RATE)
		return vms_rate_value(&c->def, &c->avg);
	return c->gn ? c->gsum / (double)c->gn : NAN;
}

/* The end of a row: frames a (start) to b (end), b the ord-th of the range. */
static void row_end(struct report *R, const struct pos *a, const struct pos *b, uint64_t ord)
{
	if (!R->ms_set) {
		R->ms = (double)(b->t_mono - a->t_mono) < 0.9995e9;
		R->ms_set = true;
	}
	if (!R->rows)
		R->first = *a;
	R->last = *b;
	R->rows++;
	for (uint32_t i = 0; i < R->nact; i++) {
		struct rcol *c = &R->rcols[R->act[i]];
		double v;
		if (c->kind == K_RATE) {
			v = vms_rate_value(&c->def, &c->row);
		} else {
			v = c->glast;
			if (c->kind == K_RUNQ && !isnan(v))
				v = v >= 1 ? v - 1 : 0; /* sar: not the process that reads it */
		}
		c->v = v;
		if (R->mode == M_REFINE) {
			refine_add(c);
			continue;
		}
		if (c->kind == K_RATE) {
			vms_rate_term_add(&c->avg, &c->row);
		} else if (!isnan(v)) {
			c->gsum += v;
			c->gn++;
		}
		if (R->mode == M_SUMMARY)
			stats_add(c);
	}
	if (R->mode == M_TEXT || R->mode == M_JSON)
		for (unsigned s = 0; s < S_N; s++)
			if ((R->mask >> s) & 1)
				print_row(R, s, a, b, ord);
	row_reset(R);
}

/* Text and JSON: the rest of the section (events after the last row, the
 * Average rows). */
static void section_end(struct report *R, unsigned sec)
{
	const struct section *S = &sections[sec];
	bool json = R->mode == M_JSON;
	if (!R->hdr)
		return;
	if (json)
		fputs("],\n\"average\":[", R->out);
	else
		events_upto(R, UINT64_MAX);
	bool first = true;
	for (uint32_t e = 0; e < R->nents; e++) {
		struct rent *x = &R->ents[e];
		if (x->sec != sec || !x->rows)
			continue;
		if (json) {
			fprintf(R->out, "%s{\"entity\":", first ? "" : ",\n");
			jstr(R->out, x->name);
			fprintf(R->out, ",\"rows\":%llu,\"values\":[", (unsigned long long)x->rows);
		} else {
			text_lead(R, "Average:", x);
		}
		first = false;
		for (unsigned c = 0; c < S->ncols; c++) {
			const struct rcol *rc = x->col[c] >= 0 ? &R->rcols[x->col[c]] : NULL;
			if (json && c)
				putc(',', R->out);
			put_val(R, rc ? avg_value(rc) : NAN, rc ? rc->prec : 2, json, 9);
		}
		fputs(json ? "]}" : "\n", R->out);
	}
	if (json)
		fputs("]}", R->out);
}

/* ---- one reading of the input ---------------------------------------------------- */

static void add_event(struct report *R, const struct vms_event *e, uint64_t ord)
{
	uint32_t cap = (uint32_t)R->capev;
	struct ev *n = grow(R->evs, &cap, (uint32_t)R->nev, sizeof(*n));
	if (!n)
		return; /* an event less: said nowhere, but memory is gone anyway */
	R->evs = n;
	R->capev = cap;
	R->evs[R->nev++] = (struct ev){*e, ord};
}

static void pos_of(struct pos *p, const struct vms_frame *f)
{
	p->t_mono = f->t_mono_ns;
	p->t_real = f->t_real_ns;
}

/* Read the input once: rows of the sections in mask.  0, or -errno with
 * R->err set (the first reading: it is the report's failure). */
static int run_pass(struct report *R, enum mode mode, unsigned mask)
{
	struct vms_reader *rd;
	int r = R->mem ? vms_reader_open_mem(&rd, R->mem, R->memlen, 0) : vms_reader_open(&rd, R->in, 0);
	bool first = R->npass++ == 0;
	if (r < 0) {
		snprintf(R->err, sizeof(R->err), "%s", vms_reader_error(rd));
		vms_reader_close(rd);
		return r;
	}
	vms_rdr_want_events(rd, first);
	R->mode = mode;
	R->mask = mask;
	R->rows = 0;
	R->ev_next = 0;
	R->hdr = false;
	R->nact = 0;
	if (R->nrc > R->capact) {
		uint32_t *a = realloc(R->act, R->nrc * sizeof(*a));
		if (!a) {
			vms_reader_close(rd);
			snprintf(R->err, sizeof(R->err), "%s", strerror(ENOMEM));
			return -ENOMEM;
		}
		R->act = a;
		R->capact = R->nrc;
	}
	for (uint32_t i = 0; i < R->nrc; i++) {
		struct rcol *c = &R->rcols[i];
		c->active = ((mask >> R->ents[c->ent].sec) & 1) && (mode != M_REFINE || (c->q.h && !c->q.done));
		if (c->active)
			R->act[R->nact++] = i;
		c->q.below = 0;
		if (mode == M_REFINE)
			continue; /* the first reading's averages stay */
		c->avg = (struct vms_rate_term){NAN, 0};
		c->gsum = 0;
		c->gn = 0;
	}
	for (uint32_t e = 0; e < R->nents; e++)
		R->ents[e].rows = 0;
	row_reset(R);

	struct genmap gm = {0};
	struct vms_rate_stream st = {0};
	struct pos start = {0}, cur;
	bool base = false;
	uint64_t streams = 1, nf = 0, ord = 0;
	while (!(R->counted && nf >= R->nframes) && (r = vms_reader_next(rd)) > 0) {
		if (r == 2) {
			if (base)
				add_event(R, vms_rdr_event(rd), ord);
			continue;
		}
		nf++;
		const struct vms_frame *f = vms_reader_frame(rd);
		const struct vms_schema *s = vms_rdr_schema(rd);
		if (vms_rdr_streams(rd) > streams) {
			/* a new stream (the sampler started again): no interval
			 * across; a row begun before it ends there */
			streams = vms_rdr_streams(rd);
			if (base && ord > 0 && cur.t_mono != start.t_mono)
				row_end(R, &start, &cur, ord);
			base = false;
		}
		if (!R->t0_set) {
			R->t0_set = true;
			R->t0_mono = f->t_mono_ns;
			R->t0_real = f->t_real_ns;
			vms_report_resolve_tod(&R->from, f->t_real_ns);
			vms_report_resolve_tod(&R->to, f->t_real_ns);
		}
		int w = in_range(R, f);
		if (w < 0)
			continue;
		if (w > 0)
			break;
		if ((r = vms_rate_stream_schema(&st, s)) > 0 && (r = genmap_build(R, &gm, &st, s)) == 0) {
			st.in = gm.in;
			st.nin = gm.nin;
		}
		if (r < 0)
			break;
		if (!base)
			vms_rate_stream_restart(&st);
		if ((r = vms_rate_stream_terms(&st, f, gm.sel, gm.n, gm.t)) < 0)
			break;
		if (!base) {
			pos_of(&start, f);
			cur = start;
			base = true;
			row_reset(R);
			continue;
		}
		ord++;
		for (uint32_t i = 0; i < gm.n; i++) {
			struct rcol *c = &R->rcols[gm.rc[i]];
			R->ents[c->ent].present = true;
			if (c->kind == K_RATE)
				vms_rate_term_add(&c->row, &gm.t[i]);
			else if (!isnan(gm.t[i].n))
				c->glast = gm.t[i].n;
		}
		double dt = ((double)f->t_mono_ns - (double)cur.t_mono) / 1e9;
		pos_of(&cur, f);
		double el = ((double)cur.t_mono - (double)start.t_mono) / 1e9;
		if (R->interval <= 0 || el + dt / 2 >= R->interval) {
			row_end(R, &start, &cur, ord);
			start = cur;
		}
		if (R->out && ferror(R->out)) {
			R->oerr = true;
			R->oerrno = errno;
			break;
		}
	}
	if (r < 0 && first) {
		if (r == -ESRCH)
			snprintf(R->warn, sizeof(R->warn), "%s: %s", R->in, vms_reader_error(rd));
		else
			snprintf(R->err, sizeof(R->err), "%s: %s; the report covers the frames before it", R->in,
				 r == -ENOMEM ? strerror(ENOMEM) : vms_reader_error(rd));
	} else if (first && vms_reader_error(rd)[0]) {
		snprintf(R->warn, sizeof(R->warn), "%s: %s", R->in, vms_reader_error(rd)); /* a torn tail */
	}
	if (first) {
		R->nframes = nf;
		R->counted = true;
	}
	for (uint32_t i = 0; i < R->nact; i++) {
		struct rcol *c = &R->rcols[R->act[i]];
		if (c->q.h && c->q.nkb)
			keys_flush(c, mode == M_SUMMARY);
	}
	vms_rate_stream_free(&st);
	genmap_free(&gm);
	vms_reader_close(rd);
	return r < 0 && r != -ESRCH ? r : 0;
}

/* ---- the input ------------------------------------------------------------------------ */

static int slurp_fd(struct report *R, int fd)
{
	size_t cap = 1 << 16, len = 0;
	uint8_t *b = malloc(cap);
	if (!b)
		return -ENOMEM;
	for (;;) {
		if (len == cap) {
			uint8_t *n = realloc(b, cap * 2);
			if (!n) {
				free(b);
				return -ENOMEM;
			}
			b = n;
			cap *= 2;
		}
		ssize_t n = read(fd, b + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = -errno;
			free(b);
			return e;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	R->mem = b;
	R->memlen = len;
	return 0;
}

static int mem_reserve(struct report *R, size_t *cap, size_t need)
{
	if (R->memlen + need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 1 << 16;
	while (c < R->memlen + need)
		c *= 2;
	uint8_t *n = realloc(R->mem, c);
	if (!n)
		return -ENOMEM;
	R->mem = n;
	*cap = c;
	return 0;
}

/* The frames a ring holds now, as a binary stream in memory. */
static int capture_ring(struct report *R, struct vms_reader *rd)
{
	size_t cap = 0;
	uint64_t *prev = NULL;
	const struct vms_schema *cur = NULL;
	int r = mem_reserve(R, &cap, VMS_FMT_HEADER_SIZE);
	if (r < 0)
		return r;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	R->memlen += vms_bin_header_enc(R->mem, (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec);
	while ((r = vms_reader_next(rd)) > 0) {
		const struct vms_schema *s = vms_rdr_schema(rd);
		const struct vms_frame *f = vms_reader_frame(rd);
		bool key = false, kf;
		if (s != cur) {
			if ((r = mem_reserve(R, &cap, vms_bin_schema_size(s))) < 0)
				break;
			R->memlen += vms_bin_schema_enc(R->mem + R->memlen, s);
			free(prev);
			prev = calloc(s->ncols ? s->ncols : 1, sizeof(*prev));
			if (!prev) {
				r = -ENOMEM;
				break;
			}
			cur = s;
			key = true;
		}
		if ((r = mem_reserve(R, &cap, vms_bin_data_max(f->ncols))) < 0)
			break;
		R->memlen += vms_bin_data_enc(R->mem + R->memlen, f, prev, key, &kf);
	}
	free(prev);
	if (r == -ESRCH || (r == 0 && vms_reader_error(rd)[0]))
		snprintf(R->warn, sizeof(R->warn), "%s: %s", R->in, vms_reader_error(rd));
	else if (r < 0)
		snprintf(R->err, sizeof(R->err), "%s: %s", R->in,
			 r == -ENOMEM ? strerror(ENOMEM) : vms_reader_error(rd));
	return r == -ESRCH ? 0 : r;
}

/* Decide how the input is read again: reopened (a regular file) or a
 * copy in memory. */
static int open_input(struct report *R)
{
	struct stat st;
	if (!R->ring && (strcmp(R->in, "-") == 0 || (stat(R->in, &st) == 0 && !S_ISREG(st.st_mode)))) {
		int fd = strcmp(R->in, "-") == 0 ? STDIN_FILENO : open(R->in, O_RDONLY | O_CLOEXEC);
		int r = fd < 0 ? -errno : slurp_fd(R, fd);
		if (fd > STDIN_FILENO)
			close(fd);
		if (r < 0)
			snprintf(R->err, sizeof(R->err), "%s: %s", R->in, strerror(-r));
		return r;
	}
	struct vms_reader *rd;
	int r = vms_reader_open(&rd, R->in, 0);
	if (r < 0) {
		snprintf(R->err, sizeof(R->err), "%s", vms_reader_error(rd));
	} else if (vms_reader_kind(rd) == VMS_READER_RING) {
		r = capture_ring(R, rd);
	} else if (R->ring) {
		snprintf(R->err, sizeof(R->err), "%s: not a vmsampler ring (a binary stream: give it without --ring)",
			 R->in);
		r = -EINVAL;
	}
	vms_reader_close(rd);
	return r;
}

/* ---- summary ---------------------------------------------------------------------- */

/* After a reading: the bucket that holds each unresolved p95; true while
 * some p95 is still a range of keys. */
static bool refine_step(struct report *R, bool loglin)
{
	bool more = false;
	for (uint32_t i = 0; i < R->nrc; i++) {
		struct rcol *c = &R->rcols[i];
		struct qstate *q = &c->q;
		if (!q->h || q->done)
			continue;
		uint64_t cum = loglin ? 0 : q->below;
		uint32_t nb = loglin ? LLB_N : q->nb, b;
		for (b = 0; b < nb && cum + q->h[b] < q->rank; b++)
			cum += q->h[b];
		if (b == nb) {
			/* the rows changed between readings: cannot happen with
			 * the same input; settle for the top of the range */
			q->lo = q->hi;
		} else if (loglin) {
			llb_range(b, &q->lo, &q->hi);
		} else {
			u128 w = (u128)(q->hi - q->lo) + 1;
			uint64_t lo = q->lo + (uint64_t)((w * b + nb - 1) / nb);
			uint64_t hi = q->lo + (uint64_t)((w * (b + 1) + nb - 1) / nb) - 1;
			q->lo = lo;
			q->hi = hi;
		}
		free(q->h);
		q->h = NULL;
		if (q->lo == q->hi)
			q->done = true;
		else
			more = true;
	}
	return more;
}

/* Buckets for the next reading over each unresolved range. */
static int refine_alloc(struct report *R)
{
	uint32_t open = 0;
	for (uint32_t i = 0; i < R->nrc; i++)
		open += R->rcols[i].n && !R->rcols[i].q.done;
	uint32_t per = open ? QBUDGET / open : 0;
	if (per < 4096)
		per = 4096;
	for (uint32_t i = 0; i < R->nrc; i++) {
		struct qstate *q = &R->rcols[i].q;
		if (!R->rcols[i].n || q->done)
			continue;
		uint64_t w = q->hi - q->lo + 1;
		q->nb = w < per ? (uint32_t)w : per;
		q->h = calloc(q->nb, sizeof(*q->h));
		if (!q->h)
			return -ENOMEM;
	}
	return 0;
}

static int summarize(struct report *R)
{
	/* min, max, the averages and a log-linear histogram of each column */
	int r = run_pass(R, M_SUMMARY, R->only);
	if (r < 0 || R->oerr)
		return r;
	for (uint32_t i = 0; i < R->nrc; i++) {
		struct rcol *c = &R->rcols[i];
		c->q.rank = (c->n * 95 + 99) / 100;
		c->q.done = !c->n;
		if (!c->n) {
			free(c->q.h);
			c->q.h = NULL;
		}
	}
	/* then linear histograms over the p95's bucket, until one key */
	bool more = refine_step(R, true);
	for (unsigned k = 0; more && k < QPASSES; k++) {
		if ((r = refine_alloc(R)) < 0 || (r = run_pass(R, M_REFINE, R->only)) < 0)
			return r;
		more = refine_step(R, false);
	}
	return 0;
}

static void summary_line(struct report *R, const struct rent *x, const char *stat, bool json)
{
	const struct section *S = sec_of(x);
	if (json)
		fprintf(R->out, ",\"%s\":[", stat);
	else
		text_lead(R, stat, x);
	for (unsigned c = 0; c < S->ncols; c++) {
		const struct rcol *rc = x->col[c] >= 0 ? &R->rcols[x->col[c]] : NULL;
		if (json && c)
			putc(',', R->out);
		if (!rc || !rc->n) {
			put_val(R, NAN, 2, json, 9);
			continue;
		}
		double v = NAN;
		if (stat[1] == 'i')
			v = rc->min;
		else if (stat[1] == 'a')
			v = rc->max;
		else if (stat[1] == 'v')
			v = avg_value(rc);
		if (stat[0] != 'p') {
			put_val(R, v, rc->prec, json, 9);
			continue;
		}
		char b[48];
		*fmt_key(b, rc->q.lo, rc->prec) = '\0';
		if (json)
			fputs(b, R->out);
		else
			fprintf(R->out, " %9s", b);
	}
	fputs(json ? "]" : "\n", R->out);
}

static void print_summary(struct report *R)
{
	static const char *const stats[] = {"min", "avg", "max", "p95"};
	bool json = R->mode == M_JSON;
	for (unsigned s = 0; s < S_N; s++) {
		const struct section *S = &sections[s];
		bool any = false;
		for (uint32_t e = 0; e < R->nents; e++) {
			struct rent *x = &R->ents[e];
			bool has = false;
			for (unsigned c = 0; c < S->ncols && x->sec == s; c++)
				has |= x->col[c] >= 0 && R->rcols[x->col[c]].n > 0;
			if (!has)
				continue;
			if (!any) {
				if (json) {
					json_columns(R, S);
					fputs(",\"summary\":[\n", R->out);
				} else {
					fprintf(R->out, "\n%-*s", R->ms ? 13 : 11, "Summary:");
					if (S->entcol)
						fprintf(R->out, " %9s", S->entcol);
					for (unsigned c = 0; c < S->ncols; c++)
						fprintf(R->out, " %9s", S->c[c].label);
					putc('\n', R->out);
				}
			}
			uint64_t rows = 0;
			for (unsigned c = 0; c < S->ncols; c++)
				if (x->col[c] >= 0 && R->rcols[x->col[c]].n > rows)
					rows = R->rcols[x->col[c]].n;
			if (json) {
				fprintf(R->out, "%s{\"entity\":", any ? ",\n" : "");
				jstr(R->out, x->name);
				fprintf(R->out, ",\"rows\":%llu", (unsigned long long)rows);
			}
			for (unsigned k = 0; k < 4; k++)
				summary_line(R, x, stats[k], json);
			if (json)
				putc('}', R->out);
			any = true;
		}
		if (any && json)
			fputs("]}", R->out);
	}
}

/* ---- main ------------------------------------------------------------------------- */

static int parse_interval(const char *s, double *v)
{
	const char *e;
	if (parse_num(s, v, &e) < 0)
		return -EINVAL;
	if (strcmp(e, "m") == 0 || strcmp(e, "min") == 0)
		*v *= 60;
	else if (strcmp(e, "h") == 0)
		*v *= 3600;
	else if (*e && strcmp(e, "s") != 0)
		return -EINVAL;
	return *v > 0 && *v <= 366 * 86400.0 ? 0 : -EINVAL;
}

/* sar's section flags: the section (-1: not one, -2: -n other than DEV) */
static int sar_section(int c, const char *arg)
{
	switch (c) {
	case 'u':
		return S_CPU;
	case 'q':
		return S_QUEUE;
	case 'w':
	case 'I':
		return S_TASK; /* proc/s and cswch/s (-w), intr/s (-I SUM) */
	case 'd':
		return S_DISK;
	case 'n':
		return strcmp(arg, "DEV") == 0 ? S_NET : -2;
	case 'r':
		return S_MEMORY;
	case 'W':
		return S_SWAPPING;
	case 'B':
		return S_PAGING;
	default:
		return -1;
	}
}

/* --section cpu,disk,...: the sections' JSON names */
static int parse_sections(const char *list, struct report *R)
{
	const char *p = list;
	while (*p) {
		size_t n = strcspn(p, ",");
		unsigned s;
		for (s = 0; s < S_N; s++)
			if (strlen(sections[s].id) == n && strncmp(p, sections[s].id, n) == 0)
				break;
		if (s == S_N)
			return -EINVAL;
		R->only |= 1u << s;
		if (s == S_VM)
			R->vm = true;
		p += n;
		if (*p == ',' && *++p == '\0')
			return -EINVAL;
	}
	return p == list ? -EINVAL : 0;
}

static void report_free(struct report *R)
{
	for (uint32_t e = 0; e < R->nents; e++)
		free(R->ents[e].name);
	for (uint32_t i = 0; i < R->nrc; i++) {
		free(R->rcols[i].q.h);
		free(R->rcols[i].q.kb);
	}
	free(R->ents);
	free(R->rcols);
	free(R->act);
	free(R->evs);
	free(R->mem);
}

static void title(struct report *R)
{
	char d[VMS_FMT_TIME_MAX + 1], e[VMS_FMT_TIME_MAX + 1];
	R->titled = true;
	*fmt_iso(d, R->first.t_real) = '\0';
	*fmt_iso(e, R->last.t_real) = '\0';
	if (R->mode == M_JSON) {
		fputs("{\"source\":", R->out);
		jstr(R->out, R->in);
		fprintf(R->out, ",\"interval_s\":");
		if (R->interval > 0)
			fprintf(R->out, "%g", R->interval);
		else
			fputs("null", R->out);
		fputs(",\"sections\":[\n", R->out);
		return;
	}
	fprintf(R->out, "vmsampler report  %s  %.10s", R->in, R->rows || !R->summary ? d : "");
	if (R->summary && R->rows)
		fprintf(R->out, "  %llu rows from %.19s to %.19s", (unsigned long long)R->rows, d, e);
	putc('\n', R->out);
}

static void json_tail(struct report *R)
{
	char d[VMS_FMT_TIME_MAX + 1], e[VMS_FMT_TIME_MAX + 1];
	fputs("],\n\"events\":[", R->out);
	for (size_t i = 0; i < R->nev; i++)
		json_event(R, &R->evs[i], i == 0);
	fprintf(R->out, "],\n\"rows\":%llu,\"first\":", (unsigned long long)R->rows);
	if (R->rows) {
		*fmt_iso(d, R->first.t_real) = '\0';
		*fmt_iso(e, R->last.t_real) = '\0';
		fprintf(R->out, "\"%s\",\"last\":\"%s\"", d, e);
	} else {
		fputs("null,\"last\":null", R->out);
	}
	fputs(",\"error\":", R->out);
	if (R->err[0])
		jstr(R->out, R->err);
	else
		fputs("null", R->out);
	fputs("}\n", R->out);
}

int vms_report_main(int argc, char **argv)
{
	struct report R = {.out = stdout};
	const char *file = NULL;
	const char *ring = NULL;
	const struct vms_tool_opt opts[] = {
		{"interval", required_argument, 'i', NULL, NULL},
		{"from", required_argument, 'F', NULL, NULL},
		{"to", required_argument, 'T', NULL, NULL},
		{"summary", no_argument, 'S', NULL, &R.summary},
		{"vm", no_argument, 'V', NULL, &R.vm},
		{"json", no_argument, 'j', NULL, &R.json},
		{"ring", required_argument, 'R', &ring, NULL},
		{"section", required_argument, 'X', NULL, NULL},
		{"cpu", required_argument, 'P', NULL, NULL},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char *const help[] = {usage_text, NULL};
	struct vms_tool_cmd cmd = {.tool = "report", .shortopts = ":i:hf:s:e:P:uqwIdn:rWB", .opts = opts, .help = help};
	int c;

	if (vms_compare_wanted(argc, argv))
		return vms_compare_main(argc, argv);

	while ((c = vms_tool_next(&cmd, argc, argv)) > 0) {
		int sec = sar_section(c, optarg);
		if (sec >= 0) {
			R.only |= 1u << sec;
			if (sec == S_VM)
				R.vm = true;
			continue;
		}
		if (sec == -2)
			return vms_tool_usage("report", "-n shows DEV only (the interfaces)", optarg);
		switch (c) {
		case 'X':
			if (parse_sections(optarg, &R) < 0)
				return vms_tool_usage("report", "--section wants a list of cpu, queue, task, disk, net, paging, swapping, memory, swapspace, pressure, vm",
						   optarg);
			break;
		case 'P':
			if (strcmp(optarg, "ALL") != 0 && strcmp(optarg, "all") != 0 &&
			    strspn(optarg, "0123456789") != strlen(optarg))
				return vms_tool_usage("report", "-P wants ALL or a CPU number", optarg);
			R.cpus = optarg;
			break;
		case 'f':
			if (file)
				return vms_tool_usage("report", "-f given twice", optarg);
			file = optarg;
			break;
		case 'i':
			if (parse_interval(optarg, &R.interval) < 0)
				return vms_tool_usage("report", "--interval wants a positive number of seconds (or with a unit s, m, h)",
						   optarg);
			break;
		case 's':
		case 'e':
			/* sar's -s and -e: --from and --to */
			c = c == 's' ? 'F' : 'T';
			/* fall through */
		case 'F':
		case 'T':
			if (vms_report_parse_time(optarg, c == 'F' ? &R.from : &R.to) < 0)
				return vms_tool_usage("report", c == 'F' ? "bad --from time" : "bad --to time", optarg);
			break;
		}
	}
	if (c < 0)
		return cmd.rc;
	if (file && optind < argc)
		return vms_tool_usage("report", "more than one FILE", NULL);
	if (ring && (optind < argc || file))
		return vms_tool_usage("report", "give either --ring PATH or a FILE, not both", NULL);
	if (!ring && !file && optind != argc - 1)
		return vms_tool_usage("report", optind == argc ? "missing FILE" : "more than one FILE", NULL);
	if (!R.only)
		R.only = (1u << S_N) - 1;
	if (R.from.kind == R.to.kind && R.from.kind != VMS_T_NONE && R.from.kind != VMS_T_TOD &&
	    (R.from.kind == VMS_T_REL ? R.from.rel > R.to.rel : R.from.abs_ns > R.to.abs_ns))
		return vms_tool_usage("report", "--from is after --to", NULL);
	if (R.from.kind == VMS_T_TOD && R.to.kind == VMS_T_TOD && R.from.tod > R.to.tod)
		return vms_tool_usage("report", "--from is after --to", NULL);
	R.in = ring ? ring : file ? file : argv[optind];
	R.ring = ring != NULL;

	signal(SIGPIPE, SIG_IGN);
	static char obuf[1 << 16];
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	int rc = 0, r = open_input(&R);
	if (r < 0) {
		vms_err("%s", R.err);
		report_free(&R);
		return 1;
	}
	if (R.summary) {
		r = summarize(&R);
		if (r < 0 && !R.err[0])
			snprintf(R.err, sizeof(R.err), "%s: %s", R.in, strerror(-r));
		R.mode = R.json ? M_JSON : M_TEXT;
		title(&R);
		if (!R.oerr)
			print_summary(&R);
		if (R.json)
			json_tail(&R);
		else if (R.nev)
			fputs("\nEvents:\n", R.out);
		for (size_t i = 0; !R.json && i < R.nev; i++)
			text_event(&R, &R.evs[i]);
	} else {
		/* one reading per section, in sar's order; the first one also
		 * learns which sections have columns */
		enum mode m = R.json ? M_JSON : M_TEXT;
		R.mode = m;
		R.seen = R.only & -R.only; /* the first section asked for: its reading learns the others */
		if (R.json)
			title(&R);
		for (unsigned s = 0; s < S_N && !R.oerr; s++) {
			if (!((R.seen >> s) & 1) || (s == S_VM && !R.vm) || !((R.only >> s) & 1))
				continue;
			r = run_pass(&R, m, 1u << s);
			if (r < 0 && R.npass == 1 && !R.rows)
				break;
			section_end(&R, s);
		}
		if (R.json)
			json_tail(&R);
	}
	if (fflush(R.out) == EOF || ferror(R.out)) {
		int e = R.oerr ? R.oerrno : errno;
		if (e != EPIPE) {
			vms_err("output: %s", strerror(e));
			rc = 1;
		}
	}
	if (R.err[0] && !R.oerr) {
		vms_err("%s", R.err);
		rc = 1;
	} else if (R.warn[0]) {
		vms_warn("%s", R.warn);
	}
	if (!R.rows && !R.err[0])
		vms_warn("%s: no row to report (%llu frames read%s)", R.in, (unsigned long long)R.nframes,
			 R.interval > 0 || R.from.kind || R.to.kind ? ", in the time and interval asked" : "");
	report_free(&R);
	return rc;
}
