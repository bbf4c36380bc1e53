/* SPDX-License-Identifier: MIT */
/* virt_dom.c - a domain's identity, for the agent: UUID, name, id, state,
 * QEMU pid, vCPU thread ids, taps and disk targets (tests/vmlab/FACTS.md
 * f: where each of them is).
 *   taps, disks   the live domain XML (virDomainGetXMLDesc): the target
 *                 dev of every <interface> and <disk>
 *   pid           <run dir>/<name>.pid of a local QEMU driver, checked
 *                 against the process's command line (-uuid UUID): a
 *                 stale pid file never names another process
 *   vCPU threads  the status XML <run dir>/<name>.xml (<vcpu id pid>,
 *                 root only), else the threads QEMU names "CPU N/KVM"
 *                 or "CPU N/TCG" in /proc/PID/task */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/xpath.h>

#include "name.h"
#include "parse.h"
#include "procfile.h"
#include "agent.h"
#include "virt_dom.h"

void vms_adom_free(struct vms_adom *o)
{
	if (!o)
		return;
	if (o->dom)
		virDomainFree(o->dom);
	if (o->stat_fd >= 0)
		close(o->stat_fd);
	free(o->name);
	free(o->tid);
	for (unsigned i = 0; i < o->ntap; i++)
		free(o->tap[i]);
	for (unsigned i = 0; i < o->ndisk; i++)
		free(o->disk[i]);
	free(o->tap);
	free(o->disk);
	memset(o, 0, sizeof(*o));
	o->stat_fd = -1;
}

/* The values of an XPath expression that selects attributes. */
static int xpath_strings(xmlXPathContextPtr ctx, const char *expr, char ***out, unsigned *n)
{
	*out = NULL;
	*n = 0;
	xmlXPathObjectPtr obj = xmlXPathEvalExpression((const xmlChar *)expr, ctx);
	if (!obj)
		return -EINVAL;
	int r = 0;
	xmlNodeSetPtr ns = obj->nodesetval;
	unsigned cnt = ns ? (unsigned)ns->nodeNr : 0;
	if (cnt) {
		*out = calloc(cnt, sizeof(char *));
		if (!*out)
			r = -ENOMEM;
	}
	for (unsigned i = 0; r == 0 && i < cnt; i++) {
		xmlChar *v = xmlNodeGetContent(ns->nodeTab[i]);
		size_t len = v ? strlen((const char *)v) : 0;
		/* what the protocol can carry: a device name */
		bool ok = len > 0 && len <= VMS_VP_DEV_MAX && !strpbrk((const char *)v, "/ \t\n");
		if (ok) {
			(*out)[*n] = strdup((const char *)v);
			if (!(*out)[*n])
				r = -ENOMEM;
			else
				(*n)++;
		}
		xmlFree(v);
	}
	xmlXPathFreeObject(obj);
	return r;
}

static int parse_devices(struct vms_adom *o, const char *xml)
{
	xmlDocPtr doc = xmlReadMemory(xml, (int)strlen(xml), "domain.xml", NULL,
				      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	if (!doc)
		return -EINVAL;
	xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
	int r = ctx ? 0 : -ENOMEM;
	if (r == 0)
		r = xpath_strings(ctx, "/domain/devices/interface/target/@dev", &o->tap, &o->ntap);
	if (r == 0)
		r = xpath_strings(ctx, "/domain/devices/disk/target/@dev", &o->disk, &o->ndisk);
	xmlXPathFreeContext(ctx);
	xmlFreeDoc(doc);
	return r;
}

/* The file's first number, or 0. */
static pid_t read_pidfile(const char *path)
{
	char buf[32];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	char *end;
	long v = strtol(buf, &end, 10);
	return v > 0 && v < INT32_MAX && (*end == '\n' || *end == '\0') ? (pid_t)v : 0;
}

/* The process's command line has "-uuid" followed by this UUID. */
static bool cmdline_has_uuid(int proc_dirfd, pid_t pid, const char *uuid)
{
	struct vms_procfile f = VMS_PROCFILE_INIT;
	char rel[32];
	snprintf(rel, sizeof(rel), "%d/cmdline", (int)pid);
	if (vms_procfile_open(&f, proc_dirfd, rel, 8192) < 0)
		return false;
	bool found = false;
	const char *p = f.buf, *end = f.buf + f.len;
	while (p < end && !found) {
		const char *z = memchr(p, '\0', (size_t)(end - p));
		if (!z)
			break;
		if (strcmp(p, "-uuid") == 0 && z + 1 < end)
			found = strncasecmp(z + 1, uuid, VMS_VP_UUID_LEN) == 0 && z[1 + VMS_VP_UUID_LEN] == '\0';
		p = z + 1;
	}
	vms_procfile_close(&f);
	return found;
}

/* vCPU threads from the status XML: 0 with some found, or -errno. */
static int status_threads(struct vms_adom *o, const char *path)
{
	xmlDocPtr doc = xmlReadFile(path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	if (!doc)
		return -ENOENT;
	xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
	xmlXPathObjectPtr obj = ctx ? xmlXPathEvalExpression((const xmlChar *)"/domstatus/vcpus/vcpu", ctx) : NULL;
	unsigned found = 0;
	if (obj && obj->nodesetval) {
		for (int i = 0; i < obj->nodesetval->nodeNr; i++) {
			xmlNodePtr n = obj->nodesetval->nodeTab[i];
			xmlChar *id = xmlGetProp(n, (const xmlChar *)"id");
			xmlChar *pid = xmlGetProp(n, (const xmlChar *)"pid");
			if (id && pid) {
				long v = atol((const char *)id), t = atol((const char *)pid);
				if (v >= 0 && (unsigned long)v < o->nvcpu && t > 0 && t < INT32_MAX) {
					o->tid[v] = (pid_t)t;
					found++;
				}
			}
			xmlFree(id);
			xmlFree(pid);
		}
	}
	xmlXPathFreeObject(obj);
	xmlXPathFreeContext(ctx);
	xmlFreeDoc(doc);
	return found ? 0 : -ENOENT;
}

/* vCPU threads by the names QEMU gives them. */
static void named_threads(struct vms_agent *a, struct vms_adom *o)
{
	char rel[64];
	snprintf(rel, sizeof(rel), "%d/task", (int)o->pid);
	int dfd = openat(a->proc_dirfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return;
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		char comm[64], crel[300];
		snprintf(crel, sizeof(crel), "%s/comm", e->d_name);
		int fd = openat(dirfd(d), crel, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, comm, sizeof(comm));
		close(fd);
		int v = n > 0 ? vms_vcpu_thread_index(comm, (size_t)n) : -1;
		if (v >= 0 && (unsigned)v < o->nvcpu)
			o->tid[v] = (pid_t)atol(e->d_name);
	}
	closedir(d);
}

static void find_process(struct vms_agent *a, struct vms_adom *o)
{
	char path[4096];
	if (!a->local_qemu || !a->run_dir)
		return;
	snprintf(path, sizeof(path), "%s/%s.pid", a->run_dir, o->name);
	pid_t pid = read_pidfile(path);
	if (pid <= 0 || !cmdline_has_uuid(a->proc_dirfd, pid, o->uuid))
		return;
	o->pid = pid;
	o->local = true;
	snprintf(path, sizeof(path), "%d/stat", (int)pid);
	o->stat_fd = openat(a->proc_dirfd, path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "%s/%s.xml", a->run_dir, o->name);
	if (o->nvcpu && status_threads(o, path) < 0)
		named_threads(a, o);
}

int vms_adom_load(struct vms_agent *a, virDomainPtr dom, struct vms_adom *o)
{
	char uuid[VIR_UUID_STRING_BUFLEN];
	virDomainInfo info;
	memset(o, 0, sizeof(*o));
	o->stat_fd = -1;
	if (virDomainGetUUIDString(dom, uuid) < 0 || !vms_vp_uuid_ok(uuid, strlen(uuid)))
		return -EINVAL;
	memcpy(o->uuid, uuid, VMS_VP_UUID_LEN);
	const char *name = virDomainGetName(dom);
	o->name = strdup(name && *name ? name : uuid);
	if (!o->name)
		return -ENOMEM;
	if (virDomainRef(dom) < 0) {
		vms_adom_free(o);
		return -EINVAL;
	}
	o->dom = dom;
	o->id = virDomainGetID(dom);
	if (virDomainGetState(dom, &o->state, &o->reason, 0) < 0)
		o->state = o->reason = 0;
	if (virDomainGetInfo(dom, &info) == 0 && info.nrVirtCpu <= 4096)
		o->nvcpu = info.nrVirtCpu;
	if (o->nvcpu) {
		o->tid = calloc(o->nvcpu, sizeof(*o->tid));
		if (!o->tid) {
			vms_adom_free(o);
			return -ENOMEM;
		}
	}
	char *xml = virDomainGetXMLDesc(dom, 0);
	if (xml) {
		int r = parse_devices(o, xml);
		free(xml);
		if (r == -ENOMEM) {
			vms_adom_free(o);
			return r;
		}
	}
	find_process(a, o);
	/* what the kernel cannot serve, the agent does every tick */
	if (!o->local)
		o->fallback = VMS_VG_CPU | (o->nvcpu ? VMS_VG_VCPU : 0) | (o->ntap ? VMS_VG_NET : 0);
	return 0;
}

void vms_adom_send(struct vms_agent *a, const struct vms_adom *o)
{
	struct vms_vp_w *w = &a->w;
	vms_vp_begin(w, VMS_VP_DOM);
	vms_vp_uuid(w, o->uuid);
	/* libvirt sets no limit to a name, the protocol does: a longer one
	 * goes shortened (name.h), not as a message the sampler refuses */
	char name[VMS_VP_NAME_MAX + 1];
	vms_name_fit(name, VMS_VP_NAME_MAX, o->name, strlen(o->name));
	vms_vp_cstr(w, name);
	vms_vp_u32(w, o->id);
	vms_vp_u8(w, (uint8_t)o->state);
	vms_vp_u8(w, (uint8_t)o->reason);
	vms_vp_u32(w, (uint32_t)o->pid);
	vms_vp_u8(w, o->local ? VMS_VP_DOM_LOCAL : 0);
	vms_vp_u8(w, o->fallback);
	vms_vp_u16(w, (uint16_t)o->nvcpu);
	for (unsigned i = 0; i < o->nvcpu; i++)
		vms_vp_u32(w, (uint32_t)o->tid[i]);
	vms_vp_u16(w, (uint16_t)o->ntap);
	for (unsigned i = 0; i < o->ntap; i++)
		vms_vp_cstr(w, o->tap[i]);
	vms_vp_u16(w, (uint16_t)o->ndisk);
	for (unsigned i = 0; i < o->ndisk; i++)
		vms_vp_cstr(w, o->disk[i]);
	vms_vp_end(w);
	vms_agent_send(a);
}

bool vms_adom_stopped(const struct vms_adom *o)
{
	char buf[1024];
	if (o->stat_fd < 0)
		return false;
	ssize_t n = pread(o->stat_fd, buf, sizeof(buf), 0);
	struct vms_taskstat ts;
	if (n <= 0 || vms_parse_taskstat(buf, (size_t)n, &ts) < 0)
		return false;
	return ts.state == 'T' || ts.state == 't';
}
