/* SPDX-License-Identifier: MIT */
/* virt_agent.c - vmsampler-virt, the libvirt agent of the vm source.
 *
 *   vmsampler-virt --fd=3 [--uri=URI] [--proc-root=DIR] [--interval-ns=N]
 *                  [--refresh-ns=N] [--budget-ns=N] [--crosscheck]
 *                  [--dirty-every-ns=N --dirty-seconds=S]
 *
 * Started by the sampler (source_vm.c) with one end of a socketpair as fd
 * 3; it is not meant to be run by hand.  It holds one read-only libvirt
 * connection and tells the sampler, in the protocol of virt_proto.h:
 *   - whether it is connected (CONN), reconnecting with back-off (0.25 s
 *     doubling to 5 s) when libvirtd goes away: libvirt does not
 *     reconnect by itself (FACTS.md h); where the daemon's socket
 *     directory is known (a local URI, sockwatch.h) it is watched, a new
 *     entry there starts the back-off again, and the blind retries slow
 *     down to one a minute;
 *   - the running domains (DOM, GONE, and SYNC around a full listing, on
 *     every (re)connect and every minute, with the state group only: one
 *     cheap call), refreshed on lifecycle events, which also become EVENT
 *     messages;
 *   - each tick (TICK from the sampler, answered by ACK at once): the
 *     fallback fast values and one paced slow batch (virt_stats.c), the
 *     batches gathered 5 s apart (virt_pace.h); after a tick's work, and
 *     whenever work comes sooner, NEXT says when it next has work, and the
 *     sampler leaves the TICKs between out (but for its watchdog's): a
 *     TICK is a wake-up of both processes;
 *   - migrations: a domain's migration-iteration event says it has a
 *     migration job; from then on, and only for it, each tick reads its
 *     job statistics (migration.* values) until the job ends.  A domain
 *     migrated out stays listed (shut off) until the job-completed event
 *     brought its final statistics and two ticks wrote them (at most
 *     MIG_GONE_WAIT); the destination announces it as started (migrated)
 *     under the same UUID;
 *   - dirty-page rates, only with --dirty-every-ns: a second, read-write
 *     connection (the only one that may start a calculation), and every N
 *     ns per running domain a calculation of S seconds started on it (at
 *     most one start per tick); its result, read from the dirtyrate stats
 *     group once it is measured, goes out once (dirtyrate.* values).
 * It runs at nice 10 (its work is background work: the sampler's ticks
 * and the guests come first), and exits when the sampler closes its end,
 * and when the sampler dies (PR_SET_PDEATHSIG). */
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <libvirt/virterror.h>

#include "agent.h"
#include "grow.h"
#include "virt_dom.h"
#include "virt_stats.h"
#include <vmsampler/format.h>

#define RETRY_FIRST (250 * VMS_NSEC_PER_MSEC)
#define RETRY_MAX (5 * VMS_NSEC_PER_SEC)
/* with the socket's directory watched: a blind retry now and then (a
 * daemon elsewhere on the path, a missed event), the watch does the rest */
#define RETRY_WATCHED (60 * VMS_NSEC_PER_SEC)
#define RELIST_EVERY (60 * VMS_NSEC_PER_SEC)
#define MIG_GONE_WAIT (3 * VMS_NSEC_PER_SEC)

static struct vms_agent A;

static void die(const char *what)
{
	fprintf(stderr, "vmsampler-virt: %s\n", what);
	exit(1);
}

/* ---- the sampler's socket -------------------------------------------------------- */

static void send_conn(struct vms_agent *a, bool up, bool first, const char *msg)
{
	vms_vp_begin(&a->w, VMS_VP_CONN);
	vms_vp_u8(&a->w, up);
	vms_vp_u8(&a->w, first);
	vms_vp_cstr(&a->w, a->driver);
	vms_vp_cstr(&a->w, msg);
	vms_vp_u64(&a->w, up ? a->hv_version : 0);
	vms_vp_end(&a->w);
	vms_agent_send(a);
}

static void send_uuid_msg(struct vms_agent *a, unsigned type, const char *uuid)
{
	vms_vp_begin(&a->w, type);
	vms_vp_uuid(&a->w, uuid);
	vms_vp_end(&a->w);
	vms_agent_send(a);
}

static void send_sync(struct vms_agent *a, bool end)
{
	vms_vp_begin(&a->w, VMS_VP_SYNC);
	vms_vp_u32(&a->w, a->nd);
	vms_vp_u8(&a->w, end);
	vms_vp_end(&a->w);
	vms_agent_send(a);
}

/* ---- domains ------------------------------------------------------------------ */

static struct vms_adom *dom_find(struct vms_agent *a, const char *uuid)
{
	for (unsigned i = 0; i < a->nd; i++)
		if (strcmp(a->d[i].uuid, uuid) == 0)
			return &a->d[i];
	return NULL;
}

static void dom_drop(struct vms_agent *a, struct vms_adom *d)
{
	vms_pace_remove(&a->pace, d->uuid);
	vms_adom_free(d);
	*d = a->d[--a->nd];
}

/* Add or replace (a new identity) the domain; announce it. */
static struct vms_adom *dom_load(struct vms_agent *a, virDomainPtr dom)
{
	struct vms_adom o;
	if (vms_adom_load(a, dom, &o) < 0)
		return NULL;
	struct vms_adom *d = dom_find(a, o.uuid);
	if (d) {
		o.fallback |= d->fallback; /* the sampler's NEEDs stay */
		o.hold_until = d->hold_until;
		vms_adom_free(d);
	} else {
		if (a->nd == a->capd) {
			unsigned cap = a->capd ? a->capd * 2 : 16;
			struct vms_adom *n = realloc(a->d, cap * sizeof(*n));
			if (!n) {
				vms_adom_free(&o);
				return NULL;
			}
			a->d = n;
			a->capd = cap;
		}
		d = &a->d[a->nd++];
		if (vms_pace_add(&a->pace, o.uuid) < 0) {
			a->nd--;
			vms_adom_free(&o);
			return NULL;
		}
	}
	*d = o;
	vms_adom_send(a, d);
	return d;
}

/* Every running domain, announced between SYNC begin and end.  Known
 * domains with the same id keep their identity (no XML parse); the state
 * comes with the listing. */
static int relist(struct vms_agent *a)
{
	virDomainStatsRecordPtr *recs = NULL;
	int n = virConnectGetAllDomainStats(a->conn, VIR_DOMAIN_STATS_STATE, &recs,
					    VIR_CONNECT_GET_ALL_DOMAINS_STATS_ACTIVE);
	if (n < 0)
		return -EIO;
	send_sync(a, false);
	for (unsigned i = 0; i < a->nd; i++)
		a->d[i].mark = false;
	for (int i = 0; i < n; i++) {
		char uuid[VIR_UUID_STRING_BUFLEN];
		if (virDomainGetUUIDString(recs[i]->dom, uuid) < 0)
			continue;
		struct vms_adom *d = dom_find(a, uuid);
		int state = -1, reason = -1;
		for (int k = 0; k < recs[i]->nparams; k++) {
			virTypedParameterPtr p = &recs[i]->params[k];
			if (p->type != VIR_TYPED_PARAM_INT)
				continue;
			if (strcmp(p->field, "state.state") == 0)
				state = p->value.i;
			else if (strcmp(p->field, "state.reason") == 0)
				reason = p->value.i;
		}
		if (d && d->id == virDomainGetID(recs[i]->dom)) {
			if (state >= 0)
				d->state = state;
			if (reason >= 0)
				d->reason = reason;
			vms_adom_send(a, d);
		} else {
			d = dom_load(a, recs[i]->dom);
		}
		if (d)
			d->mark = true;
	}
	virDomainStatsRecordListFree(recs);
	for (unsigned i = 0; i < a->nd;) {
		if (a->d[i].mark) {
			i++;
			continue;
		}
		send_uuid_msg(a, VMS_VP_GONE, a->d[i].uuid);
		dom_drop(a, &a->d[i]);
	}
	send_sync(a, true);
	a->next_relist = vms_agent_mono() + RELIST_EVERY;
	return 0;
}

/* ---- lifecycle events ---------------------------------------------------------------- */

/* A queued event of that domain (NULL: not queued). */
static struct vms_agent_lcevent *queue_event(struct vms_agent *a, virDomainPtr dom, int kind)
{
	char uuid[VIR_UUID_STRING_BUFLEN];
	if (virDomainGetUUIDString(dom, uuid) < 0)
		return NULL;
	struct vms_agent_lcevent *n = vms_grow_array(a->ev, &a->capev, a->nev + 1, sizeof(*n), 16);
	if (!n)
		return NULL;
	a->ev = n;
	struct vms_agent_lcevent *e = &a->ev[a->nev++];
	snprintf(e->uuid, sizeof(e->uuid), "%s", uuid);
	const char *name = virDomainGetName(dom);
	snprintf(e->name, sizeof(e->name), "%s", name ? name : "");
	e->kind = kind;
	e->event = e->detail = 0;
	return e;
}

static int on_lifecycle(virConnectPtr conn, virDomainPtr dom, int event, int detail, void *opaque)
{
	(void)conn;
	struct vms_agent_lcevent *e = queue_event(opaque, dom, LC_LIFECYCLE);
	if (e) {
		e->event = event;
		e->detail = detail;
	}
	return 0;
}

/* A new pass over the domain's memory: it has a migration job (QEMU says
 * so from the first pass on). */
static void on_mig_iteration(virConnectPtr conn, virDomainPtr dom, int iteration, void *opaque)
{
	(void)conn;
	(void)iteration;
	queue_event(opaque, dom, LC_MIG_ITERATION);
}

/* The job ended well: its final statistics come with the event. */
static void on_job_completed(virConnectPtr conn, virDomainPtr dom, virTypedParameterPtr params, int n,
			     void *opaque)
{
	(void)conn;
	int op = -1;
	if (virTypedParamsGetInt(params, n, VIR_DOMAIN_JOB_OPERATION, &op) == 1 &&
	    op != VIR_DOMAIN_JOB_OPERATION_MIGRATION_OUT && op != VIR_DOMAIN_JOB_OPERATION_MIGRATION_IN)
		return; /* a dump, a backup ... */
	struct vms_agent_lcevent *e = queue_event(opaque, dom, LC_JOB_COMPLETED);
	if (e)
		vms_agent_job_values(params, n, VIR_DOMAIN_JOB_COMPLETED, e->job);
}

struct evname {
	int v;
	const char *s;
};

static const char *ev_word(const struct evname *t, int v)
{
	for (; t->s; t++)
		if (t->v == v)
			return t->s;
	return "unknown";
}

/* The stream's event type and a word for libvirt's detail. */
static uint32_t map_event(int event, int detail, const char **what)
{
	static const struct evname defined[] = {
		{VIR_DOMAIN_EVENT_DEFINED_ADDED, "added"}, {VIR_DOMAIN_EVENT_DEFINED_UPDATED, "updated"},
		{VIR_DOMAIN_EVENT_DEFINED_RENAMED, "renamed"}, {VIR_DOMAIN_EVENT_DEFINED_FROM_SNAPSHOT, "from snapshot"},
		{0, NULL}};
	static const struct evname undefined[] = {
		{VIR_DOMAIN_EVENT_UNDEFINED_REMOVED, "removed"}, {VIR_DOMAIN_EVENT_UNDEFINED_RENAMED, "renamed"},
		{0, NULL}};
	static const struct evname started[] = {
		{VIR_DOMAIN_EVENT_STARTED_BOOTED, "booted"}, {VIR_DOMAIN_EVENT_STARTED_MIGRATED, "migrated"},
		{VIR_DOMAIN_EVENT_STARTED_RESTORED, "restored"},
		{VIR_DOMAIN_EVENT_STARTED_FROM_SNAPSHOT, "from snapshot"}, {VIR_DOMAIN_EVENT_STARTED_WAKEUP, "wakeup"},
		{0, NULL}};
	static const struct evname suspended[] = {
		{VIR_DOMAIN_EVENT_SUSPENDED_PAUSED, "paused"}, {VIR_DOMAIN_EVENT_SUSPENDED_MIGRATED, "migrated"},
		{VIR_DOMAIN_EVENT_SUSPENDED_IOERROR, "I/O error"}, {VIR_DOMAIN_EVENT_SUSPENDED_WATCHDOG, "watchdog"},
		{VIR_DOMAIN_EVENT_SUSPENDED_RESTORED, "restored"},
		{VIR_DOMAIN_EVENT_SUSPENDED_FROM_SNAPSHOT, "from snapshot"},
		{VIR_DOMAIN_EVENT_SUSPENDED_API_ERROR, "API error"}, {VIR_DOMAIN_EVENT_SUSPENDED_POSTCOPY, "postcopy"},
		{VIR_DOMAIN_EVENT_SUSPENDED_POSTCOPY_FAILED, "postcopy failed"}, {0, NULL}};
	static const struct evname resumed[] = {
		{VIR_DOMAIN_EVENT_RESUMED_UNPAUSED, "unpaused"}, {VIR_DOMAIN_EVENT_RESUMED_MIGRATED, "migrated"},
		{VIR_DOMAIN_EVENT_RESUMED_FROM_SNAPSHOT, "from snapshot"},
		{VIR_DOMAIN_EVENT_RESUMED_POSTCOPY, "postcopy"}, {0, NULL}};
	static const struct evname stopped[] = {
		{VIR_DOMAIN_EVENT_STOPPED_SHUTDOWN, "shutdown"}, {VIR_DOMAIN_EVENT_STOPPED_DESTROYED, "destroyed"},
		{VIR_DOMAIN_EVENT_STOPPED_CRASHED, "crashed"}, {VIR_DOMAIN_EVENT_STOPPED_MIGRATED, "migrated"},
		{VIR_DOMAIN_EVENT_STOPPED_SAVED, "saved"}, {VIR_DOMAIN_EVENT_STOPPED_FAILED, "failed"},
		{VIR_DOMAIN_EVENT_STOPPED_FROM_SNAPSHOT, "from snapshot"}, {0, NULL}};
	static const struct evname pm[] = {
		{VIR_DOMAIN_EVENT_PMSUSPENDED_MEMORY, "pmsuspended (memory)"},
		{VIR_DOMAIN_EVENT_PMSUSPENDED_DISK, "pmsuspended (disk)"}, {0, NULL}};
	static const struct evname crashed[] = {{VIR_DOMAIN_EVENT_CRASHED_PANICKED, "panicked"}, {0, NULL}};
	switch (event) {
	case VIR_DOMAIN_EVENT_DEFINED:
		*what = ev_word(defined, detail);
		return VMS_EV_VM_DEFINED;
	case VIR_DOMAIN_EVENT_UNDEFINED:
		*what = ev_word(undefined, detail);
		return VMS_EV_VM_UNDEFINED;
	case VIR_DOMAIN_EVENT_STARTED:
		*what = ev_word(started, detail);
		return detail == VIR_DOMAIN_EVENT_STARTED_MIGRATED ? VMS_EV_VM_MIGRATED_IN : VMS_EV_VM_STARTED;
	case VIR_DOMAIN_EVENT_SUSPENDED:
		*what = ev_word(suspended, detail);
		return VMS_EV_VM_PAUSED;
	case VIR_DOMAIN_EVENT_RESUMED:
		*what = ev_word(resumed, detail);
		return VMS_EV_VM_RESUMED;
	case VIR_DOMAIN_EVENT_STOPPED:
		*what = ev_word(stopped, detail);
		if (detail == VIR_DOMAIN_EVENT_STOPPED_CRASHED)
			return VMS_EV_VM_CRASHED;
		return detail == VIR_DOMAIN_EVENT_STOPPED_MIGRATED ? VMS_EV_VM_MIGRATED_OUT : VMS_EV_VM_STOPPED;
	case VIR_DOMAIN_EVENT_PMSUSPENDED:
		*what = ev_word(pm, detail);
		return VMS_EV_VM_PAUSED;
	case VIR_DOMAIN_EVENT_CRASHED:
		*what = ev_word(crashed, detail);
		return VMS_EV_VM_CRASHED;
	default:
		*what = "";
		return 0; /* SHUTDOWN (the guest began it; STOPPED follows) */
	}
}

/* The domain state a lifecycle event leaves behind (0: not one). */
static int event_state(int event)
{
	switch (event) {
	case VIR_DOMAIN_EVENT_SUSPENDED:
		return VIR_DOMAIN_PAUSED;
	case VIR_DOMAIN_EVENT_RESUMED:
	case VIR_DOMAIN_EVENT_STARTED:
		return VIR_DOMAIN_RUNNING;
	case VIR_DOMAIN_EVENT_PMSUSPENDED:
		return VIR_DOMAIN_PMSUSPENDED;
	default:
		return 0;
	}
}

static void send_event(struct vms_agent *a, uint32_t type, const char *uuid, const char *name, const char *what)
{
	vms_vp_begin(&a->w, VMS_VP_EVENT);
	vms_vp_u16(&a->w, (uint16_t)type);
	vms_vp_uuid(&a->w, uuid);
	vms_vp_cstr(&a->w, name);
	vms_vp_cstr(&a->w, what);
	vms_vp_end(&a->w);
	vms_agent_send(a);
}

/* A migration event: no lookup, no state change. */
static void process_mig_event(struct vms_agent *a, const struct vms_agent_lcevent *e)
{
	struct vms_adom *d = dom_find(a, e->uuid);
	if (!d)
		return;
	if (e->kind == LC_MIG_ITERATION) {
		d->mig = !d->dead;
		d->mig_fail = 0;
		d->final_sent = false; /* a new job: its own final values to wait for */
		return;
	}
	vms_agent_job_send(a, d, e->job);
	d->mig = false;
	d->final_sent = true;
	if (d->dead)
		d->gone_ticks = 2;
}

/* Migrated out: keep it, shut off, for its final statistics. */
static void keep_migrated(struct vms_agent *a, struct vms_adom *d)
{
	d->dead = true;
	d->mig = false;
	d->state = VIR_DOMAIN_SHUTOFF;
	d->reason = VIR_DOMAIN_SHUTOFF_MIGRATED;
	d->gone_ticks = d->final_sent ? 2 : 0;
	d->gone_at = vms_agent_mono() + MIG_GONE_WAIT;
	vms_adom_send(a, d);
}

/* Each tick: the domains migrated out whose time is up go. */
static void drop_migrated(struct vms_agent *a)
{
	uint64_t now = vms_agent_mono();
	for (unsigned i = 0; i < a->nd;) {
		struct vms_adom *d = &a->d[i];
		if (!d->dead || (!(d->gone_ticks && --d->gone_ticks == 0) && now < d->gone_at)) {
			i++;
			continue;
		}
		send_uuid_msg(a, VMS_VP_GONE, d->uuid);
		dom_drop(a, d);
	}
}

static void process_events(struct vms_agent *a)
{
	for (unsigned i = 0; i < a->nev && a->conn; i++) {
		struct vms_agent_lcevent *e = &a->ev[i];
		if (e->kind != LC_LIFECYCLE) {
			process_mig_event(a, e);
			continue;
		}
		const char *what;
		uint32_t type = map_event(e->event, e->detail, &what);
		virDomainPtr dom = virDomainLookupByUUIDString(a->conn, e->uuid);
		int active = dom ? virDomainIsActive(dom) : 0;
		struct vms_adom *d = dom_find(a, e->uuid);
		char name[256];
		snprintf(name, sizeof(name), "%s", e->name[0] ? e->name : d ? d->name : "");
		/* the state change and the event go out in one write, so that the
		 * sampler never has one in a frame without the other */
		a->hold = true;
		if (active == 1) {
			int st, rs, want = event_state(e->event);
			if (!d || d->id != virDomainGetID(dom)) {
				dom_load(a, dom); /* started (or restarted): a new identity */
			} else {
				/* the state this event says, not what it is by now (a
				 * resume may already have followed the pause) */
				if (virDomainGetState(dom, &st, &rs, 0) < 0)
					st = rs = 0;
				if (want > 0 && st != want)
					st = want, rs = 0;
				if (st > 0 && (st != d->state || rs != d->reason)) {
					d->state = st;
					d->reason = rs;
					vms_adom_send(a, d);
				}
			}
		} else if (d && e->event == VIR_DOMAIN_EVENT_STOPPED && e->detail == VIR_DOMAIN_EVENT_STOPPED_MIGRATED) {
			keep_migrated(a, d);
		} else if (d) {
			send_uuid_msg(a, VMS_VP_GONE, d->uuid);
			dom_drop(a, d);
		}
		if (dom)
			virDomainFree(dom);
		if (type)
			send_event(a, type, e->uuid, name, what);
		a->hold = false;
		vms_agent_send(a);
	}
	a->nev = 0;
}

/* ---- the connection ----------------------------------------------------------------- */

static void on_close(virConnectPtr conn, int reason, void *opaque)
{
	struct vms_agent *a = opaque;
	(void)conn;
	(void)reason;
	a->closed = true;
}

static void quiet(void *u, virErrorPtr e)
{
	(void)u;
	(void)e;
}

static const char *last_error(void)
{
	virErrorPtr e = virGetLastError();
	return e && e->message ? e->message : "unknown error";
}

static void schedule_retry(struct vms_agent *a)
{
	if (a->sw.fd >= 0 && a->sw.wd < 0)
		vms_sockwatch_arm(&a->sw);
	/* the blind retries slow down once nothing happened there for a
	 * while: a daemon whose socket appeared may take seconds to listen */
	uint64_t now = vms_agent_mono();
	bool calm = !a->sw_seen_at || now - a->sw_seen_at > RETRY_WATCHED;
	uint64_t cap = a->sw.wd >= 0 && calm ? RETRY_WATCHED : RETRY_MAX;
	a->retry_wait = a->retry_wait ? a->retry_wait * 2 : RETRY_FIRST;
	if (a->retry_wait > cap)
		a->retry_wait = cap;
	a->retry_at = now + a->retry_wait;
	virEventUpdateTimeout(a->timer, (int)(a->retry_wait / VMS_NSEC_PER_MSEC));
}

static void disconnect(struct vms_agent *a, const char *why)
{
	if (a->conn) {
		if (a->cb_id >= 0)
			virConnectDomainEventDeregisterAny(a->conn, a->cb_id);
		if (a->cb_iter >= 0)
			virConnectDomainEventDeregisterAny(a->conn, a->cb_iter);
		if (a->cb_job >= 0)
			virConnectDomainEventDeregisterAny(a->conn, a->cb_job);
		virConnectUnregisterCloseCallback(a->conn, on_close);
		virConnectClose(a->conn);
	}
	if (a->rw)
		virConnectClose(a->rw);
	a->rw = NULL;
	a->conn = NULL;
	a->cb_id = a->cb_iter = a->cb_job = -1;
	a->closed = false;
	a->nev = 0;
	/* keep the domains: the sampler keeps reading their kernel files; a
	 * reconnect lists them again under the same UUIDs */
	for (unsigned i = 0; i < a->nd; i++)
		if (a->d[i].dom) {
			virDomainFree(a->d[i].dom);
			a->d[i].dom = NULL;
		}
	send_conn(a, false, false, why);
	a->reported_down = true;
	a->retry_wait = 0;
	a->sw_seen_at = vms_agent_mono(); /* a daemon restarting: no slow retries for a while */
	schedule_retry(a);
}

/* Local QEMU: where its pid files and status XML are. */
static void find_run_dir(struct vms_agent *a)
{
	free(a->run_dir);
	a->run_dir = NULL;
	a->local_qemu = false;
	const char *u = a->conn_uri;
	const char *sep = u ? strstr(u, "://") : NULL;
	if (strcmp(a->driver, "QEMU") != 0 || !sep || sep[3] != '/')
		return; /* another driver, or a host in the URI */
	const char *path = sep + 3;
	a->local_qemu = true;
	if (strncmp(path, "/system", 7) == 0 && (path[7] == '\0' || path[7] == '?')) {
		a->run_dir = strdup("/run/libvirt/qemu");
	} else if (strncmp(path, "/session", 8) == 0 && (path[8] == '\0' || path[8] == '?')) {
		const char *x = getenv("XDG_RUNTIME_DIR");
		if (x && asprintf(&a->run_dir, "%s/libvirt/qemu/run", x) < 0)
			a->run_dir = NULL;
	}
}

/* Dirty-rate sampling only: a read-write connection to the same daemon
 * (virDomainStartDirtyRateCalc is refused read-only; MIGRATION.md).  It
 * needs libvirt's read-write socket (root, or the libvirt group, or
 * polkit's consent); refused, the rest goes on, said in one line. */
static void open_rw(struct vms_agent *a)
{
	if (!a->dirty_every_ns)
		return;
	a->rw = virConnectOpen(a->conn_uri ? a->conn_uri : a->uri);
	if (!a->rw && !a->rw_said) {
		fprintf(stderr,
			"vmsampler-virt: dirty-rate sampling off: no read-write connection to libvirt at %s "
			"(needs root, the libvirt group or polkit's consent): %s\n",
			a->conn_uri ? a->conn_uri : "the default URI", last_error());
		a->rw_said = true;
	}
}

static void try_connect(struct vms_agent *a)
{
	a->retry_at = 0;
	virEventUpdateTimeout(a->timer, -1);
	virConnectPtr c = virConnectOpenReadOnly(a->uri);
	if (!c) {
		char msg[512];
		snprintf(msg, sizeof(msg), "%s", last_error());
		send_conn(a, false, !a->reported_down, msg);
		a->reported_down = true;
		schedule_retry(a);
		return;
	}
	a->conn = c;
	a->closed = false;
	vms_sockwatch_disarm(&a->sw);
	virConnectRegisterCloseCallback(c, on_close, a, NULL);
	virConnectSetKeepAlive(c, 5, 3);
	a->cb_id = virConnectDomainEventRegisterAny(c, NULL, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
						    VIR_DOMAIN_EVENT_CALLBACK(on_lifecycle), a, NULL);
	a->cb_iter = virConnectDomainEventRegisterAny(c, NULL, VIR_DOMAIN_EVENT_ID_MIGRATION_ITERATION,
						      VIR_DOMAIN_EVENT_CALLBACK(on_mig_iteration), a, NULL);
	a->cb_job = virConnectDomainEventRegisterAny(c, NULL, VIR_DOMAIN_EVENT_ID_JOB_COMPLETED,
						     VIR_DOMAIN_EVENT_CALLBACK(on_job_completed), a, NULL);
	const char *t = virConnectGetType(c);
	snprintf(a->driver, sizeof(a->driver), "%s", t ? t : "?");
	unsigned long hv = 0;
	a->hv_version = virConnectGetVersion(c, &hv) == 0 ? hv : 0;
	free(a->conn_uri);
	a->conn_uri = virConnectGetURI(c);
	find_run_dir(a);
	open_rw(a);
	a->no_bulk_cpu = a->no_bulk_vcpu = a->no_bulk_net = false;
	a->no_bulk_balloon = a->no_bulk_block = false;
	/* the domain handles of the old connection are gone: reload */
	for (unsigned i = 0; i < a->nd; i++)
		a->d[i].id = (unsigned)-1;
	send_conn(a, true, false, a->conn_uri ? a->conn_uri : "");
	a->retry_wait = 0;
	a->reported_down = false;
	if (relist(a) < 0)
		disconnect(a, last_error());
}

static void on_timer(int timer, void *opaque)
{
	(void)timer;
	(void)opaque; /* wakes the loop: the retry is due */
}

/* Something appeared where the daemon's socket will be: try soon (the
 * socket exists before the daemon listens on it: the back-off from its
 * first step). */
static void on_sockdir(int watch, int fd, int events, void *opaque)
{
	(void)watch;
	(void)fd;
	(void)events;
	struct vms_agent *a = opaque;
	if (vms_sockwatch_read(&a->sw) && !a->conn) {
		a->sw_seen_at = vms_agent_mono();
		a->retry_wait = 0;
		schedule_retry(a);
	}
}

/* ---- NEXT: when the agent next has work for a tick ------------------------------------------ */

/* CLOCK_MONOTONIC ns of the next tick with work (now: every tick): the
 * fallback fast values, migration jobs, the ticks a migrated-out domain
 * waits, and dirty-rate sampling want every tick; the slow path its next
 * batch point; the relist once a minute.  Without a connection nothing:
 * the reconnect runs on a timer. */
static uint64_t next_need(const struct vms_agent *a, uint64_t now)
{
	if (!a->conn)
		return UINT64_MAX;
	if (a->dirty_every_ns)
		return now;
	for (unsigned i = 0; i < a->nd; i++)
		if (a->d[i].fallback || a->d[i].mig || a->d[i].dead)
			return now;
	uint64_t t = vms_pace_next(&a->pace, now);
	return a->next_relist < t ? a->next_relist : t;
}

/* Tell the sampler after a tick's work, and whenever work comes sooner
 * than said (a new domain: its first values are due at once). */
static void say_next(struct vms_agent *a, bool after_tick)
{
	uint64_t now = vms_agent_mono(), need = next_need(a, now);
	if (!after_tick && need >= a->next_said)
		return;
	uint64_t delay = need > now ? need - now : 0;
	vms_vp_begin(&a->w, VMS_VP_NEXT);
	vms_vp_u64(&a->w, delay < VMS_VP_NEXT_MAX ? delay : VMS_VP_NEXT_MAX);
	vms_vp_end(&a->w);
	vms_agent_send(a);
	a->next_said = need;
}

/* ---- messages from the sampler ------------------------------------------------------------ */

static void on_msg(struct vms_agent *a, const struct vms_vp_msg *m)
{
	struct vms_vp_num n;
	struct vms_vp_uuids u;
	switch (m->type) {
	case VMS_VP_TICK:
		if (vms_vp_num_dec(m, &n) < 0)
			break;
		vms_vp_begin(&a->w, VMS_VP_ACK);
		vms_vp_u64(&a->w, n.a);
		vms_vp_end(&a->w);
		vms_agent_send(a);
		a->tick_work = true;
		break;
	case VMS_VP_BACKOFF:
		if (vms_vp_uuids_dec(m, &u) < 0)
			break;
		for (unsigned i = 0; i < u.n; i++) {
			char uuid[VMS_VP_UUID_LEN + 1];
			vms_vp_uuids_get(&u, i, uuid);
			uint64_t until = vms_agent_mono() + (uint64_t)u.id * VMS_NSEC_PER_MSEC;
			vms_pace_hold(&a->pace, uuid, until);
			struct vms_adom *d = dom_find(a, uuid);
			if (d)
				d->hold_until = until;
		}
		break;
	case VMS_VP_NEED:
		if (vms_vp_num_dec(m, &n) == 0) {
			struct vms_adom *d = dom_find(a, n.uuid);
			uint8_t g = (uint8_t)(n.b & (VMS_VG_CPU | VMS_VG_VCPU | VMS_VG_NET));
			if (d && (d->fallback & g) != g) {
				d->fallback |= g;
				vms_adom_send(a, d);
			}
		}
		break;
	default:
		break;
	}
}

static void on_socket(int watch, int fd, int events, void *opaque)
{
	struct vms_agent *a = opaque;
	(void)watch;
	(void)events;
	for (;;) {
		if (a->inlen == a->incap) {
			size_t cap = a->incap ? a->incap * 2 : 4096;
			if (cap > 4 * VMS_VP_MAX)
				die("the sampler sends more than it should");
			uint8_t *b = realloc(a->in, cap);
			if (!b)
				die("out of memory");
			a->in = b;
			a->incap = cap;
		}
		ssize_t n = read(fd, a->in + a->inlen, a->incap - a->inlen);
		if (n > 0) {
			a->inlen += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		a->quit = true; /* the sampler closed its end */
		return;
	}
	size_t off = 0;
	struct vms_vp_msg m;
	int k;
	while ((k = vms_vp_frame(a->in + off, a->inlen - off, &m)) > 0) {
		on_msg(a, &m);
		off += (size_t)k;
	}
	if (k < 0)
		die("malformed message from the sampler");
	memmove(a->in, a->in + off, a->inlen - off);
	a->inlen -= off;
}

/* ---- main -------------------------------------------------------------------------------- */

static uint64_t num_arg(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end)
		die("bad number in arguments");
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"fd", required_argument, NULL, 'f'},
		{"uri", required_argument, NULL, 'u'},
		{"proc-root", required_argument, NULL, 'p'},
		{"interval-ns", required_argument, NULL, 'i'},
		{"refresh-ns", required_argument, NULL, 'r'},
		{"budget-ns", required_argument, NULL, 'b'},
		{"crosscheck", no_argument, NULL, 'c'},
		{"dirty-every-ns", required_argument, NULL, 'd'},
		{"dirty-seconds", required_argument, NULL, 's'},
		{NULL, 0, NULL, 0},
	};
	struct vms_agent *a = &A;
	int o;

	a->fd = -1;
	a->cb_id = a->cb_iter = a->cb_job = -1;
	a->proc_root = "/proc";
	a->interval_ns = VMS_NSEC_PER_SEC;
	a->refresh_ns = 60 * VMS_NSEC_PER_SEC;
	a->budget_ns = 50 * VMS_NSEC_PER_MSEC;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'f': a->fd = (int)num_arg(optarg); break;
		case 'u': a->uri = optarg; break;
		case 'p': a->proc_root = optarg; break;
		case 'i': a->interval_ns = num_arg(optarg); break;
		case 'r': a->refresh_ns = num_arg(optarg); break;
		case 'b': a->budget_ns = num_arg(optarg); break;
		case 'c': a->crosscheck = true; break;
		case 'd': a->dirty_every_ns = num_arg(optarg); break;
		case 's': a->dirty_seconds = (unsigned)num_arg(optarg); break;
		default: die("bad arguments (this program is started by vmsampler)");
		}
	}
	if (a->dirty_every_ns && (a->dirty_seconds < 1 || a->dirty_seconds > 60))
		die("bad --dirty-seconds (1 to 60)");
	if (a->fd < 0 || fcntl(a->fd, F_GETFD) < 0)
		die("no socket to the sampler (this program is started by vmsampler)");
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	/* background work: the sampler's ticks and the guests come first */
	setpriority(PRIO_PROCESS, 0, 10);
	if (getppid() == 1)
		return 0; /* the sampler died before prctl */
	signal(SIGPIPE, SIG_IGN);
	fcntl(a->fd, F_SETFD, FD_CLOEXEC);
	fcntl(a->fd, F_SETFL, O_NONBLOCK);
	a->proc_dirfd = open(a->proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	vms_vp_w_init(&a->w);
	/* due one interval early: a value is asked on a tick, so asking when
	 * it is R old would make the gap between two readings R plus up to a
	 * tick (61 s for 1m at 1 s ticks, measured by bench/vm) */
	uint64_t spacing = a->refresh_ns / 4 < VMS_PACE_SPACING ? a->refresh_ns / 4 : VMS_PACE_SPACING;
	vms_pace_init(&a->pace, a->refresh_ns > 2 * a->interval_ns ? a->refresh_ns - a->interval_ns : a->refresh_ns,
		      a->budget_ns, spacing > a->interval_ns ? spacing : 0);
	virSetErrorFunc(NULL, quiet);
	if (virEventRegisterDefaultImpl() < 0)
		die("cannot set up libvirt's event loop");
	if (virEventAddHandle(a->fd, VIR_EVENT_HANDLE_READABLE, on_socket, a, NULL) < 0)
		die("cannot watch the sampler's socket");
	a->timer = virEventAddTimeout(-1, on_timer, a, NULL);
	/* where the daemon's socket will appear: while disconnected, a retry
	 * when something appears there, and a blind one each RETRY_WATCHED;
	 * without (a remote daemon, no inotify) every RETRY_MAX */
	char sockdir[sizeof(a->sw.dir)], sockname[sizeof(a->sw.name)];
	const char *uri = a->uri ? a->uri : getenv("LIBVIRT_DEFAULT_URI");
	a->sw.fd = a->sw.wd = -1;
	if (vms_sockwatch_dir(uri, geteuid() == 0, getenv("XDG_RUNTIME_DIR"), getenv("HOME"), sockdir, sizeof(sockdir),
			sockname, sizeof(sockname)) == 0 &&
	    vms_sockwatch_open(&a->sw, sockdir, sockname) == 0 &&
	    virEventAddHandle(a->sw.fd, VIR_EVENT_HANDLE_READABLE, on_sockdir, a, NULL) < 0)
		vms_sockwatch_close(&a->sw);

	unsigned long lv = 0;
	virGetVersion(&lv, NULL, NULL);
	vms_vp_begin(&a->w, VMS_VP_HELLO);
	vms_vp_u32(&a->w, VMS_VP_VERSION);
	vms_vp_u32(&a->w, (uint32_t)getpid());
	vms_vp_u64(&a->w, lv);
	vms_vp_cstr(&a->w, a->uri ? a->uri : "");
	vms_vp_end(&a->w);
	vms_agent_send(a);

	try_connect(a);
	while (!a->quit) {
		if (virEventRunDefaultImpl() < 0)
			break;
		if (a->conn && (a->closed || virConnectIsAlive(a->conn) != 1))
			disconnect(a, "libvirtd closed the connection");
		if (!a->conn && a->retry_at && vms_agent_mono() >= a->retry_at)
			try_connect(a);
		if (a->conn && a->nev)
			process_events(a);
		if (a->tick_work && !a->quit) {
			a->tick_work = false;
			if (a->conn) {
				vms_agent_fast(a);
				vms_agent_jobs(a);
				drop_migrated(a);
				vms_agent_slow(a);
				vms_agent_dirty(a);
				if (vms_agent_mono() >= a->next_relist && relist(a) < 0)
					disconnect(a, last_error());
			}
			if (!a->quit)
				say_next(a, true);
		} else if (!a->quit) {
			say_next(a, false);
		}
	}
	if (a->conn)
		virConnectClose(a->conn);
	return 0;
}
