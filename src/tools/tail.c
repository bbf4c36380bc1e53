/* SPDX-License-Identifier: MIT */
#include "tail.h"
#include "events.h"

#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "csv.h"
#include "catalog.h"
#include "lineproto.h"
#include "log.h"
#include "rates.h"
#include "reader_int.h"
#include "ring.h"
#include "tool.h"

static const char usage_text[] =
	"Usage: vmsampler tail RING|FILE.vms [--columns=GLOBS] [--rates | --events]\n"
	"                      [--format=csv|influx|json] [--host=NAME]\n"
	"                      [-n N] [--new] [--no-follow]\n"
	"Print the frames of a live ring (vmsampler --ring PATH) or of a binary stream\n"
	"that is still being written as CSV, as they come, until SIGINT.  A file is\n"
	"followed by name like tail -F: into the next file of a rotation, the new file\n"
	"at its path, from its start when a new run rewrote it.\n"
	"\n"
	"  -F, --format=FMT     csv (default); influx: InfluxDB line protocol, one\n"
	"                       line per measurement and tag set per frame (cpu, disk,\n"
	"                       net, vm, vm_vcpu, ... and vmsampler, the frame's own\n"
	"                       fields; integers as NNNi, ns timestamps, a missing\n"
	"                       value an absent field); json (or jsonl): one JSON\n"
	"                       object per frame, the columns as members, a missing\n"
	"                       value an absent member; reader_lost counts the\n"
	"                       frames this reader lost before each one\n"
	"      --host=NAME      the host tag of --format influx (default: the\n"
	"                       hostname the input recorded, vmsampler dump --info;\n"
	"                       without one, this machine's; '' for none; no\n"
	"                       backslash)\n"
	"  -c, --columns=GLOBS  only the columns matching these comma-separated\n"
	"                       fnmatch patterns, e.g. 'cpu.all.*,vm.*.cpu_time'\n"
	"  -r, --rates          per-interval rates (as dump --rates) instead of the\n"
	"                       raw counters; GLOBS then select rate columns\n"
	"  -e, --events         the events instead of the frames (VM lifecycle, sources\n"
	"                       failing, markers from vmsampler mark), as dump --events\n"
	"                       prints them, each before the frame it belongs before\n"
	"  -n, --count=N        stop after N rows\n"
	"      --new            start with the next frame (default: the frames the\n"
	"                       ring or file already holds come first)\n"
	"      --no-follow      print what is there now and exit\n"
	"  -h, --help           show this help\n"
	"\n"
	"Exit status: 0 stopped (SIGINT, SIGTERM, -n, the end with --no-follow, or the\n"
	"writer exited cleanly), 1 the writer died or stopped responding, damaged\n"
	"input or an I/O error, 2 usage or configuration error: a bad option, a\n"
	"RING or FILE that is missing or not a vmsampler ring or stream.  See\n"
	"vmsampler(1).\n";

#define RATES_META "seq,time,t_mono_ns,interval_s,rate_flags"
#define RATE_DIGITS 2

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

enum { FMT_CSV, FMT_INFLUX, FMT_JSON };

struct tail {
	struct vms_reader *rd;
	const char *globs;
	bool rates;
	int fmt;               /* FMT_* */
	const char *host;      /* influx's host tag */
	bool host_recorded;    /* host: the input's recorded hostname (no --host) */
	char hostbuf[256];
	struct vms_lp *lp;     /* influx/json: the layout of the selected columns */
	struct vms_lp_val *vals;
	uint64_t missed;       /* vms_reader_missed() at the last row */
	uint32_t *sel;         /* selected columns (raw or rate indices) */
	uint32_t nsel, capsel;
	char *header;          /* the last header printed */
	char *row;
	size_t rowcap;
};

static int select_lp(struct tail *t);

/* t->row holds at least rowcap bytes: 0 or -ENOMEM */
static int row_room(struct tail *t, size_t rowcap)
{
	if (rowcap <= t->rowcap)
		return 0;
	char *r = realloc(t->row, rowcap);
	if (!r)
		return -ENOMEM;
	t->row = r;
	t->rowcap = rowcap;
	return 0;
}

/* Select the columns of the current schema and print a header if it
 * differs from the last one (CSV), or make the layout of the other
 * formats. */
static int select_columns(struct tail *t)
{
	struct vms_reader *rd = t->rd;
	uint32_t n = t->rates ? vms_reader_nrates(rd) : vms_reader_ncols(rd);
	if (n > t->capsel) {
		uint32_t *s = realloc(t->sel, n * sizeof(*s));
		if (!s)
			return -ENOMEM;
		t->sel = s;
		t->capsel = n;
	}
	if (t->globs) {
		int k = t->rates ? vms_reader_rates_match(rd, t->globs, t->sel, t->capsel)
				 : vms_reader_columns_match(rd, t->globs, t->sel, t->capsel);
		t->nsel = (uint32_t)k;
	} else {
		for (uint32_t i = 0; i < n; i++)
			t->sel[i] = i;
		t->nsel = n;
	}
	if (t->fmt != FMT_CSV)
		return select_lp(t);
	size_t need = 64 + sizeof(VMS_CSV_META);
	for (uint32_t i = 0; i < t->nsel; i++) {
		struct vms_reader_col c = {0};
		const char *name = t->rates ? vms_reader_rate_name(rd, t->sel[i])
					    : (vms_reader_col_info(rd, t->sel[i], &c), c.name);
		need += vms_csv_field_max(name) + 1;
	}
	char *h = malloc(need), *p = h;
	if (!h)
		return -ENOMEM;
	const char *meta = t->rates ? RATES_META : VMS_CSV_META;
	memcpy(p, meta, strlen(meta));
	p += strlen(meta);
	for (uint32_t i = 0; i < t->nsel; i++) {
		struct vms_reader_col c = {0};
		const char *name = t->rates ? vms_reader_rate_name(rd, t->sel[i])
					    : (vms_reader_col_info(rd, t->sel[i], &c), c.name);
		*p++ = ',';
		p = vms_csv_field(p, name);
	}
	*p = '\0';
	if (!t->header || strcmp(t->header, h) != 0) {
		fprintf(stdout, "%s\r\n", h);
		free(t->header);
		t->header = h;
	} else {
		free(h);
	}
	return row_room(t, VMS_CSV_META_MAX + 64 + (size_t)t->nsel * (VMS_CSV_VALUE_MAX + 40));
}

/* influx's host tag without --host: the hostname the input recorded (its
 * HOST record precedes each schema), or this machine's when it has none
 * (said once) */
static void recorded_host(struct tail *t)
{
	const char *h = vms_reader_host(t->rd, "hostname");
	bool local = !h || !*h;
	if (local) {
		if (t->host == t->hostbuf)
			return; /* this machine's, said already */
		if (gethostname(t->hostbuf, sizeof(t->hostbuf) - 1) != 0)
			t->hostbuf[0] = '\0';
		vms_info("the input records no hostname (a vmsampler older than format 1.1): host tag \"%s\", "
			 "this machine's (see --host)", t->hostbuf);
	} else {
		snprintf(t->hostbuf, sizeof(t->hostbuf), "%s", h);
	}
	t->host = t->hostbuf;
	if (!vms_lp_name_ok(t->host)) {
		vms_warn("the hostname holds a backslash or a control character: no host tag (see --host)");
		t->host = NULL;
	}
}

/* The line-protocol or JSON layout of the selected columns. */
static int select_lp(struct tail *t)
{
	struct vms_reader *rd = t->rd;
	const char **names = calloc(t->nsel ? t->nsel : 1, sizeof(*names));
	const char **keys = calloc(t->nsel ? t->nsel : 1, sizeof(*keys));
	struct vms_colid *ids = calloc(t->nsel ? t->nsel : 1, sizeof(*ids));
	struct vms_lp_val *vals = realloc(t->vals, (t->nsel ? t->nsel : 1) * sizeof(*vals));
	int r = -ENOMEM;
	if (vals)
		t->vals = vals;
	if (names && keys && ids && vals) {
		for (uint32_t i = 0; i < t->nsel; i++) {
			if (t->rates) {
				/* a rate column's identity: its inputs', and what it is */
				const struct vms_rate_col *c = vms_rdr_rate_col(rd, t->sel[i]);
				names[i] = c->name;
				keys[i] = "";
				ids[i] = (struct vms_colid){c->group, VMS_FIELD_OPEN, c->entity, c->sub, c->out};
			} else {
				const struct vms_col *c = &vms_rdr_schema(rd)->cols[t->sel[i]];
				names[i] = c->name;
				keys[i] = c->key;
				ids[i] = (struct vms_colid){c->group, c->field_id, c->entity, c->sub, c->field};
			}
		}
		vms_lp_free(t->lp);
		t->lp = NULL;
		if (t->host_recorded)
			recorded_host(t);
		r = vms_lp_new(&t->lp, t->fmt == FMT_INFLUX ? VMS_LP_INFLUX : VMS_LP_JSON, t->nsel, names, ids, keys,
			       t->host);
	}
	free(names);
	free(keys);
	free(ids);
	if (r < 0)
		return r;
	if (vms_lp_skipped(t->lp))
		vms_warn("%u columns left out: their names hold a backslash or a control character, which line protocol cannot carry",
			 vms_lp_skipped(t->lp));
	return row_room(t, vms_lp_max(t->lp, 2));
}

/* The current frame as line protocol or JSON; 0 if it has none (the
 * first frame with --rates), 1 if printed. */
static int print_lp(struct tail *t)
{
	struct vms_reader *rd = t->rd;
	const struct vms_frame *f = vms_reader_frame(rd);
	static const char *const extra_name[] = {"interval_s", "rate_flags"};
	struct vms_lp_val extra[2];
	struct vms_lp_meta m = {
		.seq = f->seq,
		.t_wall_ns = f->t_real_ns,
		.t_mono_ns = f->t_mono_ns,
		.gen = f->gen,
		.flags = f->flags,
		.missed_ticks = f->missed_ticks,
		.lost_frames = f->lost_frames,
		.late_ns = f->late_ns,
		.self_cpu_ns = f->self_cpu_ns,
	};
	if (t->rates) {
		double dt = vms_reader_rate_interval(rd);
		if (dt <= 0)
			return 0;
		extra[0] = (struct vms_lp_val){.type = VMS_LP_DOUBLE, .d = dt};
		extra[1] = (struct vms_lp_val){.type = VMS_LP_UINT, .u = vms_reader_rate_flags(rd)};
		m.nextra = 2;
		m.extra_name = extra_name;
		m.extra = extra;
		for (uint32_t i = 0; i < t->nsel; i++) {
			double v;
			t->vals[i] = vms_reader_rate(rd, t->sel[i], &v) == 0
					     ? (struct vms_lp_val){.type = VMS_LP_DOUBLE, .d = v}
					     : (struct vms_lp_val){.type = VMS_LP_NONE};
		}
	} else {
		const struct vms_schema *s = vms_rdr_schema(rd);
		for (uint32_t i = 0; i < t->nsel; i++) {
			uint64_t v = f->v[t->sel[i]];
			int scale = s->cols[t->sel[i]].scale;
			t->vals[i] = v == VMS_NONE ? (struct vms_lp_val){.type = VMS_LP_NONE}
				     : scale > 0   ? (struct vms_lp_val){.type = VMS_LP_FIXED, .scale = (int8_t)scale, .u = v}
						   : (struct vms_lp_val){.type = VMS_LP_UINT, .u = v};
		}
	}
	uint64_t missed = vms_reader_missed(rd);
	m.reader_lost = missed - t->missed;
	t->missed = missed;
	char *end = vms_lp_frame(t->lp, t->row, &m, t->vals);
	fwrite(t->row, 1, (size_t)(end - t->row), stdout);
	return 1;
}

/* One row for the current frame; 0 if it has none (the first frame with
 * --rates), 1 if printed. */
static int print_row(struct tail *t)
{
	struct vms_reader *rd = t->rd;
	const struct vms_frame *f = vms_reader_frame(rd);
	char *p = t->row;
	if (t->fmt != FMT_CSV)
		return print_lp(t);
	if (t->rates) {
		double dt = vms_reader_rate_interval(rd);
		if (dt <= 0)
			return 0; /* an interval needs two frames */
		p = vms_fmt_u64(p, f->seq);
		*p++ = ',';
		p = vms_fmt_time(p, f->t_real_ns, vms_local_gmtoff(f->t_real_ns));
		*p++ = ',';
		p = vms_fmt_u64(p, f->t_mono_ns);
		*p++ = ',';
		p = vms_fmt_double(p, dt, 6);
		*p++ = ',';
		p = vms_fmt_u64(p, vms_reader_rate_flags(rd));
		for (uint32_t i = 0; i < t->nsel; i++) {
			double v;
			*p++ = ',';
			if (vms_reader_rate(rd, t->sel[i], &v) == 0)
				p = vms_fmt_double(p, v, RATE_DIGITS);
		}
	} else {
		const struct vms_schema *s = vms_rdr_schema(rd);
		p = vms_csv_meta(p, f, vms_local_gmtoff(f->t_real_ns));
		for (uint32_t i = 0; i < t->nsel; i++) {
			*p++ = ',';
			p = vms_csv_value(p, f->v[t->sel[i]], s->cols[t->sel[i]].scale);
		}
	}
	*p++ = '\r';
	*p++ = '\n';
	fwrite(t->row, 1, (size_t)(p - t->row), stdout);
	return 1;
}

static void nap(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / VMS_NSEC_PER_SEC), (long)(ns % VMS_NSEC_PER_SEC)};
	nanosleep(&ts, NULL); /* EINTR: a signal, the loop looks at stop */
}

/* Print what the reader gives until its end (without follow), count
 * rows, a signal or a failure: the exit status. */
static int run(struct tail *t, const char *in, bool events, bool follow, uint64_t count)
{
	int r, rc = 0;
	bool ring = vms_reader_kind(t->rd) == VMS_READER_RING;
	uint64_t iv = vms_reader_interval_ns(t->rd);
	/* idle polls: a fraction of the interval, so a frame shows soon
	 * after it is written, but never busy */
	uint64_t pause = ring && iv ? iv / 4 : 100 * VMS_NSEC_PER_MSEC;
	if (pause < VMS_NSEC_PER_MSEC)
		pause = VMS_NSEC_PER_MSEC;
	if (pause > 250 * VMS_NSEC_PER_MSEC)
		pause = 250 * VMS_NSEC_PER_MSEC;

	uint64_t rows = 0;
	while (!stop) {
		r = vms_reader_next(t->rd);
		const char *note = vms_rdr_follow_note(t->rd);
		if (note)
			vms_info("%s", note);
		if (r > 0 && events) {
			if (r == 2) {
				if (vms_event_row(stdout, vms_rdr_event(t->rd)) < 0 && errno == EPIPE)
					break;
				if (count && ++rows >= count)
					break;
				fflush(stdout);
			}
			continue;
		}
		if (r > 0) {
			/* --new on a file skips the SCHEMA record: the first frame
			 * read then reports no change, yet nothing is selected */
			if ((vms_reader_schema_changed(t->rd) || !t->row) && (r = select_columns(t)) < 0) {
				vms_err("%s", strerror(-r));
				rc = 1;
				break;
			}
			rows += (uint64_t)print_row(t);
			if (count && rows >= count)
				break;
			continue;
		}
		if (fflush(stdout) == EOF) {
			if (errno != EPIPE) {
				vms_err("stdout: %s", strerror(errno));
				rc = 1;
			}
			break;
		}
		if (r == 0 && (!follow || vms_reader_eof(t->rd))) {
			if (vms_reader_error(t->rd)[0])
				vms_warn("%s: %s", in, vms_reader_error(t->rd));
			break;
		}
		if (r == 0) {
			nap(pause);
			continue;
		}
		if (r == -ESRCH) {
			int st = vms_reader_writer(t->rd);
			if (st == VMS_WRITER_EXITED) {
				vms_info("%s: %s", in, vms_reader_error(t->rd));
			} else {
				vms_err("%s: %s", in, vms_reader_error(t->rd));
				rc = 1;
			}
		} else {
			vms_err("%s: %s", in, vms_reader_error(t->rd));
			rc = vms_tool_input_status(r, true);
		}
		break;
	}
	return rc;
}

int vms_tail_main(int argc, char **argv)
{
	enum { OPT_NEW = 256, OPT_NO_FOLLOW, OPT_HOST };
	struct tail t = {0};
	bool events = false, new_only = false, no_follow = false;
	const struct vms_tool_opt opts[] = {
		{"columns", required_argument, 'c', &t.globs, NULL},
		{"rates", no_argument, 'r', NULL, &t.rates},
		{"events", no_argument, 'e', NULL, &events},
		{"count", required_argument, 'n', NULL, NULL},
		{"new", no_argument, OPT_NEW, NULL, &new_only},
		{"no-follow", no_argument, OPT_NO_FOLLOW, NULL, &no_follow},
		{"format", required_argument, 'F', NULL, NULL},
		{"host", required_argument, OPT_HOST, &t.host, NULL},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char *const help[] = {usage_text, NULL};
	/* in enum fmt's order; jsonl is json */
	static const char *const formats[] = {"csv", "influx", "json", "jsonl", NULL};
	struct vms_tool_cmd cmd = {.tool = "tail", .shortopts = ":c:ren:F:h", .opts = opts, .help = help};
	uint64_t count = 0;
	int c;
	while ((c = vms_tool_next(&cmd, argc, argv)) > 0) {
		if (c == 'n' && vms_tool_parse_u64(optarg, &count) < 0)
			return vms_tool_usage("tail", "--count needs a non-negative integer", optarg);
		if (c == 'F' && (t.fmt = vms_tool_pick(optarg, formats)) < 0)
			return vms_tool_usage("tail", "--format is csv, influx or json", optarg);
		if (c == 'F' && t.fmt == 3)
			t.fmt = FMT_JSON;
	}
	if (c < 0)
		return cmd.rc;
	bool host_given = t.host != NULL, follow = !no_follow;
	unsigned flags = no_follow ? 0 : VMS_READER_FOLLOW_NAME;
	if (new_only)
		flags |= VMS_READER_NEW_ONLY;
	if (vms_tool_one_operand("tail", argc, "RING or FILE"))
		return 2;
	if (events && (t.rates || t.globs))
		return vms_tool_usage("tail", "--events excludes --rates and --columns", NULL);
	if (events && t.fmt != FMT_CSV)
		return vms_tool_usage("tail", "--events prints CSV only", NULL);
	if (host_given && t.fmt != FMT_INFLUX)
		return vms_tool_usage("tail", "--host goes with --format influx", NULL);
	if (host_given && !vms_lp_name_ok(t.host))
		return vms_tool_usage("tail", "--host cannot hold a backslash or a control character", NULL);
	t.host_recorded = !host_given && t.fmt == FMT_INFLUX;
	const char *in = argv[optind];

	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	int r = vms_reader_open(&t.rd, in, flags), rc = 0;
	if (r < 0) {
		vms_err("%s", vms_reader_error(t.rd));
		vms_reader_close(t.rd);
		return vms_tool_input_status(r, false);
	}
	if (t.rates)
		vms_reader_rates_enable(t.rd);
	if (events) {
		vms_rdr_want_events(t.rd, true);
		fputs(VMS_EVENT_HEADER, stdout);
	}
	rc = run(&t, in, events, follow, count);
	if (vms_reader_missed(t.rd))
		vms_warn("%s: %llu frames were overwritten before they could be read", in,
			 (unsigned long long)vms_reader_missed(t.rd));
	if (fflush(stdout) == EOF && errno != EPIPE && !rc) {
		vms_err("stdout: %s", strerror(errno));
		rc = 1;
	}
	vms_lp_free(t.lp);
	free(t.vals);
	free(t.sel);
	free(t.header);
	free(t.row);
	vms_reader_close(t.rd);
	return rc;
}
