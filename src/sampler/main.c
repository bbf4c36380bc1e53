/* SPDX-License-Identifier: MIT */
/* main.c - the command line, the configuration, and the loop's wiring.
 *
 * Exit codes: 0 success (including SIGINT/SIGTERM), 1 runtime failure
 * (after a good start, or the machine's: memory, room, I/O), 2 usage or
 * configuration error, said in one line (vmsampler(1), EXIT STATUS).  Usage errors are one line on stderr
 * ending in "Try 'vmsampler --help'."; configuration file errors are one
 * line "FILE:LINE:COL: message". */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cli.h"
#include "libexec.h"
#include "config.h"
#include "log.h"
#include "loop.h"
#include "out.h"
#include "priv.h"
#include "safefile.h"
#include "service.h"
#include "sink.h"
#include "vms_build.h"


#define EXIT_RUNTIME 1
#define EXIT_USAGE 2

static int usage_error(const char *msg)
{
	fprintf(stderr, "vmsampler: %s. Try 'vmsampler --help'.\n", msg);
	return EXIT_USAGE;
}

/* stdout is where --help, --version and --print-config go: a failed write
 * (a full disk, a closed pipe) must not exit 0. */
static int close_stdout(void)
{
	if (fflush(stdout) == EOF || ferror(stdout)) {
		vms_err("write error on stdout: %s", strerror(errno));
		return EXIT_RUNTIME;
	}
	return 0;
}

/* Until the loop takes SIGINT and SIGTERM over (signalfd), they only set
 * a flag: an open that waits for the other end of a FIFO (-o) then
 * gives up with EINTR, and the run ends with status 0 as a stopped run
 * does.  No SA_RESTART, so that the waiting open() is interrupted. */
static void on_stop(int sig)
{
	(void)sig;
	vms_out_stop = 1;
}

static void catch_stop(void)
{
	struct sigaction sa = {.sa_handler = on_stop};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* `vmsampler dump|tail|mark ...` is the reader tools' program, run in this
 * process (same pid, arguments and exit status): the sampler's binary
 * carries no reader code. */
static int run_tool(char **argv)
{
	char *path = vms_libexec_path(VMS_TOOLS_NAME);
	if (!path) {
		vms_err("out of memory");
		return EXIT_RUNTIME;
	}
	execv(path, argv);
	vms_err("cannot run %s (vmsampler %s): %s", path, argv[1], strerror(errno));
	free(path);
	return EXIT_RUNTIME;
}

/* Every VM keeps its kernel files open (cgroup, /proc/<pid>, taps: up to
 * ~25 a VM with the cgroup values, plus its perf counters): 60 VMs pass
 * the soft limit of 1024 open files that systemd and most shells set.  The
 * sampler never uses select(), so the soft limit is raised to the hard one
 * (bounded: a hard limit of "infinity" becomes 1 << 20). */
static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	rlim_t want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > (1u << 20) ? (1u << 20) : rl.rlim_max;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		rlim_t old = rl.rlim_cur;
		rl.rlim_cur = want;
		if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
			vms_debug("open files: soft limit raised from %llu to %llu", (unsigned long long)old,
				  (unsigned long long)want);
	}
}

static int run(const struct vms_config *conf)
{
	struct vms_loop loop;
	struct vms_service sv;
	struct vms_loop_hooks hooks;
	int r, rc;

	raise_nofile();

	if (!vms_sink_for_format(vms_config_format(conf))) {
		vms_err("this build has no %s output",
			vms_config_format(conf) == VMS_FORMAT_BIN ? "binary (.vms)" : "CSV");
		return EXIT_USAGE;
	}
	if (vms_config_format(conf) == VMS_FORMAT_BIN && strcmp(conf->output, "-") == 0 &&
	    isatty(STDOUT_FILENO)) {
		fprintf(stderr, "vmsampler: refusing to write binary frames to a terminal; "
				"use -o FILE.vms or a pipe\n");
		return EXIT_USAGE;
	}
	/* user: from here on the user, with the capabilities the enabled
	 * sources need (priv.h); those needed only to open are dropped once
	 * everything is open */
	struct vms_privs privs;
	char why[512];
	vms_priv_needed(conf, &privs);
	r = vms_priv_drop(conf, &privs, why, sizeof(why));
	if (r < 0) {
		fprintf(stderr, "vmsampler: %s\n", why);
		return EXIT_USAGE;
	}
	r = vms_service_init(&sv, conf, &hooks);
	if (r < 0) {
		vms_err("out of memory");
		return EXIT_RUNTIME;
	}
	r = vms_loop_init(&loop, conf, NULL, &hooks);
	vms_priv_started(&privs);
	if (r < 0) {
		vms_loop_fini(&loop);
		vms_service_fini(&sv);
		if (vms_out_stop)
			return 0; /* stopped while an output FIFO waited for its reader */
		/* said in one line; a path or a file that is wrong (an output
		 * in a missing directory, one not ours, a link, a live ring, a
		 * proc root that is not there, a required source this host
		 * lacks) is a configuration error, not one to restart on; the
		 * machine's failures (memory, room, I/O) are runtime ones */
		return vms_safe_status(r);
	}
	r = vms_service_signals(&sv);
	if (r < 0)
		vms_err("cannot set up signal handling: %s", strerror(-r));
	if (r < 0 || vms_out_stop) {
		/* (vms_out_stop: stopped during the start-up, before signalfd
		 * took over) */
		vms_loop_fini(&loop);
		vms_service_fini(&sv);
		return r < 0 ? EXIT_RUNTIME : 0;
	}
	vms_service_start(&sv);
	rc = vms_loop_run(&loop) < 0 ? EXIT_RUNTIME : 0;
	if (vms_loop_fini(&loop) < 0)
		rc = EXIT_RUNTIME;
	vms_service_fini(&sv);
	return rc;
}

int main(int argc, char **argv)
{
	struct vms_config conf;
	struct vms_cli cli;
	char err[1024];
	int r, rc;

	if (argc > 1 && (!strcmp(argv[1], "dump") || !strcmp(argv[1], "tail") || !strcmp(argv[1], "mark") ||
			 !strcmp(argv[1], "report") || !strcmp(argv[1], "export")))
		return run_tool(argv);
	r = vms_cli_parse(&cli, argc, argv, err, sizeof(err));
	if (r == -ENOMEM) {
		vms_err("out of memory");
		return EXIT_RUNTIME;
	}
	if (r < 0)
		return usage_error(err);
	if (cli.action == VMS_CLI_HELP) {
		vms_cli_help(stdout);
		return close_stdout();
	}
	if (cli.action == VMS_CLI_VERSION) {
		vms_cli_version(stdout);
		return close_stdout();
	}

	if (vms_config_defaults(&conf) < 0) {
		vms_config_free(&conf);
		vms_err("out of memory");
		return EXIT_RUNTIME;
	}
	catch_stop();
	if (cli.config_path) {
		/* a regular file only (safefile.h): no FIFO to wait for here */
		r = vms_config_load_file(&conf, cli.config_path, err, sizeof(err));
		if (r < 0) {
			if (r == -EINVAL)
				fprintf(stderr, "%s\n", err); /* FILE:LINE:COL: message */
			else
				fprintf(stderr, "vmsampler: %s\n", err);
			vms_config_free(&conf);
			return vms_safe_status(r);
		}
	}
	r = vms_cli_apply(&cli, &conf, err, sizeof(err));
	if (r < 0) {
		/* the values were checked while parsing: only ENOMEM is left */
		fprintf(stderr, "vmsampler: %s\n", err);
		vms_config_free(&conf);
		return r == -ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
	}
	conf.force = cli.force;
	vms_log_level = conf.log_level;
	if (cli.config_path)
		vms_debug("configuration read from %s", cli.config_path);

	if (cli.action == VMS_CLI_PRINT_CONFIG) {
		rc = vms_config_write(&conf, stdout) < 0 ? EXIT_RUNTIME : 0;
		if (close_stdout())
			rc = EXIT_RUNTIME;
	} else {
		rc = run(&conf);
	}
	vms_config_free(&conf);
	return rc;
}
