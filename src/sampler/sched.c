/* SPDX-License-Identifier: MIT */
#include "vms_sched.h"

#include <string.h>

__extension__ typedef unsigned __int128 u128;

void vms_sched_init(struct vms_sched *s, uint64_t start_ns, uint64_t period_ns)
{
	s->start_ns = start_ns;
	s->period_ns = period_ns;
	s->next_idx = 0;
}

bool vms_sched_wake(struct vms_sched *s, uint64_t now_ns, struct vms_tickinfo *ti)
{
	if (now_ns < vms_sched_next(s))
		return false;
	uint64_t idx = (now_ns - s->start_ns) / s->period_ns;
	ti->idx = idx;
	ti->deadline_ns = vms_sched_deadline(s, idx);
	ti->late_ns = now_ns - ti->deadline_ns;
	ti->missed = idx - s->next_idx;
	s->next_idx = idx + 1;
	return true;
}

uint64_t vms_sched_first(uint64_t mono_now, int64_t real_now, uint64_t align_ns)
{
	if (align_ns == 0 || real_now < 0)
		return mono_now;
	uint64_t r = (uint64_t)real_now;
	uint64_t wait = align_ns - r % align_ns;
	if (wait == align_ns)
		wait = 0;
	return mono_now + wait;
}

int vms_parse_duration(const char *s, uint64_t *ns)
{
	static const struct {
		const char *suffix;
		uint64_t mult;
	} units[] = {
		{"ns", 1},
		{"us", 1000},
		{"ms", 1000000},
		{"s", 1000000000},
		{"m", 60000000000},
		{"min", 60000000000},
		{"h", 3600000000000},
		{"", 1000000000},
	};
	uint64_t ip = 0, fp = 0, fdiv = 1;
	const char *p = s;
	bool digit = false;

	if (!s)
		return -EINVAL;
	while (*p >= '0' && *p <= '9') {
		if (ip > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		ip = ip * 10 + (uint64_t)(*p++ - '0');
		digit = true;
	}
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9') {
			if (fdiv < 1000000000000ULL) {
				fp = fp * 10 + (uint64_t)(*p - '0');
				fdiv *= 10;
			}
			p++;
			digit = true;
		}
	}
	if (!digit)
		return -EINVAL;
	for (size_t i = 0; i < VMS_ARRAY_SIZE(units); i++) {
		if (strcmp(p, units[i].suffix) != 0)
			continue;
		uint64_t m = units[i].mult;
		if (ip > UINT64_MAX / m)
			return -ERANGE;
		uint64_t v = ip * m;
		/* fraction: fp / fdiv * m, in 128 bits to stay exact */
		u128 f = (u128)fp * m / fdiv;
		if (v + (uint64_t)f < v)
			return -ERANGE;
		*ns = v + (uint64_t)f;
		return 0;
	}
	return -EINVAL;
}
