/* SPDX-License-Identifier: MIT */
/* cli.c - the command line (see cli.h). */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "sink.h"
#include "source.h"
#include "vms_build.h"

enum {
	OPT_ALIGN = 256,
	OPT_CSV_LAYOUT,
	OPT_PROC_ROOT,
	OPT_RING_SLOTS,
	OPT_RING,
	OPT_CONTROL,
	OPT_PRINT_CONFIG,
	OPT_FORCE,
	OPT_USER,
	OPT_ROTATE,
	OPT_KEEP,
	OPT_COMPRESS,
};

#define SHORTOPTS ":i:n:o:f:c:qvhV"

const struct option vms_cli_options[] = {
	{"interval", required_argument, NULL, 'i'},
	{"count", required_argument, NULL, 'n'},
	{"align", required_argument, NULL, OPT_ALIGN},
	{"proc-root", required_argument, NULL, OPT_PROC_ROOT},
	{"ring-slots", required_argument, NULL, OPT_RING_SLOTS},
	{"ring", required_argument, NULL, OPT_RING},
	{"control", required_argument, NULL, OPT_CONTROL},
	{"output", required_argument, NULL, 'o'},
	{"format", required_argument, NULL, 'f'},
	{"csv-layout", required_argument, NULL, OPT_CSV_LAYOUT},
	{"rotate", required_argument, NULL, OPT_ROTATE},
	{"keep", required_argument, NULL, OPT_KEEP},
	{"compress", required_argument, NULL, OPT_COMPRESS},
	{"force", no_argument, NULL, OPT_FORCE},
	{"user", required_argument, NULL, OPT_USER},
	{"config", required_argument, NULL, 'c'},
	{"print-config", no_argument, NULL, OPT_PRINT_CONFIG},
	{"quiet", no_argument, NULL, 'q'},
	{"verbose", no_argument, NULL, 'v'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

/* Options that set a key; value NULL: the option's argument. */
static const struct {
	int val;
	const char *key;
	const char *value;
} opt_keys[] = {
	{'i', "interval", NULL},
	{'n', "count", NULL},
	{OPT_ALIGN, "align", NULL},
	{OPT_PROC_ROOT, "proc_root", NULL},
	{OPT_RING_SLOTS, "ring_slots", NULL},
	{OPT_RING, "ring_path", NULL},
	{OPT_CONTROL, "control_path", NULL},
	{OPT_USER, "user", NULL},
	{'o', "output", NULL},
	{'f', "format", NULL},
	{OPT_CSV_LAYOUT, "csv_layout", NULL},
	{OPT_ROTATE, "rotate", NULL},
	{OPT_KEEP, "keep", NULL},
	{OPT_COMPRESS, "compress", NULL},
	{'q', "log_level", "error"},
	{'v', "log_level", "debug"},
};

static const struct option *option_by_val(int val)
{
	for (const struct option *o = vms_cli_options; o->name; o++)
		if (o->val == val)
			return o;
	return NULL;
}

/* The option as typed ("--interval" or "-i") for messages about `val`. */
static void option_text(char *buf, size_t len, int val, const char *arg)
{
	const struct option *o = option_by_val(val);
	if (arg && strncmp(arg, "--", 2) == 0 && o)
		snprintf(buf, len, "--%s", o->name);
	else if (val > 0 && val < 256)
		snprintf(buf, len, "-%c", val);
	else if (o)
		snprintf(buf, len, "--%s", o->name);
	else
		snprintf(buf, len, "?");
}

/* An unknown long option, or an abbreviation of several. */
static void unknown_long(const char *arg, char *err, size_t errlen)
{
	const char *name = arg + 2;
	size_t n = strcspn(name, "=");
	unsigned matches = 0;
	size_t off;

	for (const struct option *o = vms_cli_options; o->name; o++)
		if (n && strncmp(o->name, name, n) == 0)
			matches++;
	if (matches < 2) {
		snprintf(err, errlen, "unknown option '--%.*s'", (int)(n > 64 ? 64 : n), name);
		return;
	}
	off = (size_t)snprintf(err, errlen, "ambiguous option '--%.*s' (could be", (int)n, name);
	for (const struct option *o = vms_cli_options; o->name && off < errlen; o++)
		if (strncmp(o->name, name, n) == 0)
			off += (size_t)snprintf(err + off, errlen - off, " --%s", o->name);
	if (off < errlen)
		snprintf(err + off, errlen - off, ")");
}

static int add_set(struct vms_cli *cli, const char *key, const char *value, const char *opt)
{
	unsigned i;
	for (i = 0; i < cli->nset; i++)
		if (strcmp(cli->set[i].key, key) == 0)
			break;
	if (i == VMS_CLI_MAX_SET)
		return -ENOMEM; /* more keys than the table has options for: a bug */
	cli->set[i] = (struct vms_cli_set){key, value, opt};
	if (i == cli->nset)
		cli->nset++;
	return 0;
}

/* Check a value with the file's rules, on a scratch configuration. */
static int check_value(const char *key, const char *value, const char *opt, char *err, size_t errlen)
{
	struct vms_config scratch;
	char msg[256];
	int r = vms_config_defaults(&scratch);
	if (r == 0)
		r = vms_config_set(&scratch, key, value, msg, sizeof(msg));
	else
		snprintf(msg, sizeof(msg), "out of memory");
	vms_config_free(&scratch);
	if (r < 0) {
		snprintf(err, errlen, "%s: %s", opt, msg);
		return r == -ENOMEM ? r : -EINVAL;
	}
	return 0;
}

int vms_cli_parse(struct vms_cli *cli, int argc, char **argv, char *err, size_t errlen)
{
	char opt[32];
	int c, r;

	memset(cli, 0, sizeof(*cli));
	if (errlen)
		err[0] = '\0';
	optind = 0; /* glibc: full re-initialisation */
	opterr = 0;
	while ((c = getopt_long(argc, argv, SHORTOPTS, vms_cli_options, NULL)) != -1) {
		const char *typed = optind > 0 && optind <= argc ? argv[optind - 1] : NULL;
		switch (c) {
		case '?':
			if (optopt == 0 && typed && strncmp(typed, "--", 2) == 0) {
				unknown_long(typed, err, errlen);
			} else if (optopt && option_by_val(optopt)) {
				/* a known option, so: "--help=x" */
				option_text(opt, sizeof(opt), optopt, "--");
				snprintf(err, errlen, "option '%s' does not take an argument", opt);
			} else if (optopt > 32 && optopt < 127) {
				snprintf(err, errlen, "unknown option '-%c'", optopt);
			} else {
				snprintf(err, errlen, "unknown option '%.64s'", typed ? typed : "?");
			}
			return -EINVAL;
		case ':':
			option_text(opt, sizeof(opt), optopt, typed);
			snprintf(err, errlen, "option '%s' needs an argument", opt);
			return -EINVAL;
		case 'c':
			if (cli->config_path) {
				snprintf(err, errlen, "option '--config' given twice");
				return -EINVAL;
			}
			cli->config_path = optarg;
			continue;
		case 'h':
			cli->action = VMS_CLI_HELP;
			continue;
		case 'V':
			if (cli->action != VMS_CLI_HELP)
				cli->action = VMS_CLI_VERSION;
			continue;
		case OPT_FORCE:
			cli->force = true;
			continue;
		case OPT_PRINT_CONFIG:
			if (cli->action == VMS_CLI_RUN)
				cli->action = VMS_CLI_PRINT_CONFIG;
			continue;
		default:
			break;
		}
		for (size_t i = 0; i < VMS_ARRAY_SIZE(opt_keys); i++) {
			if (opt_keys[i].val != c)
				continue;
			const char *value = opt_keys[i].value ? opt_keys[i].value : optarg;
			const char *lname = option_by_val(c)->name;
			snprintf(opt, sizeof(opt), "--%s", lname);
			r = check_value(opt_keys[i].key, value, opt, err, errlen);
			if (r < 0)
				return r;
			r = add_set(cli, opt_keys[i].key, value, lname);
			if (r < 0) {
				snprintf(err, errlen, "too many options");
				return r;
			}
			break;
		}
	}
	if (optind < argc) {
		const char *a = argv[optind];
		if (strcmp(a, "dump") == 0 || strcmp(a, "tail") == 0 || strcmp(a, "report") == 0 ||
		    strcmp(a, "export") == 0)
			snprintf(err, errlen, "'%s' must be the first argument: vmsampler %s %s", a, a,
				 a[0] == 'd' ? "FILE.vms" : a[0] == 't' ? "RING|FILE.vms" :
				 a[0] == 'e' ? "--ring RING" : "FILE.vms|RING");
		else
			snprintf(err, errlen, "unexpected argument '%.64s'", a);
		return -EINVAL;
	}
	return 0;
}

int vms_cli_apply(const struct vms_cli *cli, struct vms_config *c, char *err, size_t errlen)
{
	char msg[256];
	for (unsigned i = 0; i < cli->nset; i++) {
		int r = vms_config_set(c, cli->set[i].key, cli->set[i].value, msg, sizeof(msg));
		if (r < 0) {
			snprintf(err, errlen, "--%s: %s", cli->set[i].opt, msg);
			return r;
		}
	}
	return 0;
}

void vms_cli_help(FILE *f)
{
	fputs("Usage: vmsampler [OPTIONS]\n", f);
	fputs("       vmsampler dump FILE.vms [--rates | --events] [-o OUT] [--force]\n", f);
	fputs("       vmsampler tail RING|FILE.vms [--columns=GLOBS] [--rates] [-n N] [--new]\n"
	      "                      [--no-follow]\n", f);
	fputs("       vmsampler report FILE.vms|RING [--interval N] [--from T] [--to T]\n"
	      "                        [--summary] [--vm] [--json]\n", f);
	fputs("       vmsampler export (--ring RING | --file FILE.vms) [--listen ADDR:PORT]\n"
	      "                        [--tls-cert FILE --tls-key FILE] [--basic-auth FILE]\n", f);
	fputs("Sample the counters of a Linux host from /proc (and perf_event, in a build\n"
	      "with perf; and per-VM statistics, in a build with libvirt) at a fixed\n"
	      "interval and write them as CSV or binary frames, until SIGINT or SIGTERM\n"
	      "(or -n).\n"
	      "\n"
	      "Sampling:\n"
	      "  -i, --interval=DURATION  time between samples, 10ms to 24h (default 1s);\n"
	      "                           units ns us ms s m h, a bare number is seconds\n"
	      "  -n, --count=N            stop after N frames (default 0: until stopped)\n"
	      "      --align=DURATION     first sample at a wall-clock multiple of DURATION\n"
	      "                           (default 0: start now)\n"
	      "      --proc-root=DIR      read procfs from DIR instead of /proc\n"
	      "      --ring-slots=N       frames kept while the output is slow: a power of\n"
	      "                           two from 2 to 1048576 (default 64)\n"
	      "      --ring=PATH          put the ring in a shared file at PATH (e.g. under\n"
	      "                           /dev/shm, mode 0640) that `vmsampler tail` and\n"
	      "                           libvmsampler readers follow live\n"
	      "      --control=PATH       the control socket for `vmsampler mark` (default\n"
	      "                           RING.ctl with --ring, none without; 'none': none)\n"
	      "      --user=NAME          started as root: open what needs root, then run\n"
	      "                           as NAME with only the capabilities the enabled\n"
	      "                           sources need (vmsampler(1), PRIVILEGES)\n"
	      "\n"
	      "Output:\n"
	      "  -o, --output=PATH        write to PATH; '-' is stdout (the default)\n"
	      "  -f, --format=FORMAT      csv or bin; default auto: bin for a .vms output,\n"
	      "                           csv otherwise\n"
	      "      --csv-layout=LAYOUT  wide: one row per frame (default);\n"
	      "                           long: one row per value\n"
	      "      --rotate=WHEN        write PATH as files STEM-YYYYmmddTHHMMSSZ.EXT\n"
	      "                           (UTC, when each starts), a new one at every\n"
	      "                           multiple of a duration since the epoch (1h, 1d;\n"
	      "                           units s m h d, 1s to 3650d) or once one holds a\n"
	      "                           size (100M; units K M G T P of 1024, 4K to 1P);\n"
	      "                           0: off (the default)\n"
	      "      --keep=LIMIT         with --rotate: delete the oldest closed files of\n"
	      "                           PATH older than a duration (7d) or beyond a\n"
	      "                           total size (10G, the open file counted); 0: all\n"
	      "      --compress=ALGO      with --rotate: none (default) or zstd: each\n"
	      "                           closed file becomes NAME.zst, compressed by a\n"
	      "                           child process at nice 10 (a build with libzstd)\n"
	      "      --force              overwrite an existing file at PATH that is not a\n"
	      "                           vmsampler output of the same format, and follow\n"
	      "                           a symbolic link there (never a ring, live or not)\n"
	      "\n"
	      "Configuration:\n"
	      "  -c, --config=FILE        read settings from the YAML FILE; the options\n"
	      "                           given here override it\n"
	      "      --print-config       print the effective configuration and exit\n"
	      "  (sources.interference.enabled: who each VM waited behind, a BPF program;\n"
	      "   sources.intfest.enabled: the same estimated from /proc, without BPF;\n"
	      "   both off by default: vmsampler.yaml(5), vmsampler(1) INTERFERENCE)\n"
	      "\n"
	      "Messages and information:\n"
	      "  -q, --quiet              log errors only\n"
	      "  -v, --verbose            log debug messages too\n"
	      "  -h, --help               show this help and exit\n"
	      "  -V, --version            show the version and compiled-in features\n"
	      "\n"
	      "Exit status: 0 success (also when stopped by SIGINT or SIGTERM), 1 runtime\n"
	      "failure (after a good start, or of the machine: memory, room, I/O), 2 usage\n"
	      "or configuration error, one line (a bad option or value, a path that cannot\n"
	      "be used or is refused).  SIGHUP reopens the output (with --rotate: the file\n"
	      "being written, by its name).\n"
	      "See vmsampler(1) and vmsampler.yaml(5).\n",
	      f);
}

void vms_cli_version(FILE *f)
{
	fputs("vmsampler " VMS_VERSION "\n", f);
	fprintf(f, "libvirt: %s\n", HAVE_LIBVIRT ? "yes" : "no");
	fprintf(f, "perf: %s\n", HAVE_PERF ? "yes" : "no");
	fprintf(f, "bpf: %s\n", HAVE_BPF ? "yes" : "no");
	fprintf(f, "export: %s\n", HAVE_MICROHTTPD ? "yes" : "no");
	fprintf(f, "remote write: %s\n", HAVE_MICROHTTPD && HAVE_REMOTE_WRITE ? "yes" : "no");
	fprintf(f, "libcap-ng: %s\n", HAVE_CAPNG ? "yes" : "no");
	fprintf(f, "libsystemd: %s\n", HAVE_LIBSYSTEMD ? "yes" : "no");
	fprintf(f, "zstd: %s\n", HAVE_ZSTD ? "yes" : "no");
	fputs("sources:", f);
	for (unsigned i = 0; i < vms_source_registry_len; i++)
		fprintf(f, " %s", vms_source_registry[i]->name);
	fputs("\nformats:", f);
	if (vms_sink_for_format(VMS_FORMAT_CSV))
		fputs(" csv", f);
	if (vms_sink_for_format(VMS_FORMAT_BIN))
		fputs(" bin", f);
	fputc('\n', f);
}
