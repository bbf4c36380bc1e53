/* SPDX-License-Identifier: MIT */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int vms_log_level = VMS_LOG_INFO;
unsigned long vms_log_count;

void vms_log(int level, const char *fmt, ...)
{
	char buf[1024];
	static const char *const tag[] = {"error: ", "warning: ", "", ""};
	va_list ap;
	int n, m;

	vms_log_count++;
	if (level > vms_log_level)
		return;
	n = snprintf(buf, sizeof(buf), "vmsampler: %s", tag[level & 3]);
	va_start(ap, fmt);
	m = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	n += m;
	if ((size_t)n > sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	/* one write(2): lines from concurrent writers do not interleave */
	ssize_t VMS_UNUSED w = write(STDERR_FILENO, buf, (size_t)n);
}
