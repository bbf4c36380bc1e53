/* SPDX-License-Identifier: MIT */
/* report.c - `vmsampler report` (report.h): its command line, and the
 * readings it asks of report_read.c, printed by report_out.c.  The parts
 * and what they share: report_int.h. */
#include "report_int.h"

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
#include "report_intf.h"
#include "sink.h"
#include "tool.h"

static const char usage_text[] =
	"Usage: vmsampler report FILE.vms|RING [--interval N] [--from T] [--to T]\n"
	"                        [--summary] [--vm] [--json] [--section LIST] [-P ALL|N]\n"
	"       vmsampler report --ring PATH [OPTIONS]\n"
	"       vmsampler report --compare A.vms B.vms [--window W] [--format FMT]\n"
	"       vmsampler report FILE.vms --window W1 --window W2 [--format FMT]\n"
	"       vmsampler report --interference FILE.vms [--window W] [--format FMT]\n"
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
	"      --interference  whom each VM's vCPUs waited behind, over the run or\n"
	"                    one --window (report --interference --help)\n"
	"  -h, --help        show this help\n"
	"\n"
	"Exit status: 0 success (a torn tail is reported on stderr), 1 damaged\n"
	"input (what was read before the damage is reported) or an I/O error, 2\n"
	"usage or configuration error: a bad option, an input that is missing or\n"
	"not a vmsampler stream or ring.  See vmsampler(1).\n";

static int parse_interval(const char *s, double *v)
{
	const char *e;
	if (rpt_parse_num(s, v, &e) < 0)
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
			if (strlen(rpt_sections[s].id) == n && strncmp(p, rpt_sections[s].id, n) == 0)
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

/* Read and print what *R asks, say what failed, free it: the exit status. */
static int report_run(struct report *R)
{
	signal(SIGPIPE, SIG_IGN);
	static char obuf[1 << 16];
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	int rc = 0, r = rpt_open_input(R), failed = 0;
	if (r < 0) {
		vms_err("%s", R->err);
		report_free(R);
		return vms_tool_input_status(r, false);
	}
	if (R->summary) {
		r = failed = rpt_summarize(R);
		if (r < 0 && !R->err[0])
			snprintf(R->err, sizeof(R->err), "%s: %s", R->in, strerror(-r));
		R->mode = R->json ? M_JSON : M_TEXT;
		rpt_title(R);
		if (!R->oerr)
			rpt_print_summary(R);
		if (R->json)
			rpt_json_tail(R);
		else if (R->nev)
			fputs("\nEvents:\n", R->out);
		for (size_t i = 0; !R->json && i < R->nev; i++)
			rpt_text_event(R, &R->evs[i]);
	} else {
		/* one reading per section, in sar's order; the first one also
		 * learns which sections have columns */
		enum mode m = R->json ? M_JSON : M_TEXT;
		R->mode = m;
		R->seen = R->only & -R->only; /* the first section asked for: its reading learns the others */
		if (R->json)
			rpt_title(R);
		for (unsigned s = 0; s < S_N && !R->oerr; s++) {
			if (!((R->seen >> s) & 1) || (s == S_VM && !R->vm) || !((R->only >> s) & 1))
				continue;
			r = rpt_run_pass(R, m, 1u << s);
			if (r < 0 && !failed)
				failed = r;
			if (r < 0 && R->npass == 1 && !R->rows)
				break;
			rpt_section_end(R, s);
		}
		if (R->json)
			rpt_json_tail(R);
	}
	if (fflush(R->out) == EOF || ferror(R->out)) {
		int e = R->oerr ? R->oerrno : errno;
		if (e != EPIPE) {
			vms_err("output: %s", strerror(e));
			rc = 1;
		}
	}
	if (R->err[0] && !R->oerr) {
		vms_err("%s", R->err);
		rc = vms_tool_input_status(failed ? failed : -EBADMSG, true);
	} else if (R->warn[0]) {
		vms_warn("%s", R->warn);
	}
	if (!R->rows && !R->err[0])
		vms_warn("%s: no row to report (%llu frames read%s)", R->in, (unsigned long long)R->nframes,
			 R->interval > 0 || R->from.kind || R->to.kind ? ", in the time and interval asked" : "");
	report_free(R);
	return rc;
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

	if (vms_report_intf_wanted(argc, argv))
		return vms_report_intf_main(argc, argv);
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

	return report_run(&R);
}
