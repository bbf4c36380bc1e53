/* SPDX-License-Identifier: MIT */
/* hostid.c - the host's identity for the HOST record (hostid.h).  Read once
 * at start, outside any tick: small files read whole, nothing kept open. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "hostid.h"
#include "name.h"
#include "vms_build.h"

void vms_hostid_set(struct vms_hostid *h, enum vms_hostkey k, const char *fmt, ...)
{
	char raw[VMS_HOSTVAL_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	/* the names' rule (name.h): valid UTF-8 without control characters */
	vms_name_escape(h->val[k], sizeof(h->val[k]), raw, strlen(raw));
}

void vms_hostid_set_version(struct vms_hostid *h, enum vms_hostkey k, uint64_t v)
{
	vms_hostid_set(h, k, "%llu.%llu.%llu", (unsigned long long)(v / 1000000),
		       (unsigned long long)(v / 1000 % 1000), (unsigned long long)(v % 1000));
}

/* The first line of a small file (relative to dirfd, or absolute), without
 * its newline; "" when it cannot be read.  Non-blocking: a FIFO put where a
 * file is expected must not hang the start. */
static void first_line(int dirfd, const char *path, char *out, size_t cap)
{
	out[0] = '\0';
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return;
	ssize_t n = read(fd, out, cap - 1);
	close(fd);
	if (n <= 0) {
		out[0] = '\0';
		return;
	}
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
}

/* "model name : AMD EPYC ..." of the first CPU in cpuinfo (x86; other
 * architectures name it otherwise: "cpu model", "Processor", "uarch"). */
static void cpu_model(int dirfd, struct vms_hostid *h)
{
	int fd = openat(dirfd, "cpuinfo", O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return;
	char buf[8192];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	static const char *const keys[] = {"model name", "cpu model", "Processor", "uarch", "cpu"};
	for (size_t k = 0; k < VMS_ARRAY_SIZE(keys); k++) {
		for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
			size_t kl = strlen(keys[k]);
			if (strncmp(line, keys[k], kl) != 0 || (line[kl] != ' ' && line[kl] != '\t' && line[kl] != ':'))
				continue;
			char *colon = strchr(line, ':'), *end = strchr(line, '\n');
			if (!colon || (end && colon > end))
				continue;
			colon++;
			while (*colon == ' ' || *colon == '\t')
				colon++;
			int len = end ? (int)(end - colon) : (int)strlen(colon);
			vms_hostid_set(h, VMS_HK_CPU_MODEL, "%.*s", len, colon);
			return;
		}
	}
}

/* The time zone: $TZ, else /etc/timezone, else the zone /etc/localtime
 * links to (".../zoneinfo/Europe/Paris"), else the abbreviation. */
static void timezone_name(struct vms_hostid *h)
{
	const char *tz = getenv("TZ");
	char buf[VMS_HOSTVAL_MAX];
	if (tz && *tz) {
		vms_hostid_set(h, VMS_HK_TIMEZONE, "%s", tz[0] == ':' ? tz + 1 : tz);
		return;
	}
	first_line(AT_FDCWD, "/etc/timezone", buf, sizeof(buf));
	if (buf[0]) {
		vms_hostid_set(h, VMS_HK_TIMEZONE, "%s", buf);
		return;
	}
	ssize_t n = readlink("/etc/localtime", buf, sizeof(buf) - 1);
	if (n > 0) {
		buf[n] = '\0';
		const char *z = strstr(buf, "zoneinfo/");
		vms_hostid_set(h, VMS_HK_TIMEZONE, "%s", z ? z + 9 : buf);
		return;
	}
	tzset();
	vms_hostid_set(h, VMS_HK_TIMEZONE, "%s", tzname[0]);
}

void vms_hostid_collect(struct vms_hostid *h, int proc_dirfd)
{
	char buf[VMS_HOSTVAL_MAX];
	struct utsname u;
	memset(h, 0, sizeof(*h));
	bool have_uts = uname(&u) == 0;

	/* the proc root's view first: --proc-root /host/proc names the host */
	first_line(proc_dirfd, "sys/kernel/hostname", buf, sizeof(buf));
	vms_hostid_set(h, VMS_HK_HOSTNAME, "%s", buf[0] || !have_uts ? buf : u.nodename);
	first_line(proc_dirfd, "sys/kernel/osrelease", buf, sizeof(buf));
	vms_hostid_set(h, VMS_HK_KERNEL, "%s", buf[0] || !have_uts ? buf : u.release);
	first_line(proc_dirfd, "sys/kernel/random/boot_id", buf, sizeof(buf));
	vms_hostid_set(h, VMS_HK_BOOT_ID, "%s", buf);
	cpu_model(proc_dirfd, h);

	first_line(AT_FDCWD, "/etc/machine-id", buf, sizeof(buf));
	vms_hostid_set(h, VMS_HK_MACHINE_ID, "%s", buf);
	first_line(AT_FDCWD, "/sys/devices/system/cpu/online", buf, sizeof(buf));
	if (buf[0])
		vms_hostid_set(h, VMS_HK_CPUS_ONLINE, "%s", buf);
	else
		vms_hostid_set(h, VMS_HK_CPUS_ONLINE, "%ld", sysconf(_SC_NPROCESSORS_ONLN));
	first_line(AT_FDCWD, "/sys/devices/system/node/online", buf, sizeof(buf));
	vms_hostid_set(h, VMS_HK_NUMA_NODES, "%s", buf);
	vms_hostid_set(h, VMS_HK_USER_HZ, "%ld", sysconf(_SC_CLK_TCK));
	vms_hostid_set(h, VMS_HK_PAGE_SIZE, "%ld", sysconf(_SC_PAGESIZE));
	timezone_name(h);
	vms_hostid_set(h, VMS_HK_VERSION, "%s", VMS_VERSION);
	vms_hostid_set(h, VMS_HK_FEATURES, "%s%s%s%s%s%s%s%s", HAVE_LIBVIRT ? "libvirt " : "",
		       HAVE_PERF ? "perf " : "", HAVE_BPF ? "bpf " : "", HAVE_MICROHTTPD ? "export " : "",
		       HAVE_MICROHTTPD && HAVE_REMOTE_WRITE ? "remote_write " : "", HAVE_CAPNG ? "capng " : "",
		       HAVE_LIBSYSTEMD ? "systemd " : "", HAVE_ZSTD ? "zstd" : "");
	size_t l = strlen(h->val[VMS_HK_FEATURES]);
	if (l && h->val[VMS_HK_FEATURES][l - 1] == ' ')
		h->val[VMS_HK_FEATURES][l - 1] = '\0';
}
