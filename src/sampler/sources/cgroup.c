/* SPDX-License-Identifier: MIT */
#include "cgroup.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse.h"
#include "procfile.h"

static void mount_free(struct vms_cgmount *m)
{
	free(m->point);
	free(m->root);
	m->point = m->root = NULL;
}

void vms_cgmounts_free(struct vms_cgmounts *m)
{
	if (!m)
		return;
	mount_free(&m->v2);
	mount_free(&m->cpuacct);
	mount_free(&m->cpu);
	mount_free(&m->memory);
}

/* The mount point `point` (unescaped) as seen from here: below `root`
 * instead of /sys/fs/cgroup. */
static char *reroot(const char *point, const char *root)
{
	static const char sys[] = VMS_CGROUP_ROOT_DEFAULT;
	size_t n = sizeof(sys) - 1;
	char *out = NULL;
	if (strncmp(point, sys, n) == 0 && (point[n] == '\0' || point[n] == '/')) {
		if (asprintf(&out, "%s%s", root, point + n) < 0)
			return NULL;
		return out;
	}
	return strdup(point);
}

static int set_mount(struct vms_cgmount *m, const struct vms_mount *mi, const char *root)
{
	char point[PATH_MAX], mroot[PATH_MAX];
	if (m->point)
		return 0; /* the first mount of a hierarchy wins */
	if (vms_unescape_octal(mi->point, mi->point_len, point, sizeof(point)) < 0 ||
	    vms_unescape_octal(mi->root, mi->root_len, mroot, sizeof(mroot)) < 0)
		return 0; /* a mount we cannot name: not ours */
	m->point = reroot(point, root);
	m->root = strdup(mroot);
	if (!m->point || !m->root) {
		mount_free(m);
		return -ENOMEM;
	}
	return 0;
}

static bool exists(const char *dir, const char *file)
{
	char p[PATH_MAX];
	if (snprintf(p, sizeof(p), "%s/%s", dir, file) >= (int)sizeof(p))
		return false;
	return access(p, F_OK) == 0;
}

/* No mount found in mountinfo: m is root<sub> if that directory holds
 * `file` (and m is not set yet). */
static int probe(struct vms_cgmount *m, const char *root, const char *sub, const char *file)
{
	char dir[PATH_MAX];
	if (m->point)
		return 0;
	snprintf(dir, sizeof(dir), "%s%s", root, sub);
	if (!exists(dir, file))
		return 0;
	m->point = strdup(dir);
	m->root = strdup("/");
	if (!m->point || !m->root) {
		mount_free(m);
		return -ENOMEM;
	}
	return 0;
}

int vms_cgmounts_load(struct vms_cgmounts *m, int proc_dirfd, const char *root)
{
	struct vms_procfile f = VMS_PROCFILE_INIT;
	struct vms_mount mi;
	struct vms_cur c;
	int r = 0;

	memset(m, 0, sizeof(*m));
	if (!root)
		root = VMS_CGROUP_ROOT_DEFAULT;
	if (vms_procfile_open(&f, proc_dirfd, "self/mountinfo", 8192) == 0) {
		vms_cur_init(&c, f.buf, f.len);
		int k;
		while (r == 0 && (k = vms_mountinfo_next(&c, &mi)) != 0) {
			if (k < 0)
				continue;
			if (mi.fstype_len == 7 && memcmp(mi.fstype, "cgroup2", 7) == 0) {
				r = set_mount(&m->v2, &mi, root);
			} else if (mi.fstype_len == 6 && memcmp(mi.fstype, "cgroup", 6) == 0) {
				if (vms_list_has(mi.super, mi.super_len, "cpuacct"))
					r = set_mount(&m->cpuacct, &mi, root);
				if (r == 0 && vms_list_has(mi.super, mi.super_len, "memory"))
					r = set_mount(&m->memory, &mi, root);
				if (r == 0 && vms_list_has(mi.super, mi.super_len, "cpu"))
					r = set_mount(&m->cpu, &mi, root);
			}
		}
		vms_procfile_close(&f);
	}
	if (r == 0 && !m->v2.point && !m->cpuacct.point && !m->memory.point) {
		const struct {
			struct vms_cgmount *m;
			const char *sub, *file;
		} probes[] = {
			{&m->v2, "", "cgroup.controllers"},
			{&m->v2, "/unified", "cgroup.controllers"},
			{&m->cpuacct, "/cpuacct", "cpuacct.usage"},
			{&m->cpuacct, "/cpu,cpuacct", "cpuacct.usage"},
			{&m->memory, "/memory", "memory.usage_in_bytes"},
			{&m->cpu, "/cpu", "cpu.shares"},
			{&m->cpu, "/cpu,cpuacct", "cpu.shares"},
		};
		for (size_t i = 0; i < VMS_ARRAY_SIZE(probes) && r == 0; i++)
			r = probe(probes[i].m, root, probes[i].sub, probes[i].file);
	}
	if (r < 0)
		vms_cgmounts_free(m);
	return r;
}

void vms_cgfiles_free(struct vms_cgfiles *f)
{
	if (!f)
		return;
	_Static_assert(sizeof(f->path) == sizeof(*f), "every field of struct vms_cgfiles is a path");
	for (size_t i = 0; i < VMS_ARRAY_SIZE(f->path); i++)
		free(f->path[i]);
	memset(f, 0, sizeof(*f));
}

/* The VM's directory in a hierarchy: the mount point joined with the
 * process's path (inside the mount's root), without "/emulator".  NULL
 * when the process is at the root of the hierarchy (not placed) or
 * outside the mount. */
static char *vm_dir(const struct vms_cgmount *m, const char *path, size_t len)
{
	char buf[PATH_MAX];
	if (!m->point || len == 0 || len >= sizeof(buf))
		return NULL;
	memcpy(buf, path, len);
	buf[len] = '\0';
	size_t n = len;
	if (n > 9 && strcmp(buf + n - 9, "/emulator") == 0)
		buf[n -= 9] = '\0';
	const char *rel = buf;
	size_t rl = strlen(m->root);
	if (strcmp(m->root, "/") != 0) {
		if (strncmp(buf, m->root, rl) != 0 || (buf[rl] != '/' && buf[rl] != '\0'))
			return NULL;
		rel = buf + rl;
	}
	if (rel[0] == '\0' || strcmp(rel, "/") == 0)
		return NULL;
	char *out = NULL;
	if (asprintf(&out, "%s%s", m->point, rel) < 0)
		return NULL;
	return out;
}

/* dir/file if it exists: 1 with *out set, 0 if not, -ENOMEM */
static int file_in(const char *dir, const char *file, char **out)
{
	if (!dir || !exists(dir, file))
		return 0;
	if (asprintf(out, "%s/%s", dir, file) < 0) {
		*out = NULL;
		return -ENOMEM;
	}
	return 1;
}

int vms_cgfiles_find(struct vms_cgfiles *f, const struct vms_cgmounts *m, const char *pidcg, size_t len)
{
	struct vms_pidcg pc;
	struct vms_cgfiles o;
	char *v2 = NULL, *acct = NULL, *mem = NULL, *cpu = NULL;
	int r;

	memset(&o, 0, sizeof(o));
	r = vms_parse_pidcg(pidcg, len, &pc);
	if (r < 0)
		return r;
	v2 = vm_dir(&m->v2, pc.v2, pc.v2_len);
	acct = vm_dir(&m->cpuacct, pc.cpuacct, pc.cpuacct_len);
	mem = vm_dir(&m->memory, pc.memory, pc.memory_len);
	cpu = vm_dir(&m->cpu, pc.cpu, pc.cpu_len);
	if ((r = file_in(v2, "cpu.stat", &o.cpu_stat)) < 0)
		goto out;
	if (!o.cpu_stat) {
		if ((r = file_in(acct, "cpuacct.usage", &o.cpuacct_usage)) < 0 ||
		    (r = file_in(acct, "cpuacct.stat", &o.cpuacct_stat)) < 0)
			goto out;
		if (!o.cpuacct_usage || !o.cpuacct_stat) {
			free(o.cpuacct_usage);
			free(o.cpuacct_stat);
			o.cpuacct_usage = o.cpuacct_stat = NULL;
		}
	}
	if ((r = file_in(v2, "memory.current", &o.mem)) < 0)
		goto out;
	if (!o.mem && (r = file_in(mem, "memory.usage_in_bytes", &o.mem)) < 0)
		goto out;
	if ((r = file_in(v2, "io.stat", &o.io_stat)) < 0)
		goto out;
	r = 0;
	o.v2_dir = v2;
	o.cpu_dir = cpu;
	o.mem_dir = mem;
	v2 = cpu = mem = NULL;
out:
	free(v2);
	free(acct);
	free(mem);
	free(cpu);
	if (r < 0) {
		vms_cgfiles_free(&o);
		return r;
	}
	*f = o;
	return 0;
}
