/* SPDX-License-Identifier: MIT */
/* priv.c - least privilege (priv.h). */
#include "priv.h"

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "vms_build.h"

#if HAVE_CAPNG
#include <cap-ng.h>
#endif

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* The capabilities the sampler may ever keep (names for the messages). */
static const struct {
	int cap;
	const char *name;
} names[] = {
	{CAP_DAC_READ_SEARCH, "CAP_DAC_READ_SEARCH"},
	{CAP_SYS_PTRACE, "CAP_SYS_PTRACE"},
	{CAP_SYS_ADMIN, "CAP_SYS_ADMIN"},
	{CAP_PERFMON, "CAP_PERFMON"},
	{CAP_BPF, "CAP_BPF"},
};

const char vms_priv_perf_off[] = "perf counters are off (perf.*, vm.*.perf.*; perf_event_paranoid > -1)";

const char *vms_priv_name(int cap)
{
	for (size_t i = 0; i < VMS_ARRAY_SIZE(names); i++)
		if (names[i].cap == cap)
			return names[i].name;
	return "a capability";
}

/* CAP_PERFMON exists from Linux 5.8 (cap_last_cap 38 or more); before it
 * perf's privilege was CAP_SYS_ADMIN. */
int vms_priv_perf_cap(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	int last = 0;
	if (f) {
		if (fscanf(f, "%d", &last) != 1)
			last = 0;
		fclose(f);
	}
	return last >= CAP_PERFMON ? CAP_PERFMON : CAP_SYS_ADMIN;
}

/* CAP_BPF exists from Linux 5.8 as well (39); before it, CAP_SYS_ADMIN. */
int vms_priv_bpf_cap(void)
{
	return vms_priv_perf_cap() == CAP_PERFMON ? CAP_BPF : CAP_SYS_ADMIN;
}

static bool has_tracepoint(const struct vms_perf_events *l)
{
	for (unsigned i = 0; i < l->n; i++)
		if (strchr(l->v[i].name, ':'))
			return true;
	return false;
}

void vms_priv_needed(const struct vms_config *c, struct vms_privs *p)
{
	memset(p, 0, sizeof(*p));
	if (c->libvirt.src.enabled && HAVE_LIBVIRT)
		/* /proc/<qemu>/io: mode 0400 at open, a ptrace check at read */
		p->keep |= 1ull << CAP_SYS_PTRACE | 1ull << CAP_DAC_READ_SEARCH;
	if (c->interference.enabled && HAVE_BPF) {
		/* every bpf(2) call, map reads and updates through fds included,
		 * when kernel.unprivileged_bpf_disabled is set (Debian: 2) */
		p->keep |= 1ull << vms_priv_bpf_cap();
		/* attaching to the tracepoints (perf_event_open), and their ids
		 * in tracefs (0700) */
		p->start |= 1ull << vms_priv_perf_cap() | 1ull << CAP_DAC_READ_SEARCH;
	}
	if (c->perf.enabled && HAVE_PERF) {
		p->keep |= 1ull << vms_priv_perf_cap();
		if (has_tracepoint(&c->perf.host) || has_tracepoint(&c->perf.vm))
			p->start |= 1ull << CAP_DAC_READ_SEARCH; /* tracefs is 0700 */
	}
}

bool vms_priv_have(int cap)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof(d));
	if (cap < 0 || cap >= 64 || syscall(SYS_capget, &h, d) < 0)
		return false;
	return (d[cap / 32].effective >> (cap % 32)) & 1;
}

bool vms_priv_missing(int cap, const char *what)
{
	/* once per capability and feature (the what strings are static) */
	static struct {
		int cap;
		const char *what;
	} said[16];
	static unsigned nsaid;
	if (cap < 0 || cap >= 64 || vms_priv_have(cap))
		return false;
	for (unsigned i = 0; i < nsaid; i++)
		if (said[i].cap == cap && said[i].what == what)
			return true;
	vms_warn("no %s: %s; the rest is sampled (vmsampler(1), PRIVILEGES)", vms_priv_name(cap), what);
	if (nsaid < VMS_ARRAY_SIZE(said))
		said[nsaid++] = (typeof(said[0])){cap, what};
	return true;
}

#if HAVE_CAPNG
static void capng_add(unsigned long long set)
{
	for (int cap = 0; cap < 64; cap++)
		if ((set >> cap) & 1)
			capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED, (unsigned)cap);
}
#endif

/* The user's entry.  A static build (-Dstatic=true) does not use glibc's
 * NSS, whose getpwnam would need at run time the libnss modules of the
 * glibc it was linked with: it reads /etc/passwd, all a minimal image has.
 * NULL with errno 0 when there is no such user. */
static struct passwd *user_entry(const char *name)
{
#if VMS_STATIC
	FILE *f = fopen("/etc/passwd", "re");
	if (!f)
		return NULL;
	struct passwd *pw;
	while ((pw = fgetpwent(f)) && strcmp(pw->pw_name, name) != 0)
		;
	int e = pw || errno == ENOENT ? 0 : errno; /* ENOENT: the end of the file */
	fclose(f);
	errno = e;
	return pw;
#else
	return getpwnam(name);
#endif
}

int vms_priv_drop(const struct vms_config *c, const struct vms_privs *p, char *err, size_t errlen)
{
	if (!c->user)
		return 0;
	errno = 0;
	struct passwd *pw = user_entry(c->user);
	if (!pw) {
		snprintf(err, errlen, "user: no user '%s'%s%s", c->user, errno ? ": " : "",
			 errno ? strerror(errno) : "");
		return -EINVAL;
	}
	if (geteuid() == pw->pw_uid && getuid() == pw->pw_uid)
		return 0; /* started as the user (systemd's User=): nothing to switch */
	if (geteuid() != 0) {
		snprintf(err, errlen, "user: switching to '%s' needs root; started as uid %u", c->user,
			 (unsigned)geteuid());
		return -EPERM;
	}
#if HAVE_CAPNG
	capng_clear(CAPNG_SELECT_ALL);
	capng_add(p->keep | p->start);
	/* the user's groups (libvirt's, for its read-only socket where it
	 * is not world-writable), then uid and gid; the bounding and ambient
	 * sets cleared: nothing this process or the agent runs can regain a
	 * capability */
	int r = capng_change_id((int)pw->pw_uid, (int)pw->pw_gid,
				CAPNG_INIT_SUPP_GRP | CAPNG_CLEAR_BOUNDING | CAPNG_CLEAR_AMBIENT);
	if (r < 0) {
		snprintf(err, errlen, "user: cannot switch to '%s' (libcap-ng capng_change_id: %d)", c->user, r);
		return -EPERM;
	}
	/* as su(1) would: libvirt's client, for one, wants a home of its own */
	setenv("HOME", pw->pw_dir, 1);
	setenv("USER", pw->pw_name, 1);
	setenv("LOGNAME", pw->pw_name, 1);
	vms_debug("running as %s (uid %u, gid %u)", c->user, (unsigned)pw->pw_uid, (unsigned)pw->pw_gid);
	return 0;
#else
	(void)p;
	snprintf(err, errlen,
		 "user: this build has no libcap-ng; start vmsampler as '%s' with its capabilities instead "
		 "(systemd User= and AmbientCapabilities=, vmsampler(1), PRIVILEGES)",
		 c->user);
	return -ENOTSUP;
#endif
}

void vms_priv_started(const struct vms_privs *p)
{
	unsigned long long drop = p->start & ~p->keep;
	if (!drop)
		return;
	for (int cap = 0; cap < 64; cap++)
		if ((drop >> cap) & 1)
			prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_LOWER, cap, 0, 0);
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		return;
	for (int cap = 0; cap < 64; cap++)
		if ((drop >> cap) & 1) {
			uint32_t m = ~(1u << (cap % 32));
			d[cap / 32].effective &= m;
			d[cap / 32].permitted &= m;
			d[cap / 32].inheritable &= m;
		}
	if (syscall(SYS_capset, &h, d) < 0)
		vms_debug("capset: %s", strerror(errno));
}
