// SPDX-License-Identifier: GPL-2.0 OR MIT
/* interf.bpf.c - interference attribution (doc/interference.md).
 *
 * Classic tracepoints only (sched:sched_switch, sched_wakeup,
 * sched_wakeup_new, sched_migrate_task): the BTF-typed tp_btf/fentry
 * programs do not load on every kernel vmsampler runs on.  CO-RE on the
 * kernel's BTF for task_struct.  No per-event output: the account is a
 * hash the sampler reads each tick. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "interf_maps.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define PF_KTHREAD 0x00200000

/* set by the loader before load (VMS_INTERF_RUN_TIME): keep each
 * registered thread's run time; off, the verifier drops that code */
const volatile bool track_run = false;
#define TASK_REPORT_STATES 0xff /* TASK_REPORT_MAX (preempted) is 0x100 */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct interf_thread);
} threads SEC(".maps");

/* set by the loader before load (VMS_INTERF_NO_RQ clears it): keep each
 * CPU's run queue delay in rq_delay; rq_epoch, the loader's monotonic
 * clock before load: a task started before it has its waits until then
 * left out */
const volatile bool track_rq = true;
const volatile __u64 rq_epoch = 0;

/* Per CPU, the run delay of the tasks that ran on it (each task's
 * sched_info.run_delay, the second field of its schedstat, added at its
 * switch-out on the CPU it ran on: the wait that ended with its arrival
 * there); written only by the CPU itself, read by the loader through
 * the mapped .bss. */
__u64 rq_delay[INTERF_MAX_CPUS];

/* a task's run_delay as last added to rq_delay */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} rqseen SEC(".maps");

/* the loader's read of every thread's run_delay (its schedstat) after
 * rq_epoch and before the attach: a task seen for the first time counts
 * its waits from there (a task older than the read and not in it: from
 * its first switch-out) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} rqseed SEC(".maps");

/* QEMU's tgid -> the VM's index: every thread of the process is the VM's */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u32);
} vms SEC(".maps");

/* A bit per id set by the loader for each TID in threads (tidbits) and
 * each tgid in vms (tgidbits), sized at load to pid_max: a switch of a
 * thread no map holds costs an array load, not a hash lookup.  An id
 * past the array (pid_max raised after load) is looked up in the hash. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} tidbits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} tgidbits SEC(".maps");

/* per CPU: the waits on it that the loader ended (interf_cpu.nwait) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, INTERF_MAX_CPUS);
	__type(key, __u32);
	__type(value, __u64);
} unwaits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct interf_key);
	__type(value, __u64);
} acct SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct interf_wkey);
	__type(value, __u64);
} waits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, INTERF_MAX_CPUS);
	__type(key, __u32);
	__type(value, struct interf_cpu);
} cpus SEC(".maps");

/* [0]: additions lost to a full acct (kept under the victim's unknown
 * when that entry exists); [1]: ring overflows */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* false if id is certainly not a key of the map whose bits are bits */
static __always_inline bool maybe(void *bits, __u32 id)
{
	__u32 w = id >> 6;
	__u64 *v = bpf_map_lookup_elem(bits, &w);
	return !v || (*v >> (id & 63)) & 1;
}

static __always_inline struct interf_thread *thread_of(__u32 tid)
{
	return tid && maybe(&tidbits, tid) ? bpf_map_lookup_elem(&threads, &tid) : NULL;
}

/* a victim's wait on cpu began (+1) or ended (-1) */
static void count_wait(__u32 cpu, int d)
{
	struct interf_cpu *cs = bpf_map_lookup_elem(&cpus, &cpu);
	if (!cs)
		return;
	__sync_fetch_and_add(&cs->nwait, d);
	if (d > 0)
		cs->began = 1;
}

static void stat_add(__u32 i, __u64 v)
{
	__u64 *p = bpf_map_lookup_elem(&stats, &i);
	if (p)
		__sync_fetch_and_add(p, v);
}

/* Add ns to the entry of k, creating it; false if the map is full. */
static bool add(struct interf_key *k, __u64 ns)
{
	__u64 *v = bpf_map_lookup_elem(&acct, k);
	if (!v && bpf_map_update_elem(&acct, k, &ns, BPF_NOEXIST) == 0)
		return true;
	if (!v)
		v = bpf_map_lookup_elem(&acct, k); /* another CPU created it */
	if (!v)
		return false;
	__sync_fetch_and_add(v, ns);
	return true;
}

static void charge(__u32 victim_vm, const struct interf_culprit *c, __u64 ns)
{
	struct interf_key k = {.victim = victim_vm, .kind = c->kind, .id = c->id};
	if (!ns)
		return;
	if (c->kind == INTERF_VM) {
		if (c->vm == victim_vm) {
			k.kind = INTERF_OWN;
			k.id = 0;
		} else {
			k.id = c->vm;
		}
	}
	if (add(&k, ns))
		return;
	/* a full map: the culprit's class without its id (a host cgroup
	 * among too many), else unknown; what is still left is counted */
	k.id = 0;
	if (add(&k, ns))
		return;
	k.kind = INTERF_UNKNOWN;
	if (!add(&k, ns))
		stat_add(0, ns);
}

/* The wait of victim t on CPU cpu from t->wait_start to now: each closed
 * segment of the ring that overlaps it, and the running segment (from
 * cur_start, culprit cur) when open. */
static void charge_wait(struct interf_thread *t, __u32 cpu, __u64 now, bool open)
{
	struct interf_cpu *cs = bpf_map_lookup_elem(&cpus, &cpu);
	__u64 t0 = t->wait_start, covered = now;
	if (!cs || now <= t0)
		return;
	if (open) {
		__u64 s = cs->seg_start > t0 ? cs->seg_start : t0;
		if (s < now) {
			struct interf_culprit c = cs->cur;
			charge(t->vm, &c, now - s);
			covered = s;
		}
	}
	__u32 head = cs->head;
	for (int i = 1; i <= INTERF_RING; i++) {
		if (covered <= t0)
			break;
		__u32 slot = (head - i) & (INTERF_RING - 1);
		struct interf_seg *sg = &cs->ring[slot];
		__u64 st = sg->start, en = sg->end;
		if (en == 0 || en <= t0)
			break;
		if (en > covered)
			en = covered; /* (a segment closed after the wait ended: not ours) */
		if (st < t0)
			st = t0;
		if (en < covered) {
			/* a segment not kept (a wait began on this CPU from
			 * another, by a migration, as the segment closed) */
			struct interf_culprit u = {.kind = INTERF_UNKNOWN, .vm = ~0u};
			charge(t->vm, &u, covered - (en > t0 ? en : t0));
			covered = en > t0 ? en : t0;
		}
		if (en > st) {
			struct interf_culprit c = sg->c;
			charge(t->vm, &c, en - st);
			covered = st;
		}
	}
	if (covered > t0) {
		struct interf_culprit u = {.kind = INTERF_UNKNOWN, .vm = ~0u};
		charge(t->vm, &u, covered - t0);
		stat_add(1, 1);
	}
	t->waited += now - t0;
	/* the wait per CPU waited on (a full map: not counted there; the
	 * sampler's estimate of its interrupt time is then short) */
	struct interf_wkey wk = {.vm = t->vm, .cpu = cpu};
	__u64 w = now - t0, *wv = bpf_map_lookup_elem(&waits, &wk);
	if (wv)
		__sync_fetch_and_add(wv, w);
	else if (bpf_map_update_elem(&waits, &wk, &w, BPF_NOEXIST) != 0 && (wv = bpf_map_lookup_elem(&waits, &wk)))
		__sync_fetch_and_add(wv, w);
}

/* The culprit that is the current task (prev, at sched_switch; th its
 * entry in threads, if any). */
static void current_culprit(struct interf_culprit *c, __u32 pid, struct interf_thread *th)
{
	c->vm = ~0u;
	c->id = 0;
	if (pid == 0) {
		c->kind = INTERF_KERNEL;
		return;
	}
	__u32 tgid = (__u32)(bpf_get_current_pid_tgid() >> 32);
	__u32 *vm = th ? &th->vm : maybe(&tgidbits, tgid) ? bpf_map_lookup_elem(&vms, &tgid) : NULL;
	if (vm) {
		c->kind = INTERF_VM;
		c->vm = *vm;
		return;
	}
	struct task_struct *task = bpf_get_current_task_btf();
	if (task->flags & PF_KTHREAD) {
		c->kind = INTERF_KERNEL;
		return;
	}
	c->kind = INTERF_HOST;
	c->id = bpf_get_current_cgroup_id();
}

static void wait_begin(struct interf_thread *t, __u32 cpu, __u64 now)
{
	/* a wakeup of a task already on a run queue (ttwu_runnable) traces
	 * sched_wakeup too: its wait goes on */
	if (!t || t->role != INTERF_VICTIM || t->waiting)
		return;
	t->waiting = 1;
	t->wait_cpu = cpu;
	t->wait_start = now;
	count_wait(cpu, 1);
}

/* prev, the current task, switches out on cpu: what it waited since its
 * last switch-out (its one arrival in between was on this CPU) goes to
 * the CPU's run queue delay.  A task seen for the first time: all its
 * waits if it started after the epoch, else those since the loader's
 * read (rqseed; not in it: none). */
static __always_inline void rq_account(__u32 cpu)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 rd = task->sched_info.run_delay;
	__u64 *seen = bpf_task_storage_get(&rqseen, task, 0, 0);
	if (!seen) {
		seen = bpf_task_storage_get(&rqseen, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!seen)
			return;
		__u64 base = 0;
		if (task->start_time < rq_epoch) {
			__u32 tid = (__u32)task->pid;
			__u64 *sd = bpf_map_lookup_elem(&rqseed, &tid);
			base = sd && *sd <= rd ? *sd : rd;
		}
		*seen = base;
	}
	if (cpu < INTERF_MAX_CPUS && rd > *seen)
		rq_delay[cpu] += rd - *seen;
	*seen = rd;
}

/* What every program returns: 1, the event goes on to perf.  A tracepoint
 * program returning 0 filters the event out for every perf event on that
 * tracepoint (perf_trace_run_bpf_submit): host-wide, the perf source's
 * sched:sched_switch counters, `perf stat` and `perf sched record` would
 * see none of these events while this program is attached. */
#define PASS_ON 1

SEC("tracepoint/sched/sched_switch")
int on_switch(struct trace_event_raw_sched_switch *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 cpu = bpf_get_smp_processor_id();
	__u32 prev = (__u32)ctx->prev_pid, next = (__u32)ctx->next_pid;
	struct interf_cpu *cs = bpf_map_lookup_elem(&cpus, &cpu);
	if (!cs)
		return PASS_ON;
	struct interf_thread *pt = NULL;
	bool looked = false;

	/* close prev's segment: into the ring if a victim waited on this CPU
	 * during it (one waits now, or a wait began since it started) */
	if (cs->seg_start) {
		__u64 *un = bpf_map_lookup_elem(&unwaits, &cpu);
		if (cs->began || (__s32)(cs->nwait - (un ? (__u32)*un : 0)) > 0) {
			struct interf_culprit c;
			if (cs->cur_ok && cs->cur_tid == prev) {
				c = cs->cur;
			} else {
				pt = thread_of(prev);
				looked = true;
				current_culprit(&c, prev, pt);
			}
			__u32 slot = cs->head & (INTERF_RING - 1);
			cs->ring[slot].start = cs->seg_start;
			cs->ring[slot].end = now;
			cs->ring[slot].c = c;
			cs->head++;
		}
		cs->began = 0;
	}
	cs->seg_start = now;
	if (track_rq && prev)
		rq_account(cpu);

	/* a victim switched out while runnable starts to wait here */
	if (prev && !(ctx->prev_state & TASK_REPORT_STATES)) {
		if (!looked)
			pt = thread_of(prev);
		looked = true;
		wait_begin(pt, cpu, now);
	}
	/* a registered thread's run ends */
	if (track_run) {
		if (!looked)
			pt = thread_of(prev);
		if (pt && pt->run_start) {
			pt->ran += now - pt->run_start;
			pt->run_start = 0;
		}
	}

	/* a victim switched in ends its wait; the running task's culprit
	 * where that is known now */
	struct interf_thread *t = thread_of(next);
	cs->cur_tid = next;
	cs->cur_ok = 1;
	cs->cur.id = 0;
	if (t) {
		cs->cur.kind = INTERF_VM;
		cs->cur.vm = t->vm;
		if (track_run)
			t->run_start = now;
	} else {
		cs->cur.kind = next ? INTERF_UNKNOWN : INTERF_KERNEL;
		cs->cur.vm = ~0u;
		cs->cur_ok = !next;
	}
	if (t && t->role == INTERF_VICTIM && t->waiting) {
		charge_wait(t, t->wait_cpu, now, t->wait_cpu != cpu);
		t->waiting = 0;
		count_wait(t->wait_cpu, -1);
	}
	return PASS_ON;
}

SEC("tracepoint/sched/sched_wakeup")
int on_wakeup(struct trace_event_raw_sched_wakeup_template *ctx)
{
	struct interf_thread *t = thread_of((__u32)ctx->pid);
	if (t)
		wait_begin(t, (__u32)ctx->target_cpu, bpf_ktime_get_ns());
	return PASS_ON;
}

SEC("tracepoint/sched/sched_wakeup_new")
int on_wakeup_new(struct trace_event_raw_sched_wakeup_template *ctx)
{
	struct interf_thread *t = thread_of((__u32)ctx->pid);
	if (t)
		wait_begin(t, (__u32)ctx->target_cpu, bpf_ktime_get_ns());
	return PASS_ON;
}

SEC("tracepoint/sched/sched_migrate_task")
int on_migrate(struct trace_event_raw_sched_migrate_task *ctx)
{
	struct interf_thread *t = thread_of((__u32)ctx->pid);
	if (!t || t->role != INTERF_VICTIM || !t->waiting || t->wait_cpu != (__u32)ctx->orig_cpu)
		return PASS_ON;
	__u64 now = bpf_ktime_get_ns();
	charge_wait(t, t->wait_cpu, now, true);
	count_wait(t->wait_cpu, -1);
	t->wait_cpu = (__u32)ctx->dest_cpu;
	t->wait_start = now;
	count_wait(t->wait_cpu, 1);
	return PASS_ON;
}
