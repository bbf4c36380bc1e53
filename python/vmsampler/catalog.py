"""The column catalogue (src/common/catalog.c): what a column is.

Each column has an identity: a group (cpu, disk, vcpu, ...), the entity it
belongs to (a CPU, a device, a VM's name), a VM's sub-entity (a vCPU, a
tap, a disk) and a field.  A file of format 1.2 carries it in its SCHEMA
records (the loader reads it from there); for a file of format 1.0 or 1.1,
derive() recovers it from the name, as libvmsampler's reader does.  This
table mirrors the C one: tests/test_py_catalog.py compares them, and
derive() with vms_catalog_derive(), name by name.

A name is  head [entity "."] mid [sub "."] field.
"""

# (group, head, mid, has entity, sub (1; 2: digits), open, fields), in the
# order of enum vms_group from 1 (0 is "not in the catalogue")
GROUPS = [
    ('cpu', 'cpu.', '', 1, 0, 0,
     ('user', 'nice', 'system', 'idle', 'iowait', 'irq', 'softirq', 'steal', 'guest', 'guest_nice')),
    ('stat', 'stat.', '', 0, 0, 0,
     ('ctxt', 'processes', 'intr', 'softirq', 'procs_running', 'procs_blocked')),
    ('load', 'load.', '', 0, 0, 0,
     ('1m', '5m', '15m', 'runnable', 'tasks')),
    ('mem', 'mem.', '', 0, 0, 1,
     ()),
    ('vmstat', 'vmstat.', '', 0, 0, 1,
     ()),
    ('psi', 'psi.', '', 1, 0, 0,
     ('some.total', 'full.total')),
    ('disk', 'disk.', '', 1, 0, 0,
     ('rd_ios', 'rd_merges', 'rd_sectors', 'rd_ticks', 'wr_ios', 'wr_merges', 'wr_sectors', 'wr_ticks', 'in_flight', 'io_ticks', 'time_in_queue', 'dc_ios', 'dc_merges', 'dc_sectors', 'dc_ticks', 'fl_ios', 'fl_ticks')),
    ('net', 'net.', '', 1, 0, 0,
     ('rx_bytes', 'rx_packets', 'rx_errs', 'rx_drop', 'rx_fifo', 'rx_frame', 'rx_compressed', 'rx_multicast', 'tx_bytes', 'tx_packets', 'tx_errs', 'tx_drop', 'tx_fifo', 'tx_colls', 'tx_carrier', 'tx_compressed')),
    ('perf', 'perf.', '', 1, 0, 1,
     ('time_enabled', 'time_running', 'tp_time_enabled', 'tp_time_running', 'hw_time_enabled', 'hw_time_running')),
    ('virt', 'virt.', '', 0, 0, 0,
     ('connected', 'domains', 'agent_restarts')),
    ('vms', 'vms.', '', 0, 0, 0,
     ('parse_errors', 'marks', 'marks_refused')),
    ('vm', 'vm.', '', 1, 0, 0,
     ('state', 'path', 'cpu_time', 'cpu_user', 'cpu_system', 'slow_t')),
    ('vcpu', 'vm.', 'vcpu', 1, 2, 0,
     ('time', 'delay', 'slices', 'pcpu', 'allowed', 'allowed_first')),
    ('vmnet', 'vm.', 'net.', 1, 1, 0,
     ('rx_bytes', 'rx_packets', 'rx_errs', 'rx_drop', 'rx_fifo', 'rx_frame', 'rx_compressed', 'rx_multicast', 'tx_bytes', 'tx_packets', 'tx_errs', 'tx_drop', 'tx_fifo', 'tx_colls', 'tx_carrier', 'tx_compressed')),
    ('vmio', 'vm.', 'io.', 1, 0, 0,
     ('read_bytes', 'write_bytes', 'cg_read_bytes', 'cg_write_bytes')),
    ('vmmem', 'vm.', 'mem.', 1, 0, 0,
     ('rss', 'cgroup')),
    ('vmballoon', 'vm.', 'balloon.', 1, 0, 0,
     ('current', 'maximum', 'swap_in', 'swap_out', 'major_fault', 'minor_fault', 'unused', 'available', 'usable', 'last_update', 'disk_caches', 'hugetlb_pgalloc', 'hugetlb_pgfail', 'rss')),
    ('vmblock', 'vm.', 'block.', 1, 1, 0,
     ('rd_reqs', 'rd_bytes', 'rd_times', 'wr_reqs', 'wr_bytes', 'wr_times', 'fl_reqs', 'fl_times', 'allocation', 'capacity', 'physical')),
    ('vmcg', 'vm.', 'cg.', 1, 0, 0,
     ('cpu_quota_us', 'cpu_period_us', 'cpu_weight', 'cpu_shares', 'nr_periods', 'nr_throttled', 'throttled', 'mem_max', 'mem_high', 'ev_high', 'ev_max', 'ev_oom', 'ev_oom_kill', 'anon', 'file', 'swap', 'pgmajfault', 'psi.cpu.some.total', 'psi.cpu.full.total', 'psi.memory.some.total', 'psi.memory.full.total', 'psi.io.some.total', 'psi.io.full.total')),
    ('vmlv', 'vm.', 'lv.', 1, 0, 0,
     ('cpu_time', 'cpu_user', 'cpu_system')),
    ('vmlvvcpu', 'vm.', 'lv.vcpu', 1, 2, 0,
     ('time', 'delay')),
    ('vmdirty', 'vm.', 'dirtyrate.', 1, 0, 0,
     ('calc_status', 'calc_start_time', 'calc_period', 'megabytes_per_second')),
    ('vmmig', 'vm.', 'migration.', 1, 0, 0,
     ('job', 'time_elapsed', 'time_remaining', 'setup_time', 'downtime_expected', 'downtime', 'data_total', 'data_processed', 'data_remaining', 'memory_total', 'memory_processed', 'memory_remaining', 'memory_bps', 'memory_dirty_rate', 'memory_iteration', 'memory_page_size', 'memory_constant', 'memory_normal', 'memory_normal_bytes', 'memory_postcopy_requests', 'disk_total', 'disk_processed', 'disk_remaining', 'disk_bps')),
    ('vmperf', 'vm.', 'perf.', 1, 0, 1,
     ('time_enabled', 'time_running', 'tp_time_enabled', 'tp_time_running', 'hw_time_enabled', 'hw_time_running')),
    ('intr', 'intr.', '', 1, 0, 1,
     ('sum',)),
    ('softirq', 'softirq.', '', 1, 0, 1,
     ('HI', 'TIMER', 'NET_TX', 'NET_RX', 'BLOCK', 'IRQ_POLL', 'TASKLET', 'SCHED', 'HRTIMER', 'RCU')),
    ('vmintf', 'vm.', 'intf.', 1, 0, 0,
     ('wait', 'vms', 'own', 'host', 'host_other', 'kernel', 'unknown', 'irq_est')),
    ('vmintfby', 'vm.', 'intf.by.', 1, 0, 1,
     ()),
    ('vmintfhost', 'vm.', 'intf.host.', 1, 0, 1,
     ()),
    ('vmintfest', 'vm.', 'intfest.', 1, 0, 0,
     ('wait', 'vms', 'own', 'host', 'irq', 'unknown')),
    ('vmintfestby', 'vm.', 'intfest.by.', 1, 0, 1,
     ()),
    ('sched', 'sched.', '', 1, 0, 0,
     ('time', 'delay', 'slices')),
    ('rq', 'rq.', '', 1, 0, 0,
     ('delay',)),
]

BY_NAME = {g[0]: g for g in GROUPS}


class ColId:
    """A column's identity; group '' when the catalogue does not know it."""
    __slots__ = ('group', 'entity', 'sub', 'field')

    def __init__(self, group='', entity='', sub='', field=''):
        self.group, self.entity, self.sub, self.field = group, entity, sub, field

    def __eq__(self, o):
        return (self.group, self.entity, self.sub, self.field) == (o.group, o.entity, o.sub, o.field)

    def __repr__(self):
        return 'ColId(%r, %r, %r, %r)' % (self.group, self.entity, self.sub, self.field)


def colname(group, entity, sub, field):
    """The name of an identity."""
    _, head, mid = BY_NAME[group][:3]
    return head + (entity + '.' if entity else '') + mid + (sub + '.' if sub else '') + field


def _field_suffix(fields, rest):
    """(entity-or-sub, field) where rest ends with '.' + a known field (the
    longest), else None."""
    best = None
    for f in fields:
        if len(rest) > len(f) + 1 and rest.endswith('.' + f) and (best is None or len(f) > len(best)):
            best = f
    return None if best is None else (rest[:-len(best) - 1], best)


def _fits(g, name):
    gname, head, mid, has_ent, sub, open_, fields = g
    if not name.startswith(head) or len(name) <= len(head):
        return None
    rest = name[len(head):]
    ent = ''
    if has_ent and not open_ and head != 'vm.':
        # a host's device, interface, CPU: anything before the field
        r = _field_suffix(fields, rest)
        return None if r is None else ColId(gname, r[0], '', r[1])
    if has_ent:
        # a VM's name (never has a dot), a perf scope: up to the next dot
        dot = rest.find('.')
        if dot <= 0:
            return None
        ent, rest = rest[:dot], rest[dot + 1:]
    if mid:
        if not rest.startswith(mid) or len(rest) <= len(mid):
            return None
        rest = rest[len(mid):]
    s = ''
    if sub:
        r = _field_suffix(fields, rest)
        if r is None or (sub == 2 and not (r[0].isascii() and r[0].isdigit())):
            return None
        s, rest = r
    if not rest or (rest not in fields and not open_):
        return None
    return ColId(gname, ent, s, rest)


def derive(name):
    """The identity of a column from its name (data written before the
    identity was carried): vms_catalog_derive()'s."""
    for g in GROUPS:
        c = _fits(g, name)
        if c is not None:
            return c
    return ColId()


def rate_id(name):
    """The identity of a rate column of the C tools (`vmsampler dump
    --rates`, report): ColId(group, entity, sub, out), out being what the
    rate is ('%usr', 'rkB/s', a gauge's field), as libvmsampler's rate
    plan gives it (src/lib/rates_plan.c; the name is colname() of it).
    The CSV carries names only: this is where they become identities.  A
    host's entity may hold dots (a VLAN interface), its out none; a VM's
    name holds none, a tap's or a disk's out none; the out of a VM's
    column without sub may (its cgroup's psi.cpu.%some)."""
    for gname, head, mid, has_ent, sub, _, _ in GROUPS:
        if head == 'vm.' or not name.startswith(head) or len(name) <= len(head):
            continue
        rest = name[len(head):]
        if not has_ent:
            return ColId(gname, '', '', rest)
        dot = rest.rfind('.')
        return ColId(gname, rest[:dot], '', rest[dot + 1:]) if dot > 0 and rest[dot + 1:] else ColId()
    if not name.startswith('vm.'):
        return ColId()
    vm, dot, rest = name[3:].partition('.')
    if not vm or not dot or not rest:
        return ColId()
    best = None
    for g in GROUPS:
        if g[1] == 'vm.' and g[2] and rest.startswith(g[2]) and (best is None or len(g[2]) > len(best[2])):
            best = g
    if best is None:
        return ColId('vm', vm, '', rest)
    gname, _, mid, _, sub, _, _ = best
    rest = rest[len(mid):]
    if not sub:
        return ColId(gname, vm, '', rest) if rest else ColId()
    # a vCPU's digits end at the first dot; a tap's or a disk's name at the last
    dot = rest.find('.') if sub == 2 else rest.rfind('.')
    if dot <= 0 or not rest[dot + 1:] or (sub == 2 and not (rest[:dot].isascii() and rest[:dot].isdigit())):
        return ColId()
    return ColId(gname, vm, rest[:dot], rest[dot + 1:])
