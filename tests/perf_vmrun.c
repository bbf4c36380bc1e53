/* SPDX-License-Identifier: MIT */
/* perf_vmrun.c - the sampler's loop with processes registered as VMs.
 *
 *   perf_vmrun SECONDS OUT.csv NAME=PID...
 *
 * Until the per-VM source fills the VM table from libvirt, this is how a
 * process is counted as a VM: each NAME=PID goes into the table with
 * vms_vmtab_upsert (what the per-VM source does), then the real loop runs
 * with only the perf source (its default per-VM events, no host events)
 * for SECONDS ticks of 1 s on absolute deadlines and writes CSV to OUT.
 * tests/e2e/vs_perf.py --vm-run uses it to compare vm.NAME.perf.* with
 * `perf stat -p PID`; by hand it works on any process, a QEMU one too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loop.h"
#include "vmtab.h"

static uint64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * VMS_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct vms_config c;
	struct vms_loop l;
	char yaml[1024], err[256];

	if (argc < 4) {
		fprintf(stderr, "usage: perf_vmrun SECONDS OUT.csv NAME=PID...\n");
		return 2;
	}
	vms_config_defaults(&c);
	/* the VMs are the test's (vm_register): no vm source to replace them */
	c.libvirt.src.enabled = false;
	snprintf(yaml, sizeof(yaml), "sources: {loadavg: {enabled: false}, perf: {host: []}}\n");
	if (vms_config_load_buffer(&c, "perf_vmrun", yaml, strlen(yaml), err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	free(c.output);
	c.output = strdup(argv[2]);
	if (vms_loop_init(&l, &c, NULL, NULL) < 0)
		return 1;
	for (int i = 3; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		if (!eq) {
			fprintf(stderr, "perf_vmrun: %s is not NAME=PID\n", argv[i]);
			return 2;
		}
		*eq = '\0';
		struct vms_vm vm = {.name = argv[i], .pid = atoi(eq + 1), .state = 1};
		snprintf(vm.uuid, sizeof(vm.uuid), "00000000-0000-4000-8000-%012d", i);
		if (vms_vmtab_upsert(&l.sh.vms, &vm) < 0)
			return 1;
	}
	int secs = atoi(argv[1]);
	uint64_t t0 = mono();
	for (int k = 0; k <= secs; k++) {
		uint64_t dl = t0 + (uint64_t)k * VMS_NSEC_PER_SEC;
		struct timespec ts = {(time_t)(dl / VMS_NSEC_PER_SEC), (long)(dl % VMS_NSEC_PER_SEC)};
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
			;
		struct vms_tickinfo ti = {.idx = (uint64_t)k, .deadline_ns = dl, .late_ns = mono() - dl};
		vms_loop_tick(&l, &ti);
		vms_loop_drain(&l);
		vms_srchost_idle(&l.sh, dl + VMS_NSEC_PER_SEC);
	}
	int r = vms_loop_fini(&l);
	vms_config_free(&c);
	return r < 0 ? 1 : 0;
}
