/* SPDX-License-Identifier: MIT */
/* report_intf.c - report --interference (report_intf.h).
 *
 * One pass over the run with libvmsampler's rate stream.  The columns are
 * found by their identities (catalog.h), never by their names: per VM
 * (the victim, the column's entity) the group vmintf's fields wait (the
 * account's total), vms, own, host, kernel and unknown, the group
 * vmintfby's columns (the field is the culprit VM's name), and the VM's
 * run delay over its vCPUs (the rate column vm.NAME.dlyms/s, the sum of
 * its vcpuK.delay counters: schedstat's, independent of the account).
 * Each interval in the window adds each column's counter delta (the
 * rate's term: a reset or a missing value adds nothing).
 *
 * A victim's culprits: each VM of a vmintfby column (vm:NAME), own,
 * host, kernel, unknown, and vms:other, the part of vms that no vmintfby
 * column names (a culprit VM whose column left the run), shown when it is
 * not 0.  So the parts add up to wait, and share = seconds / wait. */
#include "report_intf.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalog.h"
#include "grow.h"
#include "lineproto.h"
#include "log.h"
#include "rates.h"
#include "reader_int.h"
#include "report.h"
#include "sink.h"
#include "tool.h"
#include "window.h"
#include <vmsampler/reader.h>

static const char usage_text[] =
	"Usage: vmsampler report --interference FILE.vms [--from T] [--to T]\n"
	"                        [--window FROM..TO] [--format text|csv|json]\n"
	"Whom each VM's vCPUs waited behind over the run or a window of it (the\n"
	"interference source's columns, vm.NAME.intf.*): the victim x culprit\n"
	"table (seconds of run delay, share of the victim's run delay) and the\n"
	"noisy neighbours (for each culprit, the delay it caused other VMs).\n"
	"\n"
	"      --interference  this report\n"
	"      --from=T, --to=T  the intervals from T, up to T (report's forms)\n"
	"      --window=W    FROM..TO, each end a time as --from, mark:TEXT or\n"
	"                    nothing (the start, the end)\n"
	"      --format=FMT  text (default); csv: rows victim,culprit,seconds,share;\n"
	"                    json: the table, each victim's run delay, the ranking\n"
	"      --json        --format json\n"
	"  -h, --help        show this help\n"
	"\n"
	"Culprits: vm:NAME another VM, own (the VM's own other threads), host\n"
	"(other processes), kernel (kernel threads, idle), unknown (not placed),\n"
	"vms:other (VMs no column names any more).  See vmsampler(1), REPORT.\n";

/* the roles of the vmintf fields, in the catalogue's spelling */
enum { R_WAIT, R_VMS, R_OWN, R_HOST, R_KERNEL, R_UNKNOWN, R_N };
static const char *const role_field[R_N] = {"wait", "vms", "own", "host", "kernel", "unknown"};

struct victim {
	char *name, *uuid;
	double cls[R_N]; /* ns over the window */
	bool has_intf;   /* a vmintf column in the window */
	double delay;    /* ns of run delay (the vCPUs' schedstat) */
	bool has_delay;
};

struct cell {
	uint32_t v, c; /* victim, culprit VM (cnames) */
	double ns;
	bool seen; /* a term in the window */
};

/* what a selected plan column adds to */
enum { W_CLASS, W_CELL, W_DELAY };
struct sel {
	uint8_t what, role;
	uint32_t idx; /* victim (W_CLASS, W_DELAY) or cell */
};

struct part {
	const char *culprit; /* "vm:NAME", "own", ... */
	double ns;
};

struct intf {
	const char *path;
	enum { F_TEXT, F_CSV, F_JSON } format;
	struct vms_window win;
	struct victim *v;
	uint32_t nv, capv;
	char **cname; /* culprit VMs, "vm:NAME" */
	uint32_t nc, capc;
	struct cell *cell;
	uint32_t ncell, capcell;
	/* the current generation's selection */
	uint32_t *k;
	struct sel *sel;
	struct vms_rate_term *t;
	uint32_t nsel;
	uint32_t *in;
	/* what was read */
	uint64_t nframes, nin;
	bool opened; /* the input was opened (a failure after it is one of reading) */
	double span_s;
	int64_t first_real, last_real;
	char err[600];
	FILE *out;
};

static int victim_get(struct intf *X, const char *name, const char *key)
{
	for (uint32_t i = 0; i < X->nv; i++)
		if (strcmp(X->v[i].name, name) == 0) {
			if (key && key[0] && !X->v[i].uuid[0]) {
				char *u = strdup(key);
				if (!u)
					return -ENOMEM;
				free(X->v[i].uuid);
				X->v[i].uuid = u;
			}
			return (int)i;
		}
	struct victim *n = vms_grow_array(X->v, &X->capv, X->nv + 1, sizeof(*n), 16);
	if (!n)
		return -ENOMEM;
	X->v = n;
	struct victim *x = &X->v[X->nv];
	*x = (struct victim){.name = strdup(name), .uuid = strdup(key ? key : "")};
	if (!x->name || !x->uuid) {
		free(x->name);
		free(x->uuid);
		return -ENOMEM;
	}
	return (int)X->nv++;
}

static int cell_get(struct intf *X, uint32_t v, const char *culprit_vm)
{
	uint32_t c;
	for (c = 0; c < X->nc; c++)
		if (strcmp(X->cname[c] + 3, culprit_vm) == 0)
			break;
	if (c == X->nc) {
		char **n = vms_grow_array(X->cname, &X->capc, X->nc + 1, sizeof(*n), 16);
		if (!n)
			return -ENOMEM;
		X->cname = n;
		size_t l = strlen(culprit_vm) + 4;
		if (!(X->cname[c] = malloc(l)))
			return -ENOMEM;
		snprintf(X->cname[c], l, "vm:%s", culprit_vm);
		X->nc++;
	}
	for (uint32_t i = 0; i < X->ncell; i++)
		if (X->cell[i].v == v && X->cell[i].c == c)
			return (int)i;
	struct cell *n = vms_grow_array(X->cell, &X->capcell, X->ncell + 1, sizeof(*n), 64);
	if (!n)
		return -ENOMEM;
	X->cell = n;
	X->cell[X->ncell] = (struct cell){v, c, 0, false};
	return (int)X->ncell++;
}

/* The plan columns of the stream's new plan that the report reads. */
static int select_cols(struct intf *X, struct vms_rate_stream *st, const struct vms_schema *s)
{
	const struct vms_rate_plan *p = st->plan;
	size_t n = p->ncols ? p->ncols : 1;
	unsigned fid[R_N];
	for (unsigned r = 0; r < R_N; r++)
		fid[r] = vms_catalog_field(VMS_G_VMINTF, role_field[r]);
	free(X->k);
	free(X->sel);
	free(X->t);
	free(X->in);
	X->nsel = 0;
	X->k = malloc(n * sizeof(*X->k));
	X->sel = malloc(n * sizeof(*X->sel));
	X->t = malloc(n * sizeof(*X->t));
	X->in = NULL;
	if (!X->k || !X->sel || !X->t)
		return -ENOMEM;
	for (uint32_t k = 0; k < p->ncols; k++) {
		const struct vms_rate_col *pc = &p->cols[k];
		struct sel x = {0};
		int v, c;
		if ((pc->group == VMS_G_VMINTF || pc->group == VMS_G_VMINTFBY) && pc->op == VMS_ROP_PER_S &&
		    pc->a >= 0 && pc->b < 0) {
			const struct vms_col *col = &s->cols[pc->a];
			if (col->kind != VMS_KIND_COUNTER || (v = victim_get(X, col->entity, col->key)) < 0) {
				if (col->kind != VMS_KIND_COUNTER)
					continue;
				return -ENOMEM;
			}
			if (pc->group == VMS_G_VMINTF) {
				unsigned r;
				for (r = 0; r < R_N && fid[r] != col->field_id; r++)
					;
				if (r == R_N)
					continue; /* a field this report does not know */
				x = (struct sel){W_CLASS, (uint8_t)r, (uint32_t)v};
			} else {
				if ((c = cell_get(X, (uint32_t)v, col->field)) < 0)
					return c;
				x = (struct sel){W_CELL, 0, (uint32_t)c};
			}
		} else if (pc->group == VMS_G_VM && pc->op == VMS_ROP_SUM && strcmp(pc->out, "dlyms/s") == 0) {
			/* the VM's run delay: the sum of its vCPUs' delay counters */
			if ((v = victim_get(X, pc->entity, NULL)) < 0)
				return v;
			x = (struct sel){W_DELAY, 0, (uint32_t)v};
		} else {
			continue;
		}
		X->k[X->nsel] = k;
		X->sel[X->nsel++] = x;
	}
	/* the stream keeps the last values of these columns' inputs only */
	bool *used = calloc(s->ncols ? s->ncols : 1, sizeof(*used));
	X->in = malloc((s->ncols ? s->ncols : 1) * sizeof(*X->in));
	if (!used || !X->in) {
		free(used);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < X->nsel; i++)
		vms_rate_inputs(p, X->k[i], used);
	uint32_t nin = 0;
	for (uint32_t i = 0; i < s->ncols; i++)
		if (used[i])
			X->in[nin++] = i;
	free(used);
	st->in = X->in;
	st->nin = nin;
	return 0;
}

static void add_terms(struct intf *X)
{
	for (uint32_t i = 0; i < X->nsel; i++) {
		const struct vms_rate_term *t = &X->t[i];
		const struct sel *x = &X->sel[i];
		if (isnan(t->n))
			continue;
		switch (x->what) {
		case W_CLASS:
			X->v[x->idx].cls[x->role] += t->n;
			X->v[x->idx].has_intf = true;
			break;
		case W_CELL:
			X->cell[x->idx].ns += t->n;
			X->cell[x->idx].seen = true;
			break;
		case W_DELAY:
			X->v[x->idx].delay += t->n;
			X->v[x->idx].has_delay = true;
			break;
		}
	}
}

static int read_run(struct intf *X)
{
	struct vms_reader *rd;
	int r = vms_reader_open(&rd, X->path, 0);
	if (r < 0) {
		snprintf(X->err, sizeof(X->err), "%s", rd ? vms_reader_error(rd) : strerror(-r));
		vms_reader_close(rd);
		return r;
	}
	X->opened = true;
	vms_rdr_want_events(rd, true);
	struct vms_rate_stream st = {0};
	uint64_t streams = 1, pm = 0;
	int64_t pr = 0;
	bool prev = false;
	while ((r = vms_reader_next(rd)) > 0) {
		if (r == 2) {
			vms_window_mark(&X->win, vms_rdr_event(rd));
			continue;
		}
		const struct vms_frame *f = vms_reader_frame(rd);
		const struct vms_schema *s = vms_rdr_schema(rd);
		if (X->nframes++ == 0)
			vms_window_start(&X->win, f->t_mono_ns, f->t_real_ns);
		if (vms_rdr_streams(rd) > streams) {
			/* the sampler started again: no interval across */
			streams = vms_rdr_streams(rd);
			vms_rate_stream_restart(&st);
			prev = false;
		}
		if ((r = vms_rate_stream_schema(&st, s)) > 0)
			r = select_cols(X, &st, s);
		if (r < 0)
			break;
		if ((r = vms_rate_stream_terms(&st, f, X->k, X->nsel, X->t)) < 0)
			break;
		if (r == 1 && prev && vms_window_in(&X->win, pm, pr, f->t_mono_ns, f->t_real_ns) == 0) {
			if (!X->nin++)
				X->first_real = pr;
			X->last_real = f->t_real_ns;
			X->span_s += (double)(f->t_mono_ns - pm) / 1e9;
			add_terms(X);
		}
		pm = f->t_mono_ns;
		pr = f->t_real_ns;
		prev = true;
	}
	if (r == -ENOMEM)
		snprintf(X->err, sizeof(X->err), "%s: %s", X->path, strerror(ENOMEM));
	else if (r < 0 && r != -ESRCH)
		snprintf(X->err, sizeof(X->err), "%s: %s; the report covers the frames before it", X->path,
			 vms_reader_error(rd));
	else if (vms_reader_error(rd)[0])
		vms_warn("%s: %s", X->path, vms_reader_error(rd)); /* a torn tail */
	vms_rate_stream_free(&st);
	vms_reader_close(rd);
	return r < 0 && r != -ESRCH ? r : 0;
}

/* ---- the account -------------------------------------------------------------- */

static int by_ns(const void *a, const void *b)
{
	const struct part *x = a, *y = b;
	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return strcmp(x->culprit, y->culprit);
}

static int by_name(const void *a, const void *b, void *arg)
{
	const struct victim *v = arg;
	return strcmp(v[*(const uint32_t *)a].name, v[*(const uint32_t *)b].name);
}

/* Victim v's parts, largest first, into p (room for R_N + nc): how many. */
static unsigned parts_of(const struct intf *X, uint32_t v, struct part *p)
{
	const struct victim *x = &X->v[v];
	unsigned n = 0;
	double named = 0;
	for (uint32_t i = 0; i < X->ncell; i++)
		if (X->cell[i].v == v && X->cell[i].seen) {
			p[n++] = (struct part){X->cname[X->cell[i].c], X->cell[i].ns};
			named += X->cell[i].ns;
		}
	for (unsigned r = R_OWN; r <= R_UNKNOWN; r++)
		p[n++] = (struct part){role_field[r], x->cls[r]};
	if (x->cls[R_VMS] - named != 0)
		p[n++] = (struct part){"vms:other", x->cls[R_VMS] - named};
	qsort(p, n, sizeof(*p), by_ns);
	return n;
}

/* A culprit of the ranking: another VM, host or kernel (own, unknown
 * and vms:other are no one's neighbour). */
static bool ranked(const char *c)
{
	return strncmp(c, "vm:", 3) == 0 || strcmp(c, "host") == 0 || strcmp(c, "kernel") == 0;
}

struct rank {
	const char *culprit;
	double ns;
	struct part *to; /* victims: culprit = the victim's name */
	unsigned nto;
};

static int by_rank(const void *a, const void *b)
{
	const struct rank *x = a, *y = b;
	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return strcmp(x->culprit, y->culprit);
}

/* ---- output --------------------------------------------------------------------- */

/* a share, or nothing (JSON null) when the victim waited 0 */
static void put_share(FILE *o, double ns, double wait, bool json)
{
	if (wait > 0)
		fprintf(o, "%.6f", ns / wait);
	else if (json)
		fputs("null", o);
}

static void csv_field(FILE *o, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, o);
		return;
	}
	fputc('"', o);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', o);
		fputc(*s, o);
	}
	fputc('"', o);
}

static void fmt_time(char *buf, size_t cap, int64_t t_real_ns)
{
	time_t sec = (time_t)(t_real_ns / 1000000000LL);
	struct tm tm;
	if (!gmtime_r(&sec, &tm) || !strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, cap, "?");
}

/* What the three formats print: the victims in name order, each one's
 * parts (p: room for any victim's), the ranking of culprits. */
struct view {
	uint32_t *ord, nv;
	struct part *p;
	struct rank *rk;
	unsigned nrk;
	char t0[40], t1[40]; /* the window's first and last frame */
};

/* The ranking: per culprit, the victims it delayed, largest first.  0 or
 * -ENOMEM. */
static int rank_culprits(struct intf *X, struct view *V)
{
	struct rank *rk = V->rk;
	struct part *p = V->p;
	unsigned nrk = 0;
	int r = 0;
	for (uint32_t i = 0; i < V->nv && !r; i++) {
		const struct victim *x = &X->v[V->ord[i]];
		unsigned n = parts_of(X, V->ord[i], p);
		for (unsigned j = 0; j < n; j++) {
			if (!ranked(p[j].culprit) || !(p[j].ns > 0))
				continue;
			unsigned q;
			for (q = 0; q < nrk && strcmp(rk[q].culprit, p[j].culprit) != 0; q++)
				;
			if (q == nrk)
				rk[nrk++] = (struct rank){.culprit = p[j].culprit};
			struct part *t = realloc(rk[q].to, (rk[q].nto + 1) * sizeof(*t));
			if (!t) {
				r = -ENOMEM;
				break;
			}
			rk[q].to = t;
			t[rk[q].nto++] = (struct part){x->name, p[j].ns};
			rk[q].ns += p[j].ns;
		}
	}
	V->nrk = nrk;
	for (unsigned q = 0; q < nrk && !r; q++)
		qsort(rk[q].to, rk[q].nto, sizeof(*rk[q].to), by_ns);
	qsort(rk, nrk, sizeof(*rk), by_rank);
	return r;
}

static void print_csv(struct intf *X, const struct view *V)
{
	FILE *o = X->out;
	const uint32_t *ord = V->ord;
	uint32_t nv = V->nv;
	struct part *p = V->p;
	fputs("victim,culprit,seconds,share\n", o);
	for (uint32_t i = 0; i < nv; i++) {
		const struct victim *x = &X->v[ord[i]];
		unsigned n = parts_of(X, ord[i], p);
		for (unsigned j = 0; j < n; j++) {
			csv_field(o, x->name);
			fputc(',', o);
			csv_field(o, p[j].culprit);
			fprintf(o, ",%.9f,", p[j].ns / 1e9);
			put_share(o, p[j].ns, x->cls[R_WAIT], false);
			fputc('\n', o);
		}
	}
}

static void print_json(struct intf *X, const struct view *V)
{
	FILE *o = X->out;
	const uint32_t *ord = V->ord;
	uint32_t nv = V->nv;
	struct part *p = V->p;
	const struct rank *rk = V->rk;
	unsigned nrk = V->nrk;
	const char *t0 = V->t0, *t1 = V->t1;
	fputs("{\"file\":", o);
	vms_json_put(o, X->path);
	fputs(",\"window\":", o);
	if (X->win.text)
		vms_json_put(o, X->win.text);
	else
		fputs("null", o);
	fprintf(o, ",\"intervals\":%" PRIu64 ",\"seconds\":%.6f,\"from\":", X->nin, X->span_s);
	if (X->nin)
		fprintf(o, "\"%s\",\"to\":\"%s\"", t0, t1);
	else
		fputs("null,\"to\":null", o);
	fputs(",\n\"victims\":[", o);
	for (uint32_t i = 0; i < nv; i++) {
		const struct victim *x = &X->v[ord[i]];
		fputs(i ? ",\n{\"victim\":" : "\n{\"victim\":", o);
		vms_json_put(o, x->name);
		fputs(",\"uuid\":", o);
		vms_json_put(o, x->uuid);
		fprintf(o, ",\"wait_seconds\":%.9f,\"run_delay_seconds\":", x->cls[R_WAIT] / 1e9);
		if (x->has_delay)
			fprintf(o, "%.9f", x->delay / 1e9);
		else
			fputs("null", o);
		fputs(",\"culprits\":[", o);
		unsigned n = parts_of(X, ord[i], p);
		for (unsigned j = 0; j < n; j++) {
			fputs(j ? ",{\"culprit\":" : "{\"culprit\":", o);
			vms_json_put(o, p[j].culprit);
			fprintf(o, ",\"seconds\":%.9f,\"share\":", p[j].ns / 1e9);
			put_share(o, p[j].ns, x->cls[R_WAIT], true);
			fputc('}', o);
		}
		fputs("]}", o);
	}
	fputs("],\n\"noisy_neighbours\":[", o);
	for (unsigned q = 0; q < nrk; q++) {
		fputs(q ? ",\n{\"culprit\":" : "\n{\"culprit\":", o);
		vms_json_put(o, rk[q].culprit);
		fprintf(o, ",\"seconds\":%.9f,\"victims\":[", rk[q].ns / 1e9);
		for (unsigned j = 0; j < rk[q].nto; j++) {
			int vi = victim_get(X, rk[q].to[j].culprit, NULL);
			fputs(j ? ",{\"victim\":" : "{\"victim\":", o);
			vms_json_put(o, rk[q].to[j].culprit);
			fprintf(o, ",\"seconds\":%.9f,\"share\":", rk[q].to[j].ns / 1e9);
			put_share(o, rk[q].to[j].ns, vi >= 0 ? X->v[vi].cls[R_WAIT] : 0, true);
			fputc('}', o);
		}
		fputs("]}", o);
	}
	fputs("]}\n", o);
}

static void print_text(struct intf *X, const struct view *V)
{
	FILE *o = X->out;
	const uint32_t *ord = V->ord;
	uint32_t nv = V->nv;
	struct part *p = V->p;
	const struct rank *rk = V->rk;
	unsigned nrk = V->nrk;
	const char *t0 = V->t0, *t1 = V->t1;
	fprintf(o, "Interference: %s", X->path);
	if (X->win.text)
		fprintf(o, ", window %s", X->win.text);
	fprintf(o, ": %" PRIu64 " intervals, %.1f s", X->nin, X->span_s);
	if (X->nin)
		fprintf(o, " (%s .. %s)", t0, t1);
	fputs("\nseconds of the victim's run delay spent behind each culprit, and their share of it\n\n", o);
	fprintf(o, "%-20s %-24s %12s %8s\n", "victim", "culprit", "seconds", "share");
	for (uint32_t i = 0; i < nv; i++) {
		const struct victim *x = &X->v[ord[i]];
		unsigned n = parts_of(X, ord[i], p);
		for (unsigned j = 0; j < n; j++) {
			fprintf(o, "%-20s %-24s %12.3f ", j ? "" : x->name, p[j].culprit, p[j].ns / 1e9);
			if (x->cls[R_WAIT] > 0)
				fprintf(o, "%7.1f%%\n", 100 * p[j].ns / x->cls[R_WAIT]);
			else
				fprintf(o, "%8s\n", "-");
		}
		fprintf(o, "%-20s %-24s %12.3f", "", "(account)", x->cls[R_WAIT] / 1e9);
		if (x->has_delay && x->delay > 0)
			fprintf(o, "   run delay %.3f s (vCPU schedstat): the account is %.1f %% of it\n",
				x->delay / 1e9, 100 * x->cls[R_WAIT] / x->delay);
		else
			fputs("   run delay: not recorded\n", o);
	}
	fputs("\nNoisy neighbours: the run delay each culprit caused other VMs (and their share of it)\n\n", o);
	fprintf(o, "%-24s %12s  %s\n", "culprit", "seconds", "victims");
	for (unsigned q = 0; q < nrk; q++) {
		fprintf(o, "%-24s %12.3f ", rk[q].culprit, rk[q].ns / 1e9);
		for (unsigned j = 0; j < rk[q].nto; j++) {
			int vi = victim_get(X, rk[q].to[j].culprit, NULL);
			double w = vi >= 0 ? X->v[vi].cls[R_WAIT] : 0;
			fprintf(o, "%s %s %.3f s", j ? "," : "", rk[q].to[j].culprit, rk[q].to[j].ns / 1e9);
			if (w > 0)
				fprintf(o, " (%.1f %%)", 100 * rk[q].to[j].ns / w);
		}
		fputc('\n', o);
	}
	if (!nrk)
		fputs("(none)\n", o);
}

static int print_all(struct intf *X)
{
	struct view V = {
		.ord = malloc((X->nv ? X->nv : 1) * sizeof(*V.ord)),
		.p = malloc((R_N + 1 + X->nc) * sizeof(*V.p)),
		.rk = calloc(X->nc + 2, sizeof(*V.rk)),
	};
	int r = -ENOMEM;
	if (V.ord && V.p && V.rk) {
		for (uint32_t i = 0; i < X->nv; i++)
			if (X->v[i].has_intf)
				V.ord[V.nv++] = i;
		qsort_r(V.ord, V.nv, sizeof(*V.ord), by_name, X->v);
		r = rank_culprits(X, &V);
	}
	if (X->nin) {
		fmt_time(V.t0, sizeof(V.t0), X->first_real);
		fmt_time(V.t1, sizeof(V.t1), X->last_real);
	}
	if (r == 0)
		(X->format == F_CSV ? print_csv : X->format == F_JSON ? print_json : print_text)(X, &V);
	for (unsigned q = 0; V.rk && q < V.nrk; q++)
		free(V.rk[q].to);
	free(V.rk);
	free(V.p);
	free(V.ord);
	return r;
}

static void intf_free(struct intf *X)
{
	for (uint32_t i = 0; i < X->nv; i++) {
		free(X->v[i].name);
		free(X->v[i].uuid);
	}
	free(X->v);
	for (uint32_t i = 0; i < X->nc; i++)
		free(X->cname[i]);
	free(X->cname);
	free(X->cell);
	free(X->k);
	free(X->sel);
	free(X->t);
	free(X->in);
	vms_window_free(&X->win);
}

bool vms_report_intf_wanted(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return false;
		if (strcmp(argv[i], "--interference") == 0)
			return true;
	}
	return false;
}

int vms_report_intf_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"interference", no_argument, NULL, 'I'},
		{"from", required_argument, NULL, 'F'},
		{"to", required_argument, NULL, 'T'},
		{"window", required_argument, NULL, 'W'},
		{"format", required_argument, NULL, 'f'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct intf X = {.out = stdout};
	struct vms_tspec from = {0}, to = {0};
	const char *wtext = NULL;
	int c, r;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'I':
			break;
		case 'F':
		case 'T':
			if (vms_report_parse_time(optarg, c == 'F' ? &from : &to) < 0)
				return vms_tool_usage("report", c == 'F' ? "bad --from time" : "bad --to time", optarg);
			break;
		case 'W':
			if (wtext)
				return vms_tool_usage("report", "--interference takes one --window", optarg);
			wtext = optarg;
			break;
		case 'f':
			if (strcmp(optarg, "text") == 0)
				X.format = F_TEXT;
			else if (strcmp(optarg, "csv") == 0)
				X.format = F_CSV;
			else if (strcmp(optarg, "json") == 0)
				X.format = F_JSON;
			else
				return vms_tool_usage("report", "--format wants text, csv or json", optarg);
			break;
		case 'j':
			X.format = F_JSON;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return vms_tool_bad_option("report", c, argv);
		}
	}
	if (optind != argc - 1)
		return vms_tool_usage("report", optind == argc ? "missing FILE" : "more than one FILE", NULL);
	if (wtext && (from.kind != VMS_T_NONE || to.kind != VMS_T_NONE))
		return vms_tool_usage("report", "give either --window or --from/--to", NULL);
	if (from.kind == to.kind && from.kind != VMS_T_NONE && from.kind != VMS_T_TOD &&
	    (from.kind == VMS_T_REL ? from.rel > to.rel : from.abs_ns > to.abs_ns))
		return vms_tool_usage("report", "--from is after --to", NULL);
	X.path = argv[optind];
	if (wtext) {
		r = vms_window_parse(&X.win, wtext);
		if (r == -ENOMEM) {
			vms_err("%s", strerror(ENOMEM));
			return 1;
		}
		if (r < 0)
			return vms_tool_usage("report", "--window wants FROM..TO (each a time, mark:TEXT or nothing)",
					      wtext);
	} else {
		vms_window_times(&X.win, &from, &to);
	}

	signal(SIGPIPE, SIG_IGN);
	int rc = 0;
	r = read_run(&X);
	if (r < 0 && !X.nframes) {
		vms_err("%s", X.err);
		intf_free(&X);
		return vms_tool_input_status(r, X.opened);
	}
	char werr[600];
	if (vms_window_check(&X.win, X.path, werr, sizeof(werr)) < 0) {
		fprintf(stderr, "vmsampler report: %s. Try 'vmsampler report --help'.\n", werr);
		intf_free(&X);
		return 2;
	}
	bool any = false;
	for (uint32_t i = 0; i < X.nv; i++)
		any |= X.v[i].has_intf;
	if (!any && !X.err[0]) {
		vms_err("%s: no interference columns (vm.NAME.intf.*, the interference source) in the %s", X.path,
			X.win.from.kind || X.win.to.kind ? "window" : "run");
		intf_free(&X);
		return 1;
	}
	if (print_all(&X) < 0) {
		vms_err("%s", strerror(ENOMEM));
		rc = 1;
	}
	if (fflush(X.out) == EOF || ferror(X.out)) {
		if (errno != EPIPE) {
			vms_err("output: %s", strerror(errno));
			rc = 1;
		}
	}
	if (X.err[0]) {
		vms_err("%s", X.err);
		rc = 1;
	}
	intf_free(&X);
	return rc;
}
