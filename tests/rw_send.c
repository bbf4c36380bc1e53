/* SPDX-License-Identifier: MIT */
/* rw_send URL FILE.vms [--batch N] [--retries N] [--backoff-ms N]
 *         [--max-backoff-ms N] [--timeout-ms N] [--once 0|1] [--ca-file PEM]
 *         [--pace-ms N] [--host NAME]
 *
 * The tests' driver of src/tools/remote_write.c: every frame of FILE (a
 * .vms stream or a ring) through remote write to URL, N frames per
 * request, a column as the metric vmsampler_<column, every character
 * other than [a-zA-Z0-9_] as '_'> with the labels host (if given) and key
 * (the column's entity key, if any), the value as the column's
 * (raw / 10^scale), the frame's wall-clock time in ms.  A missing value
 * is not sent.  (A trivial mapping for the tests; `vmsampler export`
 * names metrics as vmsampler(1) says.)
 *
 * A request whose retries ran out is tried again (the batch kept) until
 * it goes or is rejected, unless --once 1.  --pace-ms waits after each
 * request (a run that lasts, for the outage tests).  One line per request on stdout:
 *   send frames=F series=S samples=N raw=B wire=W status=H attempts=A rc=R [error=...]
 * and at the end
 *   total frames=F requests=Q samples=N dropped=D retries=T wire=W
 * Exit status: 0 every sample accepted, 1 some dropped or an error, 2 usage. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vmsampler/reader.h>

#include "remote_write.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static bool once;

static int flush_batch(struct vms_rw *w, unsigned frames)
{
	for (;;) {
		struct vms_rw_report rep;
		int r = vms_rw_send(w, &rep);
		printf("send frames=%u series=%llu samples=%llu raw=%zu wire=%zu status=%ld attempts=%u rc=%d%s%s\n",
		       frames, (unsigned long long)rep.series, (unsigned long long)rep.samples, rep.raw_bytes,
		       rep.wire_bytes, rep.status, rep.attempts, r, rep.error[0] ? " error=" : "", rep.error);
		fflush(stdout);
		if (r == -EAGAIN && !stop && !once)
			continue; /* the batch is kept: again */
		return r;
	}
}

static unsigned long num(const char *s)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || !*s) {
		fprintf(stderr, "rw_send: not a number: %s\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: rw_send URL FILE.vms [--batch N] [--retries N] [--backoff-ms N] "
				"[--max-backoff-ms N] [--timeout-ms N] [--once 0|1] [--ca-file PEM] [--pace-ms N] [--host NAME]\n");
		return 2;
	}
	struct vms_rw_conf conf = {.url = argv[1], .retries = 3, .stop = &stop};
	unsigned batch = 10, pace_ms = 0;
	const char *host = NULL;
	for (int i = 3; i < argc; i++) {
		if (i + 1 >= argc) {
			fprintf(stderr, "rw_send: %s needs a value\n", argv[i]);
			return 2;
		}
		const char *o = argv[i], *v = argv[++i];
		if (strcmp(o, "--batch") == 0)
			batch = (unsigned)num(v);
		else if (strcmp(o, "--retries") == 0)
			conf.retries = (unsigned)num(v);
		else if (strcmp(o, "--backoff-ms") == 0)
			conf.backoff_ms = (unsigned)num(v);
		else if (strcmp(o, "--max-backoff-ms") == 0)
			conf.backoff_max_ms = (unsigned)num(v);
		else if (strcmp(o, "--timeout-ms") == 0)
			conf.timeout_ms = (long)num(v);
		else if (strcmp(o, "--pace-ms") == 0)
			pace_ms = (unsigned)num(v);
		else if (strcmp(o, "--ca-file") == 0)
			conf.ca_file = v;
		else if (strcmp(o, "--once") == 0)
			once = num(v) != 0;
		else if (strcmp(o, "--host") == 0)
			host = v;
		else {
			fprintf(stderr, "rw_send: unknown option %s\n", o);
			return 2;
		}
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	struct vms_reader *rd;
	if (vms_reader_open(&rd, argv[2], 0) < 0) {
		fprintf(stderr, "rw_send: %s\n", vms_reader_error(rd));
		vms_reader_close(rd);
		return 1;
	}
	struct vms_rw *w;
	int r = vms_rw_new(&w, &conf);
	if (r < 0) {
		fprintf(stderr, "rw_send: %s\n", strerror(-r));
		vms_reader_close(rd);
		return 1;
	}
	int rc = 0;
	unsigned frames = 0, inbatch = 0;
	char name[600];
	while (!stop && (r = vms_reader_next(rd)) > 0) {
		int64_t t_ms = vms_reader_time_real_ns(rd) / 1000000;
		uint32_t n = vms_reader_ncols(rd);
		for (uint32_t c = 0; c < n; c++) {
			struct vms_reader_col ci;
			uint64_t raw;
			if (vms_reader_value(rd, c, &raw) < 0 || vms_reader_col_info(rd, c, &ci) < 0)
				continue; /* missing: not sent */
			/* one division by an exact power of ten: the double nearest
			 * to the decimal the CSV prints */
			double p10 = 1;
			for (int k = 0; k < ci.scale; k++)
				p10 *= 10;
			double v = (double)raw / p10;
			int k = snprintf(name, sizeof(name), "vmsampler_%s", ci.name);
			if (k < 0 || (size_t)k >= sizeof(name))
				continue;
			for (char *p = name; *p; p++)
				if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
					*p = '_';
			struct vms_rw_label l[2];
			size_t nl = 0;
			if (host)
				l[nl++] = (struct vms_rw_label){"host", host};
			if (ci.key && *ci.key)
				l[nl++] = (struct vms_rw_label){"key", ci.key};
			if ((r = vms_rw_add(w, name, l, nl, v, t_ms)) < 0) {
				fprintf(stderr, "rw_send: %s: %s\n", name, strerror(-r));
				rc = 1;
			}
		}
		frames++;
		if (++inbatch == batch) {
			if (flush_batch(w, inbatch) < 0)
				rc = 1;
			inbatch = 0;
			if (pace_ms)
				nanosleep(&(struct timespec){pace_ms / 1000, (long)(pace_ms % 1000) * 1000000L}, NULL);
		}
	}
	if (r < 0) {
		fprintf(stderr, "rw_send: %s\n", vms_reader_error(rd));
		rc = 1;
	}
	if (inbatch && flush_batch(w, inbatch) < 0)
		rc = 1;
	struct vms_rw_totals t;
	vms_rw_totals(w, &t);
	printf("total frames=%u requests=%llu samples=%llu dropped=%llu retries=%llu wire=%llu\n", frames,
	       (unsigned long long)t.requests, (unsigned long long)t.samples, (unsigned long long)t.dropped,
	       (unsigned long long)t.retries, (unsigned long long)t.wire_bytes);
	if (t.dropped || stop)
		rc = 1;
	vms_rw_free(w);
	vms_reader_close(rd);
	return rc;
}
