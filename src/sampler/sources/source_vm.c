/* SPDX-License-Identifier: MIT */
/* source_vm.c - per-VM statistics: the "vm" source, configured under
 * sources.libvirt.
 *
 * Two processes (measured reasons: tests/vmlab/FACTS.md g, and the issue):
 * libvirt's calls are synchronous RPCs that can take a second at 60
 * guests and hang without a timeout on a stopped QEMU, so the sampler
 * never calls libvirt.  Its agent, vmsampler-virt (virt_agent.c), holds
 * the connection, learns the domains and their identity (UUID, name,
 * state, QEMU pid, vCPU threads, taps, disks) from lifecycle events, and
 * fetches the slow values (balloon, guest-view block stats) in paced
 * batches; it talks to this source over a socketpair in the protocol of
 * virt_proto.h.
 *
 * This source
 *   - produces the VM set (vmtab.h; the source host owns it and gives it to
 *     this source as env->vms_w): the agent's DOM/GONE/SYNC messages
 *     update it between ticks (ready()), and a change makes sample()
 *     return VMS_RESCHEMA so that every source re-declares;
 *   - reads each VM's fast counters from the kernel every tick
 *     (vm_kernel.c), through files opened at declare time and kept open
 *     while the VM lives; the VM's tap lines come from /proc/net/dev,
 *     read once per tick together with the netdev source;
 *   - puts values the agent sent (slow values, and fast values of VMs the
 *     kernel cannot serve) into the frame that follows their arrival;
 *   - turns the agent's lifecycle events into EVENT records;
 *   - restarts the agent when it dies, and kills and restarts it when it
 *     does not acknowledge ticks for sources.libvirt.timeout (stuck in a
 *     libvirt call): the domains of the batch it had announced are then
 *     left out of the slow path for a while (doubling).
 * sample() allocates nothing, logs nothing and never blocks.  Messages
 * about the connection and the agent are logged from ready() and idle(),
 * outside the tick, once per change of state.  This file holds the ops
 * and the agent; vm_rec.c the records of the VMs and their columns. */
#include <errno.h>
#include <limits.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "name.h"
#include "cgroup.h"
#include "grow.h"
#include "libexec.h"
#include "log.h"
#include "clock.h"
#include "procfile.h"
#include "hostid.h"
#include "source.h"
#include "virt_client.h"
#include "vm_kernel.h"
#include "vms_build.h"
#include "vm_int.h"
#include "vmtab.h"

/* The run's clock and event queue, as the host handed them to vm_open
 * (p->env: the same for the source's life). */
static uint64_t now_ns(const struct vms_source *src)
{
	const struct vms_vmsrc *p = src->priv;
	return vms_clock_mono(p->env->clock);
}

static void event(struct vms_source *src, uint32_t type, const char *subject, const char *detail)
{
	const struct vms_vmsrc *p = src->priv;
	vms_source_event(p->env, type, subject, detail);
}

/* ---- the agent's identity table --------------------------------------------- */

static struct vms_vmsrc_aux *aux_get(struct vms_vmsrc *p, const char *uuid)
{
	struct vms_vmsrc_aux *a = vms_vmsrc_aux_find(p, uuid);
	if (a)
		return a;
	struct vms_vmsrc_aux *n = vms_grow_array(p->aux, &p->capaux, p->naux + 1, sizeof(*n), 16);
	if (!n)
		return NULL;
	p->aux = n;
	a = &p->aux[p->naux++];
	memset(a, 0, sizeof(*a));
	memcpy(a->uuid, uuid, VMS_UUID_LEN); /* a checked UUID */
	return a;
}

static void aux_drop(struct vms_vmsrc *p, const char *uuid)
{
	struct vms_vmsrc_aux *a = vms_vmsrc_aux_find(p, uuid);
	if (a)
		*a = p->aux[--p->naux];
}

/* ---- the agent process ------------------------------------------------------- */

/* The configured path, else next to our own executable (the build
 * directory), else the libexec directory. */
static char *agent_path(const struct vms_libvirt_conf *lc)
{
	return lc->agent ? strdup(lc->agent) : vms_libexec_path(VMS_AGENT_NAME);
}

static void argv_free(char **argv)
{
	for (char **a = argv; a && *a; a++)
		free(*a);
	free(argv);
}

static int build_argv(struct vms_source *src, char *path)
{
	struct vms_vmsrc *p = src->priv;
	const struct vms_libvirt_conf *lc = p->lc;
	uint64_t tick = src->conf->interval_ns * (src->every ? src->every : 1);
	uint64_t budget = lc->budget_ns ? lc->budget_ns : tick / 20;
	char **a = calloc(20, sizeof(*a));
	int n = 0;
	if (!a) {
		free(path);
		return -ENOMEM;
	}
	a[n++] = path;
	a[n++] = strdup("--fd=3");
	if (lc->uri && asprintf(&a[n++], "--uri=%s", lc->uri) < 0)
		a[n - 1] = NULL;
	if (asprintf(&a[n++], "--proc-root=%s", src->conf->proc_root) < 0)
		a[n - 1] = NULL;
	if (asprintf(&a[n++], "--interval-ns=%llu", (unsigned long long)tick) < 0)
		a[n - 1] = NULL;
	if (asprintf(&a[n++], "--refresh-ns=%llu", (unsigned long long)lc->refresh_ns) < 0)
		a[n - 1] = NULL;
	if (asprintf(&a[n++], "--budget-ns=%llu", (unsigned long long)budget) < 0)
		a[n - 1] = NULL;
	if (lc->crosscheck)
		a[n++] = strdup("--crosscheck");
	if (lc->dirty_every_ns) {
		if (asprintf(&a[n++], "--dirty-every-ns=%llu", (unsigned long long)lc->dirty_every_ns) < 0)
			a[n - 1] = NULL;
		if (asprintf(&a[n++], "--dirty-seconds=%llu",
			     (unsigned long long)(lc->dirty_seconds_ns / VMS_NSEC_PER_SEC)) < 0)
			a[n - 1] = NULL;
	}
	for (int i = 0; i < n; i++)
		if (!a[i]) {
			argv_free(a);
			return -ENOMEM;
		}
	p->argv = a;
	return 0;
}

static void mark_lost(struct vms_source *src, const char *why)
{
	struct vms_vmsrc *p = src->priv;
	if (!p->lost_marked)
		event(src, VMS_EV_LIBVIRT_LOST, p->uri, why);
	p->lost_marked = true;
	p->connected = false;
}

static int spawn(struct vms_source *src)
{
	struct vms_vmsrc *p = src->priv;
	int r = vms_vclient_spawn(&p->cl, p->argv);
	if (r < 0)
		return r;
	uint64_t now = now_ns(src);
	p->started_at = p->last_rx = now;
	p->next_tick_at = 0;
	p->hello = false;
	p->tick_sent = p->tick_acked = p->tick_due;
	p->batch_open = false;
	p->nbatch = 0;
	for (unsigned i = 0; i < p->nrec; i++)
		p->rec[i].need_sent = 0; /* the new agent must hear it again */
	return 0;
}

/* The agent is gone (exited, or killed): restart it later. */
static void agent_down(struct vms_source *src, bool killed, const char *why)
{
	struct vms_vmsrc *p = src->priv;
	uint64_t now = now_ns(src);
	vms_vclient_stop(&p->cl, killed ? 0 : 200);
	if (now - p->started_at > 10 * RESPAWN_MAX)
		p->respawn_wait = 0; /* it ran long enough: start over */
	p->respawn_wait = p->respawn_wait ? p->respawn_wait * 2 : RESPAWN_FIRST;
	if (p->respawn_wait > RESPAWN_MAX)
		p->respawn_wait = RESPAWN_MAX;
	p->respawn_at = now + p->respawn_wait;
	p->restarts++;
	if (!p->fatal)
		vms_warn("vm: the libvirt agent %s; restarting it in %.0f s", why,
			 (double)p->respawn_wait / 1e9);
	mark_lost(src, why);
}

static void nl_count(void *arg, int ifindex, const uint64_t v[VMS_NET_FIELDS])
{
	(void)ifindex, (void)v;
	(*(uint32_t *)arg)++;
}

static int vm_declare(struct vms_source *src, struct vms_schema_builder *b, const struct vms_source_env *env)
{
	struct vms_vmsrc *p = src->priv;
	const struct vms_coldef conn = {.kind = VMS_KIND_GAUGE, .unit = VMS_UNIT_NONE};
	const struct vms_coldef doms = {.kind = VMS_KIND_GAUGE, .unit = VMS_UNIT_COUNT};
	const struct vms_coldef rst = {.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_COUNT, .wrap_bits = 64};
	int r;

	p->vmgen = vms_vmtab_gen(env->vms);
	p->mig_reschema = false;
	r = vms_vmsrc_reconcile(src, env->vms);
	if (r < 0)
		return r;
	/* room to index /proc/net/dev without allocating in the tick */
	if (p->nd && vms_procfile_shared_read(p->nd, VMS_PROCFILE_FORCE) == 0) {
		uint32_t lines = 0;
		for (size_t i = 0; i < p->nd->len; i++)
			lines += p->nd->buf[i] == '\n';
		struct vms_nettab_ent *e =
			vms_grow_array(p->nt.ent, &p->nt.cap, lines * 2 + 64, sizeof(*e), lines * 2 + 64);
		if (!e)
			return -ENOMEM;
		p->nt.ent = e;
	}
	/* the taps through rtnetlink: room for every interface's stats */
	if (p->nl_want && p->nl.fd < 0 && vms_nl_open(&p->nl) < 0)
		p->nl_want = false; /* /proc/net/dev from now on */
	if (p->nl.fd >= 0) {
		static const struct vms_nl_ops counter = {.stats = nl_count};
		uint32_t n = 0;
		r = vms_nl_dump(&p->nl, RTM_GETSTATS, &counter, &n);
		if (r < 0) {
			vms_nl_close(&p->nl); /* the next declare opens another */
		} else {
			struct vms_nlstats_ent *e =
				vms_grow_array(p->st.ent, &p->st.cap, n * 2 + 64, sizeof(*e), n * 2 + 64);
			if (!e)
				return -ENOMEM;
			p->st.ent = e;
		}
	}
	vms_schema_addc(b, &conn, VMS_G_VIRT, NULL, NULL, "connected");
	vms_schema_addc(b, &doms, VMS_G_VIRT, NULL, NULL, "domains");
	vms_schema_addc(b, &rst, VMS_G_VIRT, NULL, NULL, "agent_restarts");
	for (unsigned i = 0; i < p->nrec; i++) {
		struct vms_vmsrc_rec *v = &p->rec[i];
		v->base = vms_schema_builder_count(b);
		r = vms_vmsrc_rec_declare(b, v, p->lc);
		if (r < 0)
			return r;
		v->gone = false;
		vms_vmsrc_rec_queue_needs(p, v);
	}
	return b->err;
}

/* ---- sampling ------------------------------------------------------------------ */

/* A VM migrated out: QEMU exits on the source while the agent's word of it
 * (its state shut off, the job's final values) may still be on its way (a
 * busy host, an agent at nice 10).  Its record stays, the kernel columns
 * missing, until both came, and the final values wait for the state, so
 * that one last frame has them together; bounded by the agent's timeout
 * (then what came goes out and the record goes). */
static bool mig_end_waits(const struct vms_vmsrc *p, const struct vms_vmsrc_rec *r, uint64_t now)
{
	if (!r->gone || !r->want_mig || (!r->mig_open && r->id.state == VMS_LV_SHUTOFF))
		return false;
	return !r->gone_at || now - r->gone_at < p->lc->timeout_ns;
}

static int vm_sample(struct vms_source *src, uint64_t *slots, struct vms_tick_ctx *t)
{
	struct vms_vmsrc *p = src->priv;
	if (VMS_UNLIKELY(vms_vmtab_gen(t->vms) != p->vmgen || p->mig_reschema))
		return VMS_RESCHEMA;
	p->tick_due = t->idx + 1; /* 0 means "none": tick indexes may start at 0 */
	slots[0] = p->connected;
	slots[1] = p->nrec;
	slots[2] = p->restarts;

	if (p->ino_open && p->nrec)
		vms_vmcg_drain(p->ino, &p->rec[0].k.cg, sizeof(p->rec[0]), p->nrec);
	p->st.ok = false;
	if (p->nrec && p->nl.fd >= 0) {
		static const struct vms_nl_ops ops = {.stats = vms_nlstats_add};
		p->st.n = 0;
		p->st.full = false;
		if (vms_nl_dump(&p->nl, RTM_GETSTATS, &ops, &p->st) == 0) {
			if (VMS_UNLIKELY(p->st.full))
				return VMS_RESCHEMA; /* more interfaces than room: declare grows it */
			p->st.ok = true;
		} else {
			vms_nl_drop(&p->nl); /* the next declare opens another; until then the file */
		}
	}
	p->nt.ok = false;
	if (!p->st.ok && p->nrec && p->nd && vms_procfile_shared_read(p->nd, t->idx) == 0) {
		vms_nettab_index(&p->nt, p->nd->buf, p->nd->len);
		if (VMS_UNLIKELY(p->nt.full))
			return VMS_RESCHEMA; /* more interfaces than room: declare grows it */
	}
	for (unsigned i = 0; i < p->nrec; i++) {
		struct vms_vmsrc_rec *r = &p->rec[i];
		uint64_t *s = slots + r->base;
		vms_slots_none(s, r->lay.ncol);
		s[r->lay.state] = (uint64_t)r->id.state;
		unsigned kgroups = 0, lgroups = 0;
		/* each VM's detail files and mem.rss every detail_every
		 * ticks, the VMs spread over them so that each tick reads its
		 * share */
		bool detail = vms_cadence_due(t->idx, i, p->detail_every);
		if (!r->gone)
			kgroups = vms_vmk_sample(&r->k, &r->lay, s, p->nt.ok ? &p->nt : NULL, p->st.ok ? &p->st : NULL,
						 p->scratch, SCRATCH, detail, &r->gone, &t->parse_errors);
		if (r->pend_any && !mig_end_waits(p, r, t->t_mono_ns)) {
			for (uint32_t c = 0; c < r->lay.ncol; c++) {
				if (r->pend[c] == VMS_NONE)
					continue;
				if (s[c] == VMS_NONE) {
					s[c] = r->pend[c];
					lgroups |= r->grp[c];
				}
				r->pend[c] = VMS_NONE;
			}
			if (r->pend_slow_t > 0)
				s[r->lay.slow_t] = (uint64_t)r->pend_slow_t;
			r->pend_slow_t = 0;
			r->pend_any = false;
		}
		s[r->lay.path] = kgroups | lgroups << 8;
	}
	return 0;
}

/* ---- agent messages -------------------------------------------------------------- */

static struct vms_vmsrc_rec *rec_find(struct vms_vmsrc *p, const char *uuid)
{
	for (unsigned i = 0; i < p->nrec; i++)
		if (strcmp(p->rec[i].id.uuid, uuid) == 0)
			return &p->rec[i];
	return NULL;
}

/* libvirt's text (names, messages) in an event: escaped by the rule of
 * name.h, cut before a character that does not fit whole */
static void str_copy(char *dst, size_t cap, struct vms_vp_str s)
{
	vms_name_escape(dst, cap, s.p, s.len);
}

static bool on_conn(struct vms_source *src, const struct vms_vp_msg *m)
{
	struct vms_vmsrc *p = src->priv;
	struct vms_vp_conn c;
	char msg[256], drv[64];
	if (vms_vp_conn_dec(m, &c) < 0)
		return false;
	str_copy(msg, sizeof(msg), c.msg);
	str_copy(drv, sizeof(drv), c.driver);
	if (c.up) {
		if (!p->lc->uri && c.msg.len) {
			/* from now on, name what the default turned out to be */
			char *u = strndup(c.msg.p, c.msg.len);
			if (u) {
				free(p->uri);
				p->uri = u;
			}
		}
		if (p->env->host_w) {
			/* in the HOST record of the next schema generation (the
			 * VMs' columns make one) */
			vms_hostid_set(p->env->host_w, VMS_HK_LIBVIRT_URI, "%s", p->uri ? p->uri : "");
			vms_hostid_set(p->env->host_w, VMS_HK_HYPERVISOR, "%s", drv);
			if (c.hv_version)
				vms_hostid_set_version(p->env->host_w, VMS_HK_HYPERVISOR_VERSION, c.hv_version);
		}
		if (p->said_unavailable || p->lost_marked)
			vms_info("vm: connected to libvirt at %s (%s driver)", p->uri, drv);
		else
			vms_debug("vm: connected to libvirt at %s (%s driver)", p->uri, drv);
		if (p->lost_marked)
			event(src, VMS_EV_LIBVIRT_BACK, p->uri, drv);
		p->connected = p->ever_connected = true;
		p->lost_marked = false;
		return true;
	}
	if (!p->ever_connected && !p->said_unavailable) {
		vms_warn("vm: per-VM statistics unavailable: cannot connect to libvirt at %s: %s; host "
			 "sampling goes on, and vmsampler keeps trying to connect",
			 p->uri, msg);
		p->said_unavailable = true;
	} else if (p->connected) {
		vms_warn("vm: lost the connection to libvirt (%s); reconnecting; the known VMs' CPU, vCPU, "
			 "network, I/O and memory go on from the kernel",
			 msg);
	}
	mark_lost(src, msg);
	return true;
}

static bool on_dom(struct vms_source *src, const struct vms_vp_msg *m)
{
	struct vms_vmsrc *p = src->priv;
	struct vms_vp_dom d;
	if (vms_vp_dom_dec(m, &d) < 0)
		return false;
	struct vms_vm vm = {.state = d.state, .reason = d.reason, .pid = (pid_t)d.pid, .nvcpu = d.nvcpu,
			    .ntap = d.ntap, .ndisk = d.ndisk};
	memcpy(vm.uuid, d.uuid, sizeof(vm.uuid));
	vm.name = strndup(d.name.p, d.name.len);
	vm.vcpu_tid = d.nvcpu ? calloc(d.nvcpu, sizeof(pid_t)) : NULL;
	vm.tap = d.ntap ? calloc(d.ntap, sizeof(char *)) : NULL;
	vm.disk = d.ndisk ? calloc(d.ndisk, sizeof(char *)) : NULL;
	bool ok = vm.name && (!d.nvcpu || vm.vcpu_tid) && (!d.ntap || vm.tap) && (!d.ndisk || vm.disk);
	for (unsigned i = 0; ok && i < d.nvcpu; i++)
		vm.vcpu_tid[i] = (pid_t)vms_vp_dom_tid(&d, i);
	for (unsigned i = 0; ok && i < d.ntap; i++) {
		struct vms_vp_str s = vms_vp_list_str(d.taps, i);
		ok = (vm.tap[i] = strndup(s.p, s.len)) != NULL;
	}
	for (unsigned i = 0; ok && i < d.ndisk; i++) {
		struct vms_vp_str s = vms_vp_list_str(d.disks, i);
		ok = (vm.disk[i] = strndup(s.p, s.len)) != NULL;
	}
	struct vms_vmsrc_aux *a = ok ? aux_get(p, d.uuid) : NULL;
	if (a) {
		a->fallback = d.fallback;
		a->listed = true;
		vms_vmtab_upsert(p->env->vms_w, &vm);
	}
	free(vm.name);
	free(vm.vcpu_tid);
	for (unsigned i = 0; vm.tap && i < d.ntap; i++)
		free(vm.tap[i]);
	for (unsigned i = 0; vm.disk && i < d.ndisk; i++)
		free(vm.disk[i]);
	free(vm.tap);
	free(vm.disk);
	return true;
}

static bool on_event(struct vms_source *src, const struct vms_vp_msg *m)
{
	struct vms_vp_event e;
	char name[128], detail[128], text[264];
	if (vms_vp_event_dec(m, &e) < 0)
		return false;
	str_copy(name, sizeof(name), e.name);
	str_copy(detail, sizeof(detail), e.detail);
	snprintf(text, sizeof(text), "%s: %s", name, detail);
	event(src, e.type, e.uuid, text);
	return true;
}

static void on_sync(struct vms_source *src, const struct vms_vp_num *n)
{
	struct vms_vmsrc *p = src->priv;
	if (!n->c) {
		for (unsigned i = 0; i < p->naux; i++)
			p->aux[i].listed = false;
		return;
	}
	p->synced = true;
	const struct vms_vmtab *t = p->env->vms;
	for (unsigned i = 0; i < t->n;) {
		struct vms_vmsrc_aux *a = vms_vmsrc_aux_find(p, t->vm[i].uuid);
		if (a && a->listed) {
			i++;
			continue;
		}
		char uuid[VMS_UUID_LEN + 1];
		memcpy(uuid, t->vm[i].uuid, sizeof(uuid));
		aux_drop(p, uuid);
		vms_vmtab_remove(p->env->vms_w, uuid);
	}
}

static bool on_stats(struct vms_vmsrc *p, const struct vms_vp_msg *m)
{
	struct vms_vp_stats s;
	if (vms_vp_stats_dec(m, &s) < 0)
		return false;
	struct vms_vmsrc_rec *r = rec_find(p, s.uuid);
	if (!r || !r->pend)
		return true; /* not declared (yet): the values are lost, not misplaced */
	for (unsigned i = 0; i < s.n; i++) {
		uint16_t id, idx;
		uint64_t v;
		vms_vp_stats_get(&s, i, &id, &idx, &v);
		int32_t c = vms_vmlay_col(&r->lay, id, idx);
		if (c < 0 && id >= VMS_VM_MIG_JOB && id < VMS_VM_MIG_JOB + VMS_VM_NMIG && !r->want_mig) {
			/* its first migration: columns from the next frame on
			 * (these values are lost, not misplaced) */
			r->want_mig = true;
			p->mig_reschema = true;
		}
		if (id == VMS_VM_MIG_JOB)
			r->mig_open = v == VMS_LV_JOB_RUNNING;
		if (c < 0)
			continue;
		r->pend[c] = v;
		r->pend_any = true;
	}
	if (s.slow && s.t_real_ns > 0)
		r->pend_slow_t = s.t_real_ns;
	return true;
}

static void send_holds(struct vms_source *src)
{
	struct vms_vmsrc *p = src->priv;
	uint64_t now = now_ns(src);
	for (unsigned i = 0; i < p->nstuck; i++) {
		if (p->stuck[i].until <= now)
			continue;
		vms_vp_begin(&p->cl.out, VMS_VP_BACKOFF);
		vms_vp_u32(&p->cl.out, (uint32_t)((p->stuck[i].until - now) / VMS_NSEC_PER_MSEC));
		vms_vp_u16(&p->cl.out, 1);
		vms_vp_uuid(&p->cl.out, p->stuck[i].uuid);
		vms_vp_end(&p->cl.out);
	}
}

/* The messages that carry a number (and a UUID): decoded once, by
 * on_msg. */
static void on_num(struct vms_source *src, uint32_t type, const struct vms_vp_num *n)
{
	struct vms_vmsrc *p = src->priv;
	switch (type) {
	case VMS_VP_GONE:
		aux_drop(p, n->uuid);
		vms_vmtab_remove(p->env->vms_w, n->uuid);
		break;
	case VMS_VP_SYNC:
		on_sync(src, n);
		break;
	case VMS_VP_BATCH_DONE:
		p->batch_open = false;
		break;
	case VMS_VP_NEXT:
		p->next_tick_at = now_ns(src) + (n->a < VMS_VP_NEXT_MAX ? n->a : VMS_VP_NEXT_MAX);
		break;
	case VMS_VP_ACK:
		if (n->a > p->tick_acked) {
			p->tick_acked = n->a;
			p->unacked_since = now_ns(src);
		}
		break;
	}
}

static bool on_hello(struct vms_source *src, const struct vms_vp_msg *m)
{
	struct vms_vmsrc *p = src->priv;
	struct vms_vp_hello h;
	if (vms_vp_hello_dec(m, &h) < 0)
		return false;
	if (h.version != VMS_VP_VERSION) {
		vms_err("vm: the libvirt agent speaks protocol %u, this sampler %u: install matching "
			"versions; per-VM statistics are off",
			h.version, VMS_VP_VERSION);
		p->fatal = true;
		return false;
	}
	p->hello = true;
	if (p->env->host_w && h.libvirt_version)
		vms_hostid_set_version(p->env->host_w, VMS_HK_LIBVIRT_VERSION, h.libvirt_version);
	send_holds(src);
	for (unsigned i = 0; i < p->nrec; i++)
		vms_vmsrc_rec_queue_needs(p, &p->rec[i]);
	return true;
}

/* false: the stream is broken (a message that does not decode) */
static bool on_msg(struct vms_source *src, const struct vms_vp_msg *m)
{
	struct vms_vmsrc *p = src->priv;
	struct vms_vp_num n;
	struct vms_vp_uuids u;
	switch (m->type) {
	case VMS_VP_HELLO:
		return on_hello(src, m);
	case VMS_VP_CONN:
		return on_conn(src, m);
	case VMS_VP_DOM:
		return on_dom(src, m);
	case VMS_VP_EVENT:
		return on_event(src, m);
	case VMS_VP_STATS:
		return on_stats(p, m);
	case VMS_VP_BATCH:
		if (vms_vp_uuids_dec(m, &u) < 0)
			return false;
		p->nbatch = u.n;
		for (unsigned i = 0; i < u.n; i++)
			vms_vp_uuids_get(&u, i, p->batch[i]);
		p->batch_open = true;
		return true;
	case VMS_VP_GONE:
	case VMS_VP_SYNC:
	case VMS_VP_BATCH_DONE:
	case VMS_VP_NEXT:
	case VMS_VP_ACK:
		if (vms_vp_num_dec(m, &n) < 0)
			return false;
		on_num(src, m->type, &n);
		return true;
	default:
		return true; /* a newer agent's message: ignored */
	}
}

static void vm_ready(struct vms_source *src, const struct pollfd *fds, int n, const struct vms_source_env *env)
{
	struct vms_vmsrc *p = src->priv;
	(void)env; /* p->env, kept from vm_open, for the helpers it calls */
	if (n < 1 || p->cl.fd < 0 || !fds[0].revents)
		return;
	if (fds[0].revents & POLLOUT)
		vms_vclient_flush(&p->cl);
	ssize_t got = vms_vclient_read(&p->cl);
	if (got > 0)
		p->last_rx = now_ns(src);
	struct vms_vp_msg m;
	int r;
	while ((r = vms_vclient_next(&p->cl, &m)) > 0)
		if (!on_msg(src, &m)) {
			r = -EBADMSG;
			break;
		}
	if (r < 0) {
		agent_down(src, true, p->fatal ? "speaks another protocol version" : "sent a malformed message");
		return;
	}
	if (got == -EPIPE || (got < 0 && got != -EAGAIN)) {
		agent_down(src, false, "exited");
		return;
	}
	vms_vclient_flush(&p->cl);
}

static int vm_pollfds(struct vms_source *src, struct pollfd *fds, int max)
{
	struct vms_vmsrc *p = src->priv;
	if (p->cl.fd < 0 || max < 1)
		return 0;
	fds[0] = (struct pollfd){.fd = p->cl.fd,
				 .events = (short)(POLLIN | (p->cl.outpos < p->cl.out.len ? POLLOUT : 0))};
	return 1;
}

/* The agent did not answer for the timeout: it is stuck in a libvirt call
 * (a hung QEMU monitor, a hung libvirtd).  The domains of the batch it
 * announced are left alone for a while, doubling each time. */
static void watchdog(struct vms_source *src, uint64_t now)
{
	struct vms_vmsrc *p = src->priv;
	char names[160] = "";
	size_t off = 0;
	if (p->batch_open) {
		for (unsigned i = 0; i < p->nbatch; i++) {
			struct vms_vmsrc_stuck *s = NULL;
			for (unsigned k = 0; k < p->nstuck && !s; k++)
				if (strcmp(p->stuck[k].uuid, p->batch[i]) == 0)
					s = &p->stuck[k];
			if (!s) {
				struct vms_vmsrc_stuck *ns = realloc(p->stuck, (p->nstuck + 1) * sizeof(*ns));
				if (!ns)
					break;
				p->stuck = ns;
				s = &p->stuck[p->nstuck++];
				memset(s, 0, sizeof(*s));
				snprintf(s->uuid, sizeof(s->uuid), "%s", p->batch[i]);
			}
			s->hold = s->hold ? s->hold * 2 : STUCK_HOLD_FIRST;
			if (s->hold > STUCK_HOLD_MAX)
				s->hold = STUCK_HOLD_MAX;
			s->until = now + s->hold;
			const struct vms_vm *vm = vms_vmtab_find(p->env->vms, p->batch[i]);
			if (off < sizeof(names))
				off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s", off ? ", " : "",
							vm ? vm->name : p->batch[i]);
		}
	}
	char why[256];
	if (p->batch_open)
		snprintf(why, sizeof(why), "was stuck in a libvirt call for %.0f s, asking about %s (left out "
					   "of the slow path for a while)",
			 (double)(now - p->unacked_since) / 1e9, names);
	else
		snprintf(why, sizeof(why), "did not answer for %.0f s", (double)(now - p->unacked_since) / 1e9);
	agent_down(src, true, why);
}

static void vm_idle(struct vms_source *src, uint64_t until_ns, const struct vms_source_env *env)
{
	struct vms_vmsrc *p = src->priv;
	(void)until_ns;
	uint64_t now = now_ns(src);

	/* VMs whose process went away: out of the table (the agent's GONE
	 * usually comes first), unless the agent announced a new process for
	 * the same UUID meanwhile, or it migrated out and the agent's word of
	 * its end is still to come or still to be written (mig_end_waits) */
	for (unsigned i = 0; i < p->nrec; i++) {
		struct vms_vmsrc_rec *r = &p->rec[i];
		const struct vms_vm *vm = r->gone ? vms_vmtab_find(env->vms, r->id.uuid) : NULL;
		if (!vm || vm->pid != r->id.pid)
			continue;
		if (!r->gone_at)
			r->gone_at = now;
		if ((r->want_mig && r->pend_any) || mig_end_waits(p, r, now))
			continue;
		vms_vmtab_remove(env->vms_w, r->id.uuid);
	}

	if (p->cl.fd >= 0) {
		uint64_t every = p->lc->timeout_ns / 4 < IDLE_TICK_EVERY ? p->lc->timeout_ns / 4 : IDLE_TICK_EVERY;
		if (!p->connected)
			every = p->lc->timeout_ns;
		bool none = (p->nrec == 0 && env->vms->n == 0) || (now < p->next_tick_at && !p->batch_open);
		bool idle = none && now - p->tick_sent_at < every;
		if (p->tick_due > p->tick_sent && p->hello && !idle) {
			p->tick_sent_at = now;
			if (p->tick_sent == p->tick_acked)
				p->unacked_since = now;
			vms_vp_begin(&p->cl.out, VMS_VP_TICK);
			vms_vp_u64(&p->cl.out, p->tick_due);
			vms_vp_u64(&p->cl.out, (uint64_t)vms_clock_real(env->clock));
			if (vms_vp_end(&p->cl.out) == 0)
				p->tick_sent = p->tick_due;
			vms_vclient_trim(&p->cl, OUT_KEEP);
		}
		if (p->cl.outpos < p->cl.out.len)
			vms_vclient_flush(&p->cl);
		bool late = p->tick_acked < p->tick_sent && now - p->unacked_since > p->lc->timeout_ns;
		bool mute = !p->hello && now - p->started_at > p->lc->timeout_ns;
		if (late || mute)
			watchdog(src, now);
	} else if (!p->fatal && p->argv && now >= p->respawn_at) {
		int r = spawn(src);
		if (r < 0) {
			p->respawn_wait = p->respawn_wait ? p->respawn_wait * 2 : RESPAWN_FIRST;
			if (p->respawn_wait > RESPAWN_MAX)
				p->respawn_wait = RESPAWN_MAX;
			p->respawn_at = now + p->respawn_wait;
		}
	}
}

/* ---- open and close ------------------------------------------------------------------ */

/* Wait (boundedly) for the agent's first listing, so that the first
 * schema already has the running VMs: a CSV file then starts with their
 * columns instead of rolling over after its first row. */
static void first_listing(struct vms_source *src)
{
	struct vms_vmsrc *p = src->priv;
	uint64_t wait = p->lc->timeout_ns < 5 * VMS_NSEC_PER_SEC ? p->lc->timeout_ns : 5 * VMS_NSEC_PER_SEC;
	uint64_t end = now_ns(src) + wait;
	while (p->cl.fd >= 0 && !p->synced && !p->said_unavailable && !p->fatal) {
		uint64_t now = now_ns(src);
		if (now >= end)
			break;
		struct pollfd fd;
		if (vm_pollfds(src, &fd, 1) != 1)
			break;
		int ms = (int)((end - now) / VMS_NSEC_PER_MSEC) + 1;
		if (poll(&fd, 1, ms) <= 0)
			continue;
		vm_ready(src, &fd, 1, p->env);
	}
}

static void vm_close(struct vms_source *src)
{
	struct vms_vmsrc *p = src->priv;
	vms_vclient_stop(&p->cl, 1000);
	vms_vclient_free(&p->cl);
	for (unsigned i = 0; i < p->nrec; i++)
		vms_vmsrc_rec_free(&p->rec[i]);
	free(p->rec);
	p->rec = NULL;
	p->nrec = 0;
	free(p->nt.ent);
	p->nt.ent = NULL;
	vms_nl_close(&p->nl);
	free(p->st.ent);
	p->st.ent = NULL;
	vms_procfile_shared_close(p->nd);
	p->nd = NULL;
	if (p->ino_open)
		close(p->ino);
	p->ino_open = false;
	vms_cgmounts_free(&p->cg);
	free(p->scratch);
	free(p->aux);
	free(p->stuck);
	argv_free(p->argv);
	free(p->uri);
	memset(p, 0, sizeof(*p)); /* the host empties the VM set it gave */
}

static int vm_open(struct vms_source *src, const struct vms_source_env *env)
{
	struct vms_vmsrc *p = src->priv;
	int r;

	p->env = env; /* the host keeps it while the source is open */
	vms_vclient_init(&p->cl);
	p->nl.fd = -1; /* vm_close closes it */
	p->lc = &src->conf->libvirt;
	p->detail_every = vms_cadence_ticks(p->lc->detail_ns, src->conf->interval_ns);
	if (!env->vms_w)
		return -EINVAL; /* the source host gives the VM set to its producer */
	vms_vmtab_clear(env->vms_w);
	p->uri = strdup(p->lc->uri ? p->lc->uri : "libvirt's default URI");
	p->scratch = malloc(SCRATCH);
	if (!p->uri || !p->scratch)
		return -ENOMEM;
	r = vms_cgmounts_load(&p->cg, src->proc_dirfd, p->lc->cgroup_root);
	if (r < 0)
		return r;
	/* without it (EMFILE, no inotify in the kernel) every limit is read
	 * each tick */
	p->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	p->ino_open = p->ino >= 0;
	if (vms_procfile_shared_open(&p->nd, src->proc_dirfd, "net/dev", 4096) < 0)
		p->nd = NULL; /* no taps from the kernel: the agent serves them */
	/* the taps' counters as the netdev source reads the host's
	 * (sources.netdev.backend): rtnetlink unless procfs is asked for or
	 * the proc root is not the kernel's; /proc/net/dev without it */
	if (src->conf->netdev.backend != VMS_NETDEV_PROCFS && vms_proc_is_procfs(src->proc_dirfd))
		p->nl_want = vms_nl_open(&p->nl) == 0;
	char *path = agent_path(p->lc);
	if (!path)
		return -ENOMEM;
	if (!vms_executable(path)) {
		vms_err("vm: per-VM statistics unavailable: the libvirt agent %s is missing or not "
			"executable (set sources.libvirt.agent)",
			path);
		free(path);
		return -ENOENT;
	}
	r = build_argv(src, path);
	if (r < 0)
		return r;
	r = spawn(src);
	if (r < 0) {
		vms_err("vm: per-VM statistics unavailable: cannot start %s: %s", p->argv[0], strerror(-r));
		return r;
	}
	first_listing(src);
	return 0;
}

VMS_SOURCE_OPS_PRIV(vm, struct vms_vmsrc, vm, .produces_vms = true, .pollfds = vm_pollfds, .ready = vm_ready,
		    .idle = vm_idle);
