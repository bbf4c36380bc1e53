/* SPDX-License-Identifier: MIT */
/* export_opts.c - `vmsampler export`'s options (export_opts.h): the
 * command line read through the tools' option loop (tool.h), each value
 * checked, then the options checked together. */
#include "export_opts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "log.h"
#include "rotname.h"
#include "tool.h"
#include "vms.h"
#include "vms_build.h"

static const char usage_text[] =
	"Usage: vmsampler export (--ring PATH | --file FILE.vms) [--listen ADDR:PORT]\n"
	"                        [--tls-cert FILE --tls-key FILE] [--basic-auth FILE]\n"
	"                        [--header-timeout SECONDS] [--timestamps]\n"
	"       vmsampler export (--file FILE.vms | --ring PATH) --remote-write URL\n"
	"                        [--rw-cursor FILE] [--rw-batch N|SIZE] [--no-follow]\n"
	"                        [--rw-bearer-file FILE] [--rw-basic-auth FILE]\n"
	"                        [--rw-ca FILE] [--label KEY=VALUE ...]\n"
	"                        [--listen ADDR:PORT ...]\n"
	"       vmsampler export --file FILE.vms --list-columns\n"
	"  with each: [--names current|legacy] [--include GLOB]... [--exclude GLOB]...\n"
	"             [--no-per-cpu] [--interference-top N]\n"
	"Serve the newest frame of a live ring (vmsampler --ring PATH) or of a binary\n"
	"stream that is still being written as Prometheus metrics on\n"
	"http://ADDR:PORT/metrics, until SIGINT or SIGTERM.  Names, units and labels\n"
	"are node_exporter's and the libvirt exporter's where they have the same\n"
	"quantity (node_cpu_seconds_total, libvirt_domain_info_cpu_time_seconds_total,\n"
	"...), vmsampler_* for the rest; every name is in vmsampler(1), EXPORT.\n"
	"\n"
	"  -r, --ring=PATH        follow the live ring at PATH\n"
	"  -f, --file=FILE        follow the binary stream FILE (.vms) as it grows, and\n"
	"                         on through rotation and rewrites, like tail -F\n"
	"  -l, --listen=ADDR:PORT where to listen (default 127.0.0.1:9465: loopback\n"
	"                         only; [::1]:PORT for IPv6, 0.0.0.0:PORT for every\n"
	"                         interface; port 0 picks a free one, said on stderr)\n"
	"      --tls-cert=FILE    serve HTTPS with this PEM certificate (and --tls-key)\n"
	"      --tls-key=FILE     the certificate's PEM private key\n"
	"      --basic-auth=FILE  require HTTP basic authentication: FILE holds one\n"
	"                         line USER:PASSWORD and may not be readable by others\n"
	"      --header-timeout=SECONDS  close a connection whose request head is not\n"
	"                         complete SECONDS after it opened or after its last\n"
	"                         response (default 10; 0.01 to 3600).  A client\n"
	"                         address holds at most 8 connections at a time,\n"
	"                         all clients together 256\n"
	"      --timestamps       stamp every sample of /metrics with its frame's wall\n"
	"                         time (default: none, as Prometheus expects of a\n"
	"                         target: a series that ends is then marked stale at\n"
	"                         the next scrape instead of lingering 5 minutes)\n"
	;
/* the rest (one string would pass C99's 4095 characters) */
static const char usage_text2[] =
	"  -w, --remote-write=URL push every frame to URL with Prometheus remote write\n"
	"                         1.0, under the names of /metrics, with staleness\n"
	"                         markers for series that end; then /metrics only\n"
	"                         when --listen is given.  With --ring and --file\n"
	"                         both: /metrics from the ring, remote write from\n"
	"                         the file\n"
	"      --rw-cursor=FILE   remote write of a file without loss or repeats: FILE\n"
	"                         says what the receiver acknowledged (rewritten after\n"
	"                         each request); a restart resumes right after it.\n"
	"                         Without it every start sends the file from its start\n"
	"      --rw-batch=N|SIZE  frames per request (N, default 60) or its protobuf's\n"
	"                         size (SIZE with k or M, default 4M), whichever comes\n"
	"                         first; at the end of the input what waits goes at once\n"
	"      --no-follow        push the file to its end and exit (no waiting for more)\n"
	"      --rw-bearer-file=FILE  send Authorization: Bearer with FILE's one line\n"
	"      --rw-basic-auth=FILE   HTTP basic authentication, FILE's USER:PASSWORD\n"
	"                         (both files may not be readable by others)\n"
	"      --rw-ca=FILE       verify the receiver's certificate with these CAs (PEM)\n"
	"                         instead of the system's\n"
	"      --label=KEY=VALUE  a label for every series pushed (repeatable, up to\n"
	"                         16: job, dc, ...), as Prometheus' external_labels:\n"
	"                         a series' own label of the same name wins.  Every\n"
	"                         series carries instance, by default the hostname\n"
	"                         recorded in the input (vmsampler dump --info);\n"
	"                         --label instance=NAME sets another\n"
	"      --names=SET        current (default): node_exporter 1.9's and the\n"
	"                         maintained libvirt exporter's names (libvirt_domains,\n"
	"                         libvirt_domain_info_state{state_desc}, ...); legacy:\n"
	"                         vmsampler 1.x's (libvirt_domains_number, ...)\n"
	"      --include=GLOB     only the families GLOB names (a counter's name with\n"
	"                         or without _total; repeatable: any of them)\n"
	"      --exclude=GLOB     not the families GLOB names (repeatable; applied\n"
	"                         after the includes)\n"
	"      --no-per-cpu       leave out the per-CPU series (node_cpu_seconds_total,\n"
	"                         perf's per CPU); the all-CPU families stay\n"
	"      --interference-top=N  per domain, a series for each of the N other VMs\n"
	"                         it waited behind longest (default 3), the rest summed\n"
	"                         in vmsampler_domain_interference_by_other_vms_seconds\n"
	"                         (the estimate's: ..._estimate_by_other_vms_seconds)\n"
	"      --list-columns     print what each column of FILE becomes (a series,\n"
	"                         filtered, or excluded and why) and exit\n"
	"  -h, --help             show this help\n"
	"\n"
	"Formats by the Accept header: OpenMetrics 1.0.0 when it names\n"
	"application/openmetrics-text (as Prometheus does), else the Prometheus text\n"
	"format 0.0.4; gzip when Accept-Encoding allows it.  No timestamps (unless\n"
	"--timestamps) and no instance or job label (the scraper sets them);\n"
	"vmsampler_host_info names the recorded host.  No frame for 3 intervals:\n"
	"vmsampler_export_source_up 0 and none of the sampler's series.  Other paths\n"
	"answer 404.  With --remote-write, /metrics also has the pusher's counters\n"
	"(vmsampler_export_rw_*).\n"
	"\n"
	"Exit status: 0 stopped (SIGINT, SIGTERM, or the writer exited cleanly), 1 the\n"
	"input failed (the writer died, damaged input, an I/O error) or the receiver\n"
	"of --remote-write refused, 2 usage or configuration error: a bad option, an\n"
	"input that is missing or not a vmsampler ring or stream, a file of an\n"
	"option that is refused or cannot be used, an address that cannot be bound.\n"
	"See vmsampler(1).\n";


/* --header-timeout: seconds (a decimal fraction allowed), from 0.01 to 3600 */
static int parse_seconds(const char *s, uint64_t *ns)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0.01 && v <= 3600))
		return -1;
	*ns = (uint64_t)(v * 1e9 + 0.5);
	return 0;
}

/* --label KEY=VALUE: NULL if good (KEY a label name, not reserved, not one
 * of the n before; VALUE not empty), else why not */
static const char *label_check(const char *kv, const char *const *before, unsigned n)
{
	const char *eq = strchr(kv, '=');
	char key[128]; /* a label name, not a column's */
	if (!eq || eq == kv || (size_t)(eq - kv) >= sizeof(key))
		return "--label: expected KEY=VALUE";
	memcpy(key, kv, (size_t)(eq - kv));
	key[eq - kv] = '\0';
	if (!vms_mname_ok(key, false))
		return "--label: KEY must match [a-zA-Z_][a-zA-Z0-9_]* (Prometheus' label names)";
	if (!strncmp(key, "__", 2))
		return "--label: names starting with __ are reserved to Prometheus";
	if (!eq[1])
		return "--label: an empty VALUE (an empty label is no label)";
	for (unsigned k = 0; k < n; k++)
		if (!strncmp(before[k], kv, (size_t)(eq - kv) + 1))
			return "--label: the same KEY twice";
	return NULL;
}

/* --rw-batch: N frames, or a size with k or M */
static int parse_batch(const char *s, unsigned *frames, size_t *bytes)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || !v || s[0] == '-')
		return -1;
	if (!*end) {
		if (v > 1000000)
			return -1;
		*frames = (unsigned)v;
		return 0;
	}
	unsigned long long mul = (!strcmp(end, "k") || !strcmp(end, "K")) ? 1024 : (!strcmp(end, "M") || !strcmp(end, "m")) ? 1024 * 1024 : 0;
	if (!mul || v > (1ull << 30) / mul)
		return -1;
	*bytes = (size_t)(v * mul);
	return 0;
}

const char *const vms_export_help[] = {usage_text, usage_text2, NULL};

/* The options alone, as given: -1 to go on, else the exit status. */
static int read_options(struct vms_xopts *o, int argc, char **argv)
{
	enum { OPT_CERT = 256, OPT_KEY, OPT_AUTH, OPT_CURSOR, OPT_BATCH, OPT_BEARER, OPT_RWAUTH, OPT_CA,
	       OPT_NOFOLLOW, OPT_HEADER_TIMEOUT, OPT_LABEL, OPT_TIMESTAMPS, OPT_NAMES, OPT_INCLUDE, OPT_EXCLUDE,
	       OPT_NO_PER_CPU, OPT_LIST, OPT_INTF_TOP };
	const struct vms_tool_opt opts[] = {
		{"ring", required_argument, 'r', &o->ring, NULL},
		{"file", required_argument, 'f', &o->file, NULL},
		{"listen", required_argument, 'l', &o->listen, NULL},
		{"tls-cert", required_argument, OPT_CERT, &o->cert, NULL},
		{"tls-key", required_argument, OPT_KEY, &o->key, NULL},
		{"basic-auth", required_argument, OPT_AUTH, &o->auth, NULL},
		{"header-timeout", required_argument, OPT_HEADER_TIMEOUT, NULL, NULL},
		{"remote-write", required_argument, 'w', &o->rw_url, NULL},
		{"rw-cursor", required_argument, OPT_CURSOR, &o->rw_cursor, NULL},
		{"rw-batch", required_argument, OPT_BATCH, NULL, NULL},
		{"rw-bearer-file", required_argument, OPT_BEARER, &o->rw_bearer, NULL},
		{"rw-basic-auth", required_argument, OPT_RWAUTH, &o->rw_auth, NULL},
		{"rw-ca", required_argument, OPT_CA, &o->rw_ca, NULL},
		{"no-follow", no_argument, OPT_NOFOLLOW, NULL, &o->no_follow},
		{"label", required_argument, OPT_LABEL, NULL, NULL},
		{"timestamps", no_argument, OPT_TIMESTAMPS, NULL, &o->stamp},
		{"names", required_argument, OPT_NAMES, NULL, NULL},
		{"include", required_argument, OPT_INCLUDE, NULL, NULL},
		{"exclude", required_argument, OPT_EXCLUDE, NULL, NULL},
		{"no-per-cpu", no_argument, OPT_NO_PER_CPU, NULL, &o->mo.no_per_cpu},
		{"interference-top", required_argument, OPT_INTF_TOP, NULL, NULL},
		{"list-columns", no_argument, OPT_LIST, NULL, &o->list},
		{NULL, 0, 0, NULL, NULL},
	};
	/* in enum vms_names' order */
	static const char *const names[] = {"current", "legacy", NULL};
	struct vms_tool_cmd cmd = {.tool = "export", .shortopts = ":r:f:l:w:h", .opts = opts, .help = vms_export_help};
	int c, k;
	while ((c = vms_tool_next(&cmd, argc, argv)) > 0) {
		const char *why;
		switch (c) {
		case OPT_HEADER_TIMEOUT:
			o->header_set = true;
			if (parse_seconds(optarg, &o->header_timeout) < 0)
				return vms_tool_usage("export", "--header-timeout: expected seconds from 0.01 to 3600",
						      optarg);
			break;
		case OPT_BATCH:
			if (parse_batch(optarg, &o->rw_frames, &o->rw_bytes) < 0)
				return vms_tool_usage("export", "--rw-batch: expected a number of frames (1 to 1000000) "
						  "or a size such as 512k or 8M (up to 1024M)", optarg);
			break;
		case OPT_LABEL:
			if (o->nlabels == VMS_XOPT_MAX_LABELS)
				return vms_tool_usage("export", "--label: at most 16", optarg);
			if ((why = label_check(optarg, o->labels, o->nlabels)))
				return vms_tool_usage("export", why, optarg);
			o->labels[o->nlabels++] = optarg;
			break;
		case OPT_NAMES:
			if ((k = vms_tool_pick(optarg, names)) < 0)
				return vms_tool_usage("export", "--names: expected current or legacy", optarg);
			o->mo.names = (uint8_t)k;
			break;
		case OPT_INTF_TOP: {
			uint64_t n;
			if (vms_tool_parse_u64(optarg, &n) < 0 || n > 1000)
				return vms_tool_usage("export", "--interference-top wants a number from 0 to 1000", optarg);
			o->mo.intf_top = (unsigned)n;
			o->mo.intf_top_set = true;
			break;
		}
		case OPT_INCLUDE:
		case OPT_EXCLUDE:
			if (!vms_mfam_glob_ok(optarg))
				return vms_tool_usage("export", "--include/--exclude: expected a glob of metric family "
						      "names (letters, digits, _ : * ? [ ] ! -)", optarg);
			if ((c == OPT_INCLUDE ? o->mo.ninclude : o->mo.nexclude) == VMS_XOPT_MAX_GLOBS)
				return vms_tool_usage("export", "--include/--exclude: at most 64 of each", optarg);
			if (c == OPT_INCLUDE)
				o->inc[o->mo.ninclude++] = optarg;
			else
				o->exc[o->mo.nexclude++] = optarg;
			break;
		}
	}
	if (c < 0)
		return cmd.rc;
	if (optind != argc)
		return vms_tool_usage("export", "unexpected argument", argv[optind]);
	return -1;
}

/* --file names a rotated file (vmsampler(1), --rotate) that the sampler
 * has compressed since (NAME.zst, the same frames): read that, so that the
 * command that followed the run from its first file, and its --rw-cursor,
 * go on after the compression (a unit restarted with the same
 * ExecStart=). */
static void compressed_since(struct vms_xopts *o)
{
	struct stat st;
	if (!o->file || stat(o->file, &st) == 0 || errno != ENOENT)
		return;
	const char *base = strrchr(o->file, '/');
	base = base ? base + 1 : o->file;
	size_t sl, bl = strlen(base);
	char ext[256];
	bool zst = bl > 4 && strcmp(base + bl - 4, ".zst") == 0;
	if (zst || !vms_rotname_split(base, &sl, ext, sizeof(ext)) ||
	    (size_t)snprintf(o->file_zst, sizeof(o->file_zst), "%s.zst", o->file) >= sizeof(o->file_zst) ||
	    stat(o->file_zst, &st) != 0)
		return;
	vms_info("export: %s was compressed since: reading %s", o->file, o->file_zst);
	o->file = o->file_zst;
}

/* The options together: -1 to go on, else the exit status. */
static int check_options(struct vms_xopts *o)
{
	if (o->list) {
		if (!o->file || o->ring || o->listen || o->rw_url)
			return vms_tool_usage("export", "--list-columns goes with --file alone", NULL);
		return -1;
	}
	if (!o->ring && !o->file)
		return vms_tool_usage("export", "missing --ring or --file", NULL);
	if (!o->cert != !o->key)
		return vms_tool_usage("export", "--tls-cert and --tls-key go together", NULL);
	if (!o->rw_url) {
		if (o->ring && o->file)
			return vms_tool_usage("export", "give --ring or --file, not both (both only with "
					  "--remote-write and --listen)", NULL);
		if (o->rw_cursor || o->rw_frames || o->rw_bytes || o->rw_bearer || o->rw_auth || o->rw_ca ||
		    o->no_follow)
			return vms_tool_usage("export", "--rw-* and --no-follow go with --remote-write", NULL);
		if (o->nlabels)
			return vms_tool_usage("export", "--label goes with --remote-write (a scraper sets its "
					  "own labels: see vmsampler(1), EXPORT)", NULL);
		if (!o->listen)
			o->listen = VMS_XOPT_LISTEN;
		return -1;
	}
#if !HAVE_REMOTE_WRITE
	fprintf(stderr, "vmsampler export: this build has no remote write (protobuf-c, snappy, libcurl)\n");
	return 2;
#endif
	if (strncasecmp(o->rw_url, "http://", 7) != 0 && strncasecmp(o->rw_url, "https://", 8) != 0)
		return vms_tool_usage("export", "--remote-write wants an http:// or https:// URL", o->rw_url);
	if (o->ring && o->file && !o->listen)
		return vms_tool_usage("export", "--ring and --file together: the ring for --listen, the "
				  "file for --remote-write; --listen is missing", NULL);
	if (o->rw_cursor && !o->file)
		return vms_tool_usage("export", "--rw-cursor needs --file (a ring cannot replay)", NULL);
	if (o->no_follow && !o->file)
		return vms_tool_usage("export", "--no-follow needs --file", NULL);
	if (o->no_follow && o->listen)
		return vms_tool_usage("export", "--no-follow goes without --listen", NULL);
	if ((o->cert || o->auth || o->header_set || o->stamp) && !o->listen)
		return vms_tool_usage("export", "--tls-cert, --tls-key, --basic-auth, --header-timeout and "
				  "--timestamps go with --listen", NULL);
	return -1;
}

int vms_xopts_parse(struct vms_xopts *o, int argc, char **argv)
{
	*o = (struct vms_xopts){.header_timeout = VMS_XOPT_HEADER_TIMEOUT_NS};
	o->mo.include = o->inc;
	o->mo.exclude = o->exc;
	int rc = read_options(o, argc, argv);
	if (rc < 0 && (rc = check_options(o)) < 0)
		compressed_since(o);
	return rc;
}
