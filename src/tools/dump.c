/* SPDX-License-Identifier: MIT */
#include "dump.h"
#include "events.h"
#include "tail.h"

#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "binfmt.h"
#include "csv.h"
#include "fmt.h"
#include "lineproto.h"
#include "log.h"
#include "out.h"
#include "rates_csv.h"
#include "safefile.h"
#include "reader_int.h"
#include "sink.h"
#include "tool.h"

static const char usage_text[] =
	"Usage: vmsampler dump FILE.vms [--rates | --events] [-o OUT] [--force]\n"
	"       vmsampler dump FILE.vms --format=influx|json [--rates] [--host=NAME]\n"
	"       vmsampler dump --info [--json] FILE.vms|--ring=RING\n"
	"Convert a vmsampler binary stream to CSV (FILE '-' reads standard input).\n"
	"\n"
	"  -F, --format=FMT  csv (default); influx (InfluxDB line protocol) or json\n"
	"                    (JSON lines, also jsonl) to standard output, as tail\n"
	"                    --no-follow --format writes them (see vmsampler(1), TAIL)\n"
	"      --host=NAME   the host tag of --format influx\n"
	"  -I, --info        the identity of the host the run was recorded on\n"
	"                    (hostname, machine-id, boot id, kernel, CPUs, NUMA\n"
	"                    nodes, USER_HZ, page size, time zone, vmsampler\n"
	"                    version and features, libvirt URI and versions), one\n"
	"                    \"key: value\" line each\n"
	"      --json        with --info: one JSON object instead\n"
	"      --ring=RING   read the live ring at RING instead of FILE\n"
	"  -r, --rates       per-interval rates (sar/iostat/mpstat definitions)\n"
	"                    instead of the raw counters\n"
	"  -e, --events      the EVENT records (VM lifecycle, libvirt connection,\n"
	"                    sources failing...) instead of the frames\n"
	"  -o, --output OUT  write to OUT (default: standard output); an existing\n"
	"                    OUT is overwritten only if it is a vmsampler CSV file,\n"
	"                    never if it is FILE itself, not through a symbolic link\n"
	"  -f, --force       overwrite OUT (and follow a link) even if it is not a\n"
	"                    vmsampler CSV file; never FILE itself or a ring\n"
	"  -h, --help        show this help\n"
	"\n"
	"Exit status: 0 success (a torn tail is reported on stderr), 1 damaged\n"
	"input or an I/O error, 2 usage or configuration error: a bad option, a\n"
	"FILE that is missing or not a vmsampler stream or ring, an OUT that\n"
	"cannot be written or that it refuses to overwrite.  See vmsampler(1).\n";

/* The CSV sink driven the way the loop drives it (begin on a new
 * generation, write, flush), but allowed to wait for its output. */
struct csv_out {
	struct vms_sink sink;
	const struct vms_schema *begun;
};

static int wait_writable(struct vms_sink *s)
{
	int fd = s->ops->pollfd(s);
	if (fd < 0)
		return 0;
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	if (poll(&p, 1, -1) < 0 && errno != EINTR)
		return -errno;
	return 0;
}

static int csv_frame(struct csv_out *c, const struct vms_schema *sch, const struct vms_frame *f)
{
	struct vms_sink *s = &c->sink;
	int r;
	if (sch != c->begun) {
		r = s->ops->begin(s, sch);
		if (r < 0)
			return r;
		c->begun = sch;
	}
	while ((r = s->ops->write(s, sch, f)) == -EAGAIN) {
		r = s->ops->flush(s);
		if (r == -EAGAIN)
			r = wait_writable(s);
		if (r < 0)
			return r;
	}
	return r;
}

/* ---- --info ------------------------------------------------------------- */

/* The HOST record that describes the first frame (vmsampler-format(5)). */
static int dump_info(const char *in, bool json)
{
	struct vms_reader *rd;
	int r = vms_reader_open(&rd, in, 0);
	if (r < 0) {
		vms_err("%s", vms_reader_error(rd));
		vms_reader_close(rd);
		return vms_tool_input_status(r, false);
	}
	r = vms_reader_next(rd); /* the record comes before the first schema */
	if (r < 0 && r != -ESRCH) {
		vms_err("%s: %s", in, vms_reader_error(rd));
		vms_reader_close(rd);
		return vms_tool_input_status(r, true);
	}
	uint32_t n = vms_reader_host_count(rd);
	if (n == 0)
		vms_warn("%s: no host identity recorded (written by a vmsampler older than format 1.1, "
			 "or no frame yet)", in);
	const char *k, *v;
	if (json) {
		size_t cap = 64;
		for (uint32_t i = 0; vms_reader_host_pair(rd, i, &k, &v) == 0; i++)
			cap += vms_json_string_max(k) + vms_json_string_max(v) + 4;
		char *buf = malloc(cap), *p = buf;
		if (!buf) {
			vms_reader_close(rd);
			return 1;
		}
		*p++ = '{';
		for (uint32_t i = 0; vms_reader_host_pair(rd, i, &k, &v) == 0; i++) {
			if (i)
				*p++ = ',';
			p = vms_json_string(p, k);
			*p++ = ':';
			p = vms_json_string(p, v);
		}
		*p++ = '}';
		*p++ = '\n';
		fwrite(buf, 1, (size_t)(p - buf), stdout);
		free(buf);
	} else {
		for (uint32_t i = 0; vms_reader_host_pair(rd, i, &k, &v) == 0; i++)
			printf("%s: %s\n", k, v);
	}
	vms_reader_close(rd);
	return fflush(stdout) == 0 ? 0 : 1;
}

/* ---- --events ----------------------------------------------------------- */

/* Pre-scan a regular file for every generation's rate columns, so that
 * the rates table has one header for the whole file. */
static int prescan(const char *in, struct vms_rates *rates)
{
	struct stat st;
	struct vms_reader *rd;
	int r;
	if (strcmp(in, "-") == 0 || stat(in, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	r = vms_reader_open(&rd, in, 0);
	while (r >= 0 && (r = vms_reader_next(rd)) > 0)
		if (vms_reader_schema_changed(rd) && (r = vms_rates_declare(rates, vms_rdr_schema(rd))) < 0)
			break;
	vms_reader_close(rd);
	/* errors show in the real pass, at their place */
	return r == -ENOMEM ? r : 0;
}

/* dump's options */
struct dopts {
	const char *out, *format, *host;
	bool force, rates, events;
};

/* --format influx or json: the lines tail --no-follow writes (lineproto.c) */
static int dump_lines(const struct dopts *o, const char *in)
{
	char *targv[10];
	int n = 0;
	targv[n++] = (char *)"tail";
	targv[n++] = (char *)"--no-follow";
	targv[n++] = (char *)"--format";
	targv[n++] = (char *)o->format;
	if (o->rates)
		targv[n++] = (char *)"--rates";
	if (o->host) {
		targv[n++] = (char *)"--host";
		targv[n++] = (char *)o->host;
	}
	targv[n++] = (char *)"--";
	targv[n++] = (char *)in;
	targv[n] = NULL;
	return vms_tail_main(n, targv);
}

/* CSV of the frames, of their rates or of the events, from in to o->out:
 * the exit status. */
static int dump_run(const struct dopts *o, const char *in)
{
	const char *out = o->out;
	bool force = o->force, rates_mode = o->rates, events_mode = o->events;
	int r, rc = 0;
	struct vms_reader *rd;
	r = vms_reader_open(&rd, in, 0);
	if (r < 0) {
		vms_err("%s", vms_reader_error(rd));
		vms_reader_close(rd);
		return vms_tool_input_status(r, false);
	}
	/* -o onto the input (by another name, too) would truncate it */
	struct stat ist;
	if (strcmp(in, "-") != 0 && stat(in, &ist) == 0 && vms_out_protect(&ist) < 0) {
		vms_reader_close(rd);
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	unsigned how = VMS_OUT_CSV | (force ? VMS_OUT_FORCE : 0);

	struct csv_out csv = {0};
	struct vms_rates *rates = NULL;
	FILE *evf = NULL;
	bool csv_open = false;

	if (events_mode) {
		vms_rdr_want_events(rd, true);
		if (strcmp(out, "-") == 0) {
			evf = stdout;
			r = 0;
		} else {
			int fd = vms_out_open_fd(out, how);
			evf = fd >= 0 ? fdopen(fd, "w") : NULL;
			r = fd < 0 ? fd : evf ? 0 : -errno;
			if (fd >= 0 && !evf)
				close(fd);
		}
		if (evf && fputs(VMS_EVENT_HEADER, evf) == EOF)
			r = -EIO;
	} else if (rates_mode) {
		r = vms_rates_open(&rates, out, how);
		if (r == 0)
			r = prescan(in, rates);
	} else {
		csv.sink.ops = &vms_sink_csv;
		csv.sink.force = force;
		csv.sink.path = out;
		csv.sink.priv = calloc(1, vms_sink_csv.priv_size);
		r = csv.sink.priv ? vms_sink_csv.open(&csv.sink) : -ENOMEM;
		csv_open = r == 0;
	}
	if (r < 0) {
		vms_err("cannot open output %s: %s", out, vms_out_strerror(r));
		rc = vms_safe_status(r); /* refused, or a path that cannot be: 2 */
		goto out;
	}
	/* a file to its end; a live ring: the frames it holds now */
	uint64_t streams = 1;
	while ((r = vms_reader_next(rd)) > 0) {
		if (rates && vms_rdr_streams(rd) > streams) {
			vms_rates_restart(rates); /* no interval across streams */
			streams = vms_rdr_streams(rd);
		}
		if (evf) {
			if (r == 2 && vms_event_row(evf, vms_rdr_event(rd)) < 0) {
				vms_err("output %s: %s", out, strerror(errno ? errno : EIO));
				rc = 1;
				goto out;
			}
			continue;
		}
		const struct vms_schema *sch = vms_rdr_schema(rd);
		const struct vms_frame *f = vms_reader_frame(rd);
		int w = rates ? vms_rates_frame(rates, sch, f) : csv_frame(&csv, sch, f);
		if (w < 0) {
			if (w != -EPIPE) {
				vms_err("output %s: %s", out, strerror(-w));
				rc = 1;
			}
			goto out;
		}
	}
	if (r < 0 && r != -ESRCH) {
		vms_err("%s: %s; the frames before it were output", in, vms_reader_error(rd));
		rc = vms_tool_input_status(r, true);
	} else if (vms_reader_error(rd)[0]) {
		/* a torn tail, or a ring whose writer is gone */
		vms_warn("%s: %s", in, vms_reader_error(rd));
	}
out:
	if (evf && (fflush(evf) == EOF || ferror(evf) || (evf != stdout && fclose(evf) == EOF)) && errno != EPIPE) {
		vms_err("output %s: %s", out, strerror(errno));
		rc = 1;
	}
	if (rates) {
		r = vms_rates_close(rates);
		if (r < 0 && r != -EPIPE) {
			vms_err("output %s: %s", out, strerror(-r));
			rc = 1;
		}
	}
	if (csv.sink.priv) {
		if (csv_open) {
			r = vms_sink_csv.close(&csv.sink);
			if (r < 0 && r != -EPIPE) {
				vms_err("output %s: %s", out, strerror(-r));
				rc = 1;
			}
		}
		free(csv.sink.priv);
	}
	vms_reader_close(rd);
	return rc;
}

int vms_dump_main(int argc, char **argv)
{
	struct dopts o = {.out = "-", .format = "csv"};
	const char *ring = NULL;
	bool info = false, json = false;
	const struct vms_tool_opt opts[] = {
		{"rates", no_argument, 'r', NULL, &o.rates},
		{"events", no_argument, 'e', NULL, &o.events},
		{"output", required_argument, 'o', &o.out, NULL},
		{"force", no_argument, 'f', NULL, &o.force},
		{"format", required_argument, 'F', &o.format, NULL},
		{"host", required_argument, 'H', &o.host, NULL},
		{"info", no_argument, 'I', NULL, &info},
		{"json", no_argument, 'J', NULL, &json},
		{"ring", required_argument, 'R', &ring, NULL},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char *const help[] = {usage_text, NULL};
	struct vms_tool_cmd cmd = {.tool = "dump", .shortopts = ":reo:fF:Ih", .opts = opts, .help = help};
	int c;
	while ((c = vms_tool_next(&cmd, argc, argv)) > 0)
		;
	if (c < 0)
		return cmd.rc;
	if (ring && optind != argc)
		return vms_tool_usage("dump", "--ring RING and FILE exclude each other", NULL);
	if (!ring && vms_tool_one_operand("dump", argc, "FILE"))
		return 2;
	if (json && !info)
		return vms_tool_usage("dump", "--json goes with --info (JSON lines of the frames: --format json)",
				      NULL);
	if (info) {
		if (o.rates || o.events || strcmp(o.out, "-") != 0 || o.force || o.host || strcmp(o.format, "csv") != 0)
			return vms_tool_usage("dump", "--info prints to standard output, without other options", NULL);
		return dump_info(ring ? ring : argv[optind], json);
	}
	if (o.rates && o.events)
		return vms_tool_usage("dump", "--rates and --events exclude each other", NULL);
	const char *in = ring ? ring : argv[optind];
	if (strcmp(o.format, "csv") != 0) {
		if (strcmp(o.format, "influx") != 0 && strcmp(o.format, "json") != 0 && strcmp(o.format, "jsonl") != 0)
			return vms_tool_usage("dump", "--format is csv, influx or json", o.format);
		if (o.events || strcmp(o.out, "-") != 0 || o.force)
			return vms_tool_usage("dump", "--format influx and json go to standard output, without "
					  "--events, -o or --force", NULL);
		return dump_lines(&o, in);
	}
	if (o.host)
		return vms_tool_usage("dump", "--host goes with --format influx", NULL);
	return dump_run(&o, in);
}
