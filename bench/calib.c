/* SPDX-License-Identifier: MIT */
/* calib.c - calibration for tracesplit.py (bench/run.sh).
 *
 * 2000 times: sleep 200 us, then 20 getppid() system calls back to back.
 * There is (almost) no user-space work between the calls, so the "user"
 * time tracesplit.py measures between a sys_exit and the next sys_enter is
 * the part of a kernel entry+exit that lies outside the tracepoints; run.sh
 * subtracts it, per system call, from the samplers' user time. */
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	struct timespec ts = {0, 200000};
	for (int i = 0; i < 2000; i++) {
		nanosleep(&ts, NULL);
		for (int j = 0; j < 20; j++)
			syscall(SYS_getppid);
	}
	return 0;
}
