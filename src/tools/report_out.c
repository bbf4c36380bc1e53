/* SPDX-License-Identifier: MIT */
/* report_out.c - `vmsampler report`'s text (sar's layout) and JSON: rows,
 * section ends, events, the summary, the title (report_int.h). */
#include "report_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fmt.h"

static char *fmt_key(char *p, uint64_t k, int prec)
{
	return vms_fmt_fixed(p, k, prec);
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
	return &rpt_sections[e->sec];
}

static void text_lead(struct report *R, const char *label, const struct rent *e)
{
	const struct section *s = sec_of(e);
	fprintf(R->out, "%-*s", R->ms ? 13 : 11, label);
	if (s->entcol)
		fprintf(R->out, " %9s", e->name);
}

static void text_header(struct report *R, unsigned sec, int64_t t_real)
{
	const struct section *s = &rpt_sections[sec];
	char t[32];
	if (!R->titled) {
		R->first.t_real = t_real;
		rpt_title(R);
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

void rpt_text_event(struct report *R, const struct ev *v)
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

void rpt_print_row(struct report *R, unsigned sec, const struct pos *a, const struct pos *b,
		      uint64_t ord)
{
	const struct section *S = &rpt_sections[sec];
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
		rpt_events_upto(R, ord);
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

/* Text and JSON: the rest of the section (events after the last row, the
 * Average rows). */
void rpt_section_end(struct report *R, unsigned sec)
{
	const struct section *S = &rpt_sections[sec];
	bool json = R->mode == M_JSON;
	if (!R->hdr)
		return;
	if (json)
		fputs("],\n\"average\":[", R->out);
	else
		rpt_events_upto(R, UINT64_MAX);
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
			put_val(R, rc ? rpt_avg_value(rc) : NAN, rc ? rc->prec : 2, json, 9);
		}
		fputs(json ? "]}" : "\n", R->out);
	}
	if (json)
		fputs("]}", R->out);
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
			v = rpt_avg_value(rc);
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

void rpt_print_summary(struct report *R)
{
	static const char *const stats[] = {"min", "avg", "max", "p95"};
	bool json = R->mode == M_JSON;
	for (unsigned s = 0; s < S_N; s++) {
		const struct section *S = &rpt_sections[s];
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

void rpt_title(struct report *R)
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

void rpt_json_tail(struct report *R)
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
